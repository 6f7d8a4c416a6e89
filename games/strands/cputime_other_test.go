//go:build !unix

package strands

// cpuSeconds is unavailable here; CPU-time metrics read as zero.
func cpuSeconds() float64 { return 0 }
