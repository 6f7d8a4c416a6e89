//go:build !unix

package solver

// cpuSeconds is unavailable here; CPU-time metrics then read 0.
func cpuSeconds() float64 { return 0 }
