package search

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
)

// benchSearch runs UCT with random rollouts from the initial position of
// gs, sims simulations per search, and reports simulations/s, nodes/s,
// bytes per node and bytes per expanded child (edge).
func benchSearch(b *testing.B, gs string, threads, sims int) {
	o := DefaultOptions()
	o.Sims, o.Threads, o.MaxNodes = sims, threads, sims+16
	benchOptions(b, gs, o)
}

// benchOptions is benchSearch with options o.
func benchOptions(b *testing.B, gs string, o Options) {
	g := games.MustNew(gs)
	tr, err := New(g, o, 1)
	if err != nil {
		b.Fatal(err)
	}
	s := g.NewInitialState()
	b.ReportAllocs()
	var total, nodes int
	var st Stats
	start, cpu0 := time.Now(), cpuSeconds()
	for b.Loop() {
		total += tr.Search(context.Background(), s)
		st = tr.Stats()
		nodes += st.Nodes
	}
	sec, cpu := time.Since(start).Seconds(), cpuSeconds()-cpu0
	if cpu > 0 {
		b.ReportMetric(float64(total)/cpu, "sims/cpu-s")
	}
	b.ReportMetric(float64(total)/sec, "sims/s")
	b.ReportMetric(float64(nodes)/sec, "nodes/s")
	b.ReportMetric(float64(st.Bytes)/float64(st.Nodes), "B/node")
	if st.Edges > 0 {
		b.ReportMetric(float64(st.Bytes)/float64(st.Edges), "B/child")
	}
}

// BenchmarkPUCT: PUCT with uniform priors and no rollout (the layout the
// batched engine's trees have: every leaf expanded at its evaluation), one
// thread; B/child is the figure the engine's memory traffic follows.
func BenchmarkPUCT(b *testing.B) {
	for _, sims := range []int{200, 10000} {
		b.Run(fmt.Sprintf("connect4/sims=%d", sims), func(b *testing.B) {
			o := DefaultOptions()
			o.Rule, o.Eval, o.ExpandVisits = PUCT, Uniform{}, 0
			o.Sims, o.MaxNodes = sims, sims+16
			benchOptions(b, "connect4", o)
		})
	}
}

func BenchmarkUCT(b *testing.B) {
	for _, gs := range []string{"connect4", "tetrislink:players=2", "tetrislink:players=4"} {
		for _, sims := range []int{10000, 100000} {
			for _, th := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/sims=%d/threads=%d", gs, sims, th), func(b *testing.B) { benchSearch(b, gs, th, sims) })
			}
		}
	}
}
