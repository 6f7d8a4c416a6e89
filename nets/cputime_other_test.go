//go:build !unix

package nets

func cpuSeconds() float64 { return -1 }
