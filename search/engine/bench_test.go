package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
)

// BenchmarkConcurrentSearchers: 64 goroutines, one az-style search each
// (100 simulations from a 4-ply position), on one shared CPU engine with
// the built-in connect4 net: the arena's load. Reports network rows per
// second and the mean batch; compare with `canopy bench net` at that
// batch.
func BenchmarkConcurrentSearchers(b *testing.B) {
	g := games.MustNew("connect4")
	l, err := testPool.Acquire(g, "init", "cpu")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Release()
	const n = 64
	ss := make([]*Searcher, n)
	st := DefaultSettings()
	for i := range ss {
		if ss[i], err = NewSearcher(l.Engine, st.SearchOptions(), uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
	root := g.NewInitialState()
	for _, a := range []games.Action{3, 3, 2, 4} {
		root.Apply(a)
	}
	c0 := l.Counters()
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for _, s := range ss {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Search(context.Background(), root, root.CurrentPlayer()); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	el := b.Elapsed()
	b.StopTimer()
	c := l.Counters()
	mean := float64(c.Batch.Rows-c0.Batch.Rows) / float64(max(c.Batch.Batches-c0.Batch.Batches, 1))
	rate := float64(c.Evals-c0.Evals) / el.Seconds()
	b.ReportMetric(rate, "evals/s")
	b.ReportMetric(mean, "rows/batch")
	// The backend alone at the same batch size, on the same position's
	// observation, for as long: the ratio is the engine's efficiency.
	batch := max(1, int(mean+0.5))
	in, ps := l.Backend().Shape()
	input, pol, val := make([]float32, batch*in), make([]float32, batch*ps), make([]float32, batch)
	for i := range batch {
		root.Observation(root.CurrentPlayer(), input[i*in:(i+1)*in])
	}
	t0, rows := time.Now(), 0
	for time.Since(t0) < max(el, time.Second) {
		if err := l.Backend().Evaluate(context.Background(), batch, input, pol, val); err != nil {
			b.Fatal(err)
		}
		rows += batch
	}
	raw := float64(rows) / time.Since(t0).Seconds()
	b.ReportMetric(raw, "raw-evals/s")
	b.ReportMetric(100*rate/raw, "%-of-raw")
}
