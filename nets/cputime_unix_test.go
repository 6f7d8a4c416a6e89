//go:build unix

package nets

import "syscall"

// cpuSeconds returns the user+system CPU time of the process so far, or -1.
// Benchmarks report throughput per CPU-second next to the wall-clock figure
// because the development machine is shared: on a busy machine the wall
// clock counts time spent waiting for a core, the CPU time does not.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
