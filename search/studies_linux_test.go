//go:build linux

package search_test

import (
	"syscall"
	"time"
)

// rusageThread is RUSAGE_THREAD (Linux): the calling thread's usage.
const rusageThread = 1

// studyThreadCPU returns the calling thread's user+system CPU time; the
// caller must be locked to its OS thread for differences to mean anything.
func studyThreadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
