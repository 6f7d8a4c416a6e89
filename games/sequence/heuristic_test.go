package sequence

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// HeuristicValue is the greedy baseline's score: the greedy agent plays an
// action of maximal HeuristicValue. It leaves the state alone and does
// not allocate.
func TestHeuristicValueIsGreedyScore(t *testing.T) {
	g := games.MustNew("sequence")
	greedy := newGreedy(1)
	rng := games.NewRand(7)
	m := games.NewMask(g.NumActions())
	s := g.NewInitialState().(*State)
	for moves := 0; !s.IsTerminal() && moves < 300; moves++ {
		p := s.CurrentPlayer()
		if p == games.ChancePlayer {
			s.Apply(s.SampleChance(rng))
			continue
		}
		s.Legal(m)
		best := -1e300
		h := s.Hash()
		for a := range m.All() {
			v := s.HeuristicValue(p, a)
			if v != s.GreedyScore(a) {
				t.Fatalf("%s: HeuristicValue %v, GreedyScore %v", s.ActionString(a), v, s.GreedyScore(a))
			}
			best = max(best, v)
		}
		if s.Hash() != h {
			t.Fatal("HeuristicValue modified the state")
		}
		a, err := greedy.Act(context.Background(), s, p)
		if err != nil {
			t.Fatal(err)
		}
		if v := s.HeuristicValue(p, a); v != best {
			t.Fatalf("greedy played %s (value %v), best value %v", s.ActionString(a), v, best)
		}
		if n := testing.AllocsPerRun(20, func() { s.HeuristicValue(p, a) }); n != 0 {
			t.Fatalf("HeuristicValue allocates %v times", n)
		}
		s.Legal(m)
		s.Apply(m.Random(rng))
	}
}
