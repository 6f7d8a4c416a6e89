package gameheur

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
)

// With a dominant progressive bias, unvisited actions are tried in
// decreasing heuristic order: after one simulation the only visited root
// action is one with the maximal heuristic value.
func TestProgressiveBiasOrder(t *testing.T) {
	g := games.MustNew("tetrislink:players=2")
	a, err := agent.New(g, "mcts:bias=1000,sims=1", 1)
	if err != nil {
		t.Fatal(err)
	}
	s := g.NewInitialState()
	rng := games.NewRand(4)
	m := games.NewMask(g.NumActions())
	for range 6 { // a position with some structure
		s.Legal(m)
		s.Apply(m.Random(rng))
	}
	st, err := a.(*search.Agent).Stats(context.Background(), s, s.CurrentPlayer())
	if err != nil {
		t.Fatal(err)
	}
	s.Legal(m)
	best := -1e18
	for act := range m.All() {
		best = max(best, Tetrislink(s, s.CurrentPlayer(), act))
	}
	if st[0].Visits != 1 || Tetrislink(s, s.CurrentPlayer(), st[0].Action) != best {
		t.Errorf("visited %s (h=%v, visits %d); best heuristic value %v",
			s.ActionString(st[0].Action), Tetrislink(s, s.CurrentPlayer(), st[0].Action), st[0].Visits, best)
	}
}

// Heuristic rollouts and the blend evaluator run through the agent spec.
func TestSpecs(t *testing.T) {
	for _, gs := range []string{"tetrislink:players=3", "sushigo-seq", "sushigo"} {
		g, err := games.New(gs)
		if err != nil {
			t.Skipf("%s: %v", gs, err)
		}
		for _, sp := range []string{"mcts:rollout=heuristic,eps=0.2,sims=100", "mcts:eval=blend,sims=100", "mcts:bias=0.5,sims=100,sel=ucb1tuned"} {
			a, err := agent.New(g, sp, 1)
			if err != nil {
				t.Fatalf("%s %s: %v", gs, sp, err)
			}
			s := g.NewInitialState()
			for s.CurrentPlayer() == games.ChancePlayer {
				s.Apply(s.(games.ChanceState).SampleChance(games.NewRand(1)))
			}
			p := max(s.CurrentPlayer(), 0)
			act, err := a.Act(context.Background(), s, p)
			if err != nil {
				t.Fatalf("%s %s: %v", gs, sp, err)
			}
			m := games.NewMask(g.NumActions())
			if ss, ok := s.(games.SimultaneousState); ok && s.CurrentPlayer() == games.SimultaneousPlayer {
				ss.LegalFor(p, m)
			} else {
				s.Legal(m)
			}
			if !m.Has(act) {
				t.Errorf("%s %s: illegal action %d", gs, sp, act)
			}
		}
	}
}
