//go:build !unix

package search

func cpuSeconds() float64 { return 0 }
