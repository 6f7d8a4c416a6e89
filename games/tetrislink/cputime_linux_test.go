package tetrislink

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time consumed by the calling OS thread (lock
// it with runtime.LockOSThread first). Benchmarks report games per CPU
// second next to wall-clock rates because the shared test machine is often
// oversubscribed, which inflates wall time but not CPU time.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
