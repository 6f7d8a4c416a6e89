package sequence

import (
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
	"github.com/canopy-go/canopy/internal/cputime"
)

var benchSpecs = []string{"sequence", "sequence:jacks=false", "sequence:players=3"}

// reportRate reports iterations per second of wall time (unit) and of
// process CPU time since cpu0 ("cpu-"+unit). The CPU figure is what an
// unloaded core would give; it is the one that matters on a machine shared
// with other jobs. When actions > 0 it also reports CPU ns per action.
func reportRate(b *testing.B, cpu0 time.Duration, unit string, actions int) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
	cpu := cputime.Now() - cpu0
	if cpu <= 0 {
		return
	}
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "cpu-"+unit)
	if actions > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(actions), "cpu-ns/action")
		b.ReportMetric(float64(actions)/float64(b.N), "actions/game")
	}
}

// BenchmarkRandomGame plays whole random games (deal included) from the
// initial state, through the generic games.RandomPlayout and through the
// specialised State.PlayRandom.
func BenchmarkRandomGame(b *testing.B) {
	for _, sp := range benchSpecs {
		g := games.MustNew(sp)
		init := g.NewInitialState()
		b.Run(sp+"/generic", func(b *testing.B) {
			s := g.NewInitialState()
			rng := games.NewRand(1)
			mask := games.NewMask(g.NumActions())
			moves := 0
			b.ReportAllocs()
			cpu0 := cputime.Now()
			for b.Loop() {
				init.CloneInto(s)
				moves += games.RandomPlayout(s, rng, mask, nil)
			}
			reportRate(b, cpu0, "games/s", moves)
		})
		b.Run(sp+"/fast", func(b *testing.B) {
			s := g.NewInitialState().(*State)
			rng := games.NewRand(1)
			moves := 0
			b.ReportAllocs()
			cpu0 := cputime.Now()
			for b.Loop() {
				init.CloneInto(s)
				moves += s.PlayRandom(rng)
			}
			reportRate(b, cpu0, "games/s", moves)
		})
	}
}

// BenchmarkResample measures determinizations of a mid-game state (after
// the deal and about 15 turns) for player 0.
func BenchmarkResample(b *testing.B) {
	for _, sp := range benchSpecs {
		b.Run(sp, func(b *testing.B) {
			g := games.MustNew(sp)
			s := g.NewInitialState().(*State)
			rng := games.NewRand(2)
			m := games.NewMask(NumActions)
			for s.MoveNumber() < 50 {
				if s.CurrentPlayer() == games.ChancePlayer {
					s.Apply(s.SampleChance(rng))
				} else {
					s.Legal(m)
					s.Apply(m.Random(rng))
				}
			}
			dst := g.NewInitialState()
			b.ReportAllocs()
			cpu0 := cputime.Now()
			for b.Loop() {
				s.Resample(0, rng, dst)
			}
			reportRate(b, cpu0, "determinizations/s", 0)
		})
	}
}

// BenchmarkGreedyMove measures one sequence-greedy decision mid-game.
func BenchmarkGreedyMove(b *testing.B) {
	g := games.MustNew("sequence:jacks=false")
	s := g.NewInitialState().(*State)
	rng := games.NewRand(2)
	for s.CurrentPlayer() != 0 || s.MoveNumber() < 40 {
		if s.CurrentPlayer() == games.ChancePlayer {
			s.Apply(s.SampleChance(rng))
		} else {
			s.Apply(s.randomAction(rng))
		}
	}
	a := newGreedy(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Act(b.Context(), s, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHash measures State.Hash on a mid-game state.
func BenchmarkHash(b *testing.B) { gametest.BenchHash(b, games.MustNew("sequence")) }
