package sushigo

import (
	"fmt"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// BenchmarkRandomGame plays whole random games through the generic API
// (games.RandomPlayout: chance nodes sampled, joint random choices).
func BenchmarkRandomGame(b *testing.B) {
	for _, name := range []string{"sushigo", "sushigo-seq"} {
		b.Run(name, func(b *testing.B) {
			g := games.MustNew(name + ":players=4")
			rng := games.NewRand(1)
			init := g.NewInitialState()
			s := g.NewInitialState()
			mask := games.NewMask(g.NumActions())
			joint := make([]games.Action, g.NumPlayers())
			b.ReportAllocs()
			for b.Loop() {
				init.CloneInto(s)
				games.RandomPlayout(s, rng, mask, joint)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
		})
	}
}

// BenchmarkPlayout plays whole random games with the specialised playout.
func BenchmarkPlayout(b *testing.B) {
	g := New(4, false)
	rng := games.NewRand(1)
	init := g.NewInitialState().(*State)
	s := g.NewInitialState().(*State)
	b.ReportAllocs()
	for b.Loop() {
		init.CloneInto(s)
		s.RandomPlayout(rng)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
}

// BenchmarkResample measures determinizations of a 4-player game right
// after the first deal (three unknown 8-card hands to redeal, the hardest
// case) and after two tricks (one unknown hand).
func BenchmarkResample(b *testing.B) {
	for _, tricks := range []int{0, 2} {
		b.Run(fmt.Sprintf("tricks=%d", tricks), func(b *testing.B) {
			s := midRound(false, 2, tricks)
			dst := s.g.NewInitialState()
			rng := games.NewRand(3)
			b.ReportAllocs()
			for b.Loop() {
				s.Resample(0, rng, dst)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "determinizations/s")
		})
	}
}
