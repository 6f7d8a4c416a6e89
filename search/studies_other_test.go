//go:build !linux

package search_test

import "time"

var studyStart = time.Now()

// studyThreadCPU falls back to wall-clock time where no per-thread CPU
// clock is available (the studies' time per move is then wall time).
func studyThreadCPU() time.Duration { return time.Since(studyStart) }
