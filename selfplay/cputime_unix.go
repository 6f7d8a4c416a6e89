//go:build unix

package selfplay

import (
	"syscall"
	"time"
)

// ProcessCPUTime is the user+system CPU time of the process so far (0
// where the platform does not report it).
func ProcessCPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
