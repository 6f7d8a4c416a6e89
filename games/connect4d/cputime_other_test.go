//go:build !unix

package connect4d

// cpuSeconds is unavailable here; CPU-time metrics read as zero.
func cpuSeconds() float64 { return 0 }
