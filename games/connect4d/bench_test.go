package connect4d

import (
	"fmt"
	"github.com/canopy-go/canopy/internal/cputime"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// recordGame plays one seeded random game and returns its actions.
func recordGame(g games.Game, seed uint64) []games.Action {
	rng := games.NewRand(seed)
	m := games.NewMask(g.NumActions())
	s := g.NewInitialState()
	var out []games.Action
	for !s.IsTerminal() {
		s.Legal(m)
		a := m.Random(rng)
		out = append(out, a)
		s.Apply(a)
	}
	return out
}

func BenchmarkRandomPlayout(b *testing.B) {
	for _, d := range []int{2, 5, 8} {
		b.Run(fmt.Sprint("d=", d), func(b *testing.B) {
			g, _ := New(d)
			init, s := g.NewInitialState(), g.NewInitialState()
			rng := games.NewRand(1)
			m := games.NewMask(g.NumActions())
			b.ReportAllocs()
			moves := 0
			cpu0 := cputime.Seconds()
			for b.Loop() {
				init.CloneInto(s)
				moves += games.RandomPlayout(s, rng, m, nil)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
			if cpu := cputime.Seconds() - cpu0; cpu > 0 {
				b.ReportMetric(float64(b.N)/cpu, "games/cpu-s")
			}
			b.ReportMetric(float64(moves)/float64(b.N), "actions/game")
		})
	}
}

// BenchmarkApply replays a recorded game: the cost of Apply (win test
// included) per action, plus one CloneInto per game.
func BenchmarkApply(b *testing.B) {
	g, _ := New(5)
	acts := recordGame(g, 3)
	init, s := g.NewInitialState(), g.NewInitialState()
	b.ReportAllocs()
	cpu0 := cputime.Seconds()
	for b.Loop() {
		init.CloneInto(s)
		for _, a := range acts {
			s.Apply(a)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(acts)), "ns/apply")
	b.ReportMetric((cputime.Seconds()-cpu0)*1e9/float64(b.N*len(acts)), "cpu-ns/apply")
}

// BenchmarkLegal measures Legal on the states of a recorded game.
func BenchmarkLegal(b *testing.B) {
	g, _ := New(5)
	acts := recordGame(g, 3)
	var states []games.State
	s := g.NewInitialState()
	for _, a := range acts {
		states = append(states, s.Clone())
		s.Apply(a)
	}
	m := games.NewMask(g.NumActions())
	b.ReportAllocs()
	cpu0 := cputime.Seconds()
	for b.Loop() {
		for _, st := range states {
			st.Legal(m)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(states)), "ns/legal")
	b.ReportMetric((cputime.Seconds()-cpu0)*1e9/float64(b.N*len(states)), "cpu-ns/legal")
}
