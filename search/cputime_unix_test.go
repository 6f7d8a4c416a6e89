//go:build unix

package search

import "syscall"

// cpuSeconds returns the process's user+system CPU time. Benchmarks report
// per-CPU-second rates next to wall-clock rates because the development
// machine is shared: CPU time is what the code costs when other jobs take
// turns on the cores.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
