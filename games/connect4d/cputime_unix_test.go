//go:build unix

package connect4d

import "syscall"

// cpuSeconds returns the process's user+system CPU time. Benchmarks report
// rates per CPU second next to wall-clock rates because the development
// machine is shared and wall time inflates under load.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
