//go:build !linux

package tetrislink

import "time"

// threadCPU is unavailable off Linux; benchmarks then skip the CPU metric.
func threadCPU() time.Duration { return 0 }
