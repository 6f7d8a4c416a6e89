//go:build !unix

package kernels

// cpuSeconds is unavailable here; benchmarks then report wall-clock rates only.
func cpuSeconds() float64 { return -1 }
