package selfplay

import (
	"context"
	"fmt"
	"github.com/canopy-go/canopy/internal/cputime"
	"github.com/canopy-go/canopy/search/engine"
	"testing"
	"time"
)

// Scaling of the driver alone (random backend, connect4, 16 simulations
// per move, one leaf per tree): nodes/s against the batcher's MaxBatch at
// 1024 concurrent trees, and against the number of concurrent trees at
// MaxBatch 256. Each iteration plays `trees` games with `trees` at once.
//
// Metrics: nodes/s (wall), nodes/cpu-s (per second of process CPU time,
// user+system: the machine is shared, so this is the steadier figure),
// rows/batch (mean rows per backend call) and fill% (rows/batch over
// MaxBatch).
//
//	go test -run '^$' -bench 'Scaling' -benchtime 1x -count 1 ./selfplay/

func BenchmarkBatchScaling(b *testing.B) {
	for _, batch := range []int{1, 8, 32, 128, 512} {
		b.Run(fmt.Sprintf("trees=1024/batch=%d", batch), func(b *testing.B) {
			benchDriver(b, 1024, batch)
		})
	}
}

func BenchmarkTreeScaling(b *testing.B) {
	for _, trees := range []int{1, 4, 16, 64, 256, 1024, 4096} {
		b.Run(fmt.Sprintf("trees=%d/batch=256", trees), func(b *testing.B) {
			benchDriver(b, trees, 256)
		})
	}
}

func benchDriver(b *testing.B, trees, batch int) {
	_, e := newEngine(b, "connect4", 1, engine.Options{Leaves: 1, Batch: batch, Slots: engine.SlotsFor(trees, 1)})
	st := DefaultSettings()
	st.Sims, st.Leaves = 16, 1
	// Games of 1 tree are short: play a few so an iteration is not a
	// single game's latency.
	n := max(trees, 8)
	b.ReportAllocs()
	c0, t0, cpu0 := e.Counters(), time.Now(), cputime.Now()
	for b.Loop() {
		if err := Run(context.Background(), e, Config{Settings: st, Seed: 1, NumGames: n, Trees: trees}); err != nil {
			b.Fatal(err)
		}
	}
	wall, cpu := time.Since(t0).Seconds(), (cputime.Now() - cpu0).Seconds()
	c := e.Counters()
	nodes := float64(c.Nodes - c0.Nodes)
	b.ReportMetric(nodes/wall, "nodes/s")
	if cpu > 0 {
		b.ReportMetric(nodes/cpu, "nodes/cpu-s")
	}
	if bt := c.Batch.Batches - c0.Batch.Batches; bt > 0 {
		mean := float64(c.Batch.Rows-c0.Batch.Rows) / float64(bt)
		b.ReportMetric(mean, "rows/batch")
		b.ReportMetric(100*mean/float64(e.MaxBatch()), "fill%")
	}
}
