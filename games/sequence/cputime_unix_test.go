//go:build unix

package sequence

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) used by this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
