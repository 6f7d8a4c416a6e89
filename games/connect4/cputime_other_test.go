//go:build !unix

package connect4

// cpuSeconds is unavailable here; CPU-time metrics then read 0.
func cpuSeconds() float64 { return 0 }
