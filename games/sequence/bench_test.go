package sequence

import (
	"testing"

	"github.com/canopy-go/canopy/games"
)

var benchSpecs = []string{"sequence", "sequence:jacks=false", "sequence:players=3"}

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
			for b.Loop() {
				init.CloneInto(s)
				moves += games.RandomPlayout(s, rng, mask, nil)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
			b.ReportMetric(float64(moves)/float64(b.N), "actions/game")
		})
		b.Run(sp+"/fast", func(b *testing.B) {
			s := g.NewInitialState().(*State)
			rng := games.NewRand(1)
			moves := 0
			b.ReportAllocs()
			for b.Loop() {
				init.CloneInto(s)
				moves += s.PlayRandom(rng)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
			b.ReportMetric(float64(moves)/float64(b.N), "actions/game")
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
			for b.Loop() {
				s.Resample(0, rng, dst)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "determinizations/s")
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
	a := NewGreedy(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Act(b.Context(), s, 0); err != nil {
			b.Fatal(err)
		}
	}
}
