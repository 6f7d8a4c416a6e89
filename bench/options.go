package bench

import (
	"time"

	"github.com/canopy-go/canopy/spec"
)

// Table declares the fields of c a command line sets (canopy bench
// search's flags), bound to c, with their defaults, ranges and help.
// Table.Reset stores the defaults; Game, Backend, Duration and Seed are
// the caller's.
func (c *SearchConfig) Table() spec.Table {
	return spec.Table{
		spec.Int("trees", &c.Trees, 1024, 1, 1<<20, "trees (games) searched at once"),
		spec.Int("net-batch", &c.Batch, 0, 0, 1<<16, "largest network batch (0: the backend's preferred)"),
		spec.Int("sims", &c.Sims, 200, 1, 1<<24, "simulations per move"),
		spec.Int("leaves", &c.Leaves, 1, 1, 1024, "leaves in flight per tree"),
		spec.Int("workers", &c.Workers, 0, 0, 1<<12, "search goroutines (0: GOMAXPROCS)"),
		spec.DurationIn("wait", &c.Wait, 0, 0, 10*time.Second, "batcher wait for a fuller batch, e.g. 200us (0: none, a batch runs as soon as the backend is free)"),
	}
}
