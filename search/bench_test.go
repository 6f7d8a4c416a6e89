package search

import (
	"context"
	"fmt"
	"github.com/canopy-go/canopy/agent"
	"strings"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
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

// BenchmarkHexHeuristicRollout: study 001's Hex search with the heuristic
// default policy (rollout=heuristic: each rollout move the two-distance
// heuristic's best among all legal moves, eps 0.1), from the empty 7x7 board
// and from a middle-game position; the figure issue 21's Hex rows scale with.
func BenchmarkHexHeuristicRollout(b *testing.B) {
	g := games.MustNew("hex:size=7")
	for _, pos := range []struct{ name, moves string }{{"empty", ""}, {"ply12", "d4 c5 e3 c3 b4 e5 d5 d3 f2 e2 c4 f4"}} {
		b.Run(pos.name, func(b *testing.B) {
			sp, err := spec.Parse("mcts:sel=uct,rollout=heuristic,sims=300")
			if err != nil {
				b.Fatal(err)
			}
			o, err := ParseOptions(g, sp, agent.Env{})
			if err != nil {
				b.Fatal(err)
			}
			o.MaxNodes = o.Sims + 16
			tr, err := New(g, o, 1)
			if err != nil {
				b.Fatal(err)
			}
			s := g.NewInitialState()
			for _, m := range strings.Fields(pos.moves) {
				a, err := s.ParseAction(m)
				if err != nil {
					b.Fatal(err)
				}
				s.Apply(a)
			}
			b.ReportAllocs()
			var total int
			for b.Loop() {
				total += tr.Search(context.Background(), s)
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "sims/s")
		})
	}
}
