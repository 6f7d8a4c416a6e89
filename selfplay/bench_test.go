package selfplay

import (
	"context"
	"fmt"
	"github.com/canopy-go/canopy/search/engine"
	"testing"
	"time"
)

// BenchmarkSelfPlayRandom: connect4 self-play on the random backend (the
// search and driver alone): each iteration plays `trees` games of 32
// simulations per move with `trees` games at once.
func BenchmarkSelfPlayRandom(b *testing.B) {
	for _, trees := range []int{1, 16, 256, 1024} {
		for _, leaves := range []int{1, 4} {
			b.Run(fmt.Sprintf("trees=%d/leaves=%d", trees, leaves), func(b *testing.B) {
				_, e := newEngine(b, "connect4", 1, engine.Options{Leaves: leaves, Batch: 256, Slots: engine.SlotsFor(trees, leaves)})
				st := DefaultSettings()
				st.Sims, st.Leaves = 32, leaves
				b.ReportAllocs()
				t0, n0 := time.Now(), e.Counters().Nodes
				for b.Loop() {
					if err := Run(context.Background(), e, Config{Settings: st, Seed: 1, NumGames: trees, Trees: trees}); err != nil {
						b.Fatal(err)
					}
				}
				c := e.Counters()
				b.ReportMetric(float64(c.Nodes-n0)/time.Since(t0).Seconds(), "nodes/s")
				b.ReportMetric(c.Batch.Mean, "rows/batch")
			})
		}
	}
}
