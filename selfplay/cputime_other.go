//go:build !unix

package selfplay

import "time"

// ProcessCPUTime is the user+system CPU time of the process so far (0
// where the platform does not report it).
func ProcessCPUTime() time.Duration { return 0 }
