// Package cputime reads the CPU time this process has used (user +
// system, all threads). Benchmarks report rates per CPU-second next to
// wall-clock rates: on a shared machine the wall clock counts time spent
// waiting for a core, the CPU time does not.
package cputime

import "time"

// Now returns the process's CPU time so far, or 0 where the platform
// offers no way to read it (then Supported is false).
func Now() time.Duration { return now() }

// Seconds is Now in seconds.
func Seconds() float64 { return Now().Seconds() }

// Supported reports whether Now measures anything on this platform.
func Supported() bool { return supported }
