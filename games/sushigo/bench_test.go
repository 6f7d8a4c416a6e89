package sushigo

import (
	"fmt"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
	"github.com/canopy-go/canopy/internal/cputime"
)

// reportRate reports iterations per second of wall time (unit) and of
// process CPU time since cpu0 (unit with "/s" replaced by "/cpu-s", e.g.
// "games/cpu-s"). The CPU figure is what an unloaded core would give; it is
// the one that matters on a machine shared with other jobs.
func reportRate(b *testing.B, cpu0 time.Duration, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit+"/s")
	if cpu := cputime.Now() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), unit+"/cpu-s")
	}
}

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
			cpu0 := cputime.Now()
			for b.Loop() {
				init.CloneInto(s)
				games.RandomPlayout(s, rng, mask, joint)
			}
			reportRate(b, cpu0, "games")
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
	cpu0 := cputime.Now()
	for b.Loop() {
		init.CloneInto(s)
		s.RandomPlayout(rng)
	}
	reportRate(b, cpu0, "games")
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
			cpu0 := cputime.Now()
			for b.Loop() {
				s.Resample(0, rng, dst)
			}
			reportRate(b, cpu0, "determinizations")
		})
	}
}

// BenchmarkHash measures State.Hash on a mid-game state.
func BenchmarkHash(b *testing.B) { gametest.BenchHash(b, games.MustNew("sushigo-seq:players=4")) }
