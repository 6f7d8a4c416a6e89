package tetrislink

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
)

// HeuristicValue is the tuned heuristic agent's score (one
// implementation, Weights.Value), leaves the state alone and does not
// allocate.
func TestHeuristicValueIsTunedScore(t *testing.T) {
	g := games.MustNew("tetrislink:players=3")
	a, err := agent.New(g, "heuristic:weights=tuned", agent.Env{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rng := games.NewRand(5)
	m := games.NewMask(g.NumActions())
	s := g.NewInitialState().(*State)
	for !s.IsTerminal() {
		p := s.CurrentPlayer()
		an, err := a.(agent.Analyzer).Analyze(context.Background(), s, p)
		if err != nil {
			t.Fatal(err)
		}
		h := s.Hash()
		for _, x := range an {
			if got := s.HeuristicValue(p, x.Action); got != x.Score {
				t.Fatalf("move %d %s: HeuristicValue %v, agent score %v", s.MoveNumber(), s.ActionString(x.Action), got, x.Score)
			}
		}
		if s.Hash() != h {
			t.Fatal("HeuristicValue modified the state")
		}
		if n := testing.AllocsPerRun(20, func() { s.HeuristicValue(p, an[0].Action) }); n != 0 {
			t.Fatalf("HeuristicValue allocates %v times", n)
		}
		s.Legal(m)
		s.Apply(m.Random(rng))
	}
	if v := s.HeuristicValue(0, 0); v != 0 {
		t.Errorf("terminal state: HeuristicValue %v, want 0", v)
	}
}
