package search

import (
	"context"
	"github.com/canopy-go/canopy/agent"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/sequence"
	"github.com/canopy-go/canopy/spec"
)

// countingState counts Resample calls on the root.
type countingState struct {
	games.State
	calls int
}

func (c *countingState) Resample(p int, rng *rand.Rand, dst games.State) {
	c.calls++
	c.State.(games.Resampler).Resample(p, rng, dst)
}

// seqPosition plays random moves (chance resolved) until a player is to
// move with several legal actions.
func seqPosition(t *testing.T, g games.Game, seed uint64) games.State {
	s := g.NewInitialState()
	rng := games.NewRand(seed)
	m := games.NewMask(g.NumActions())
	for i := 0; ; i++ {
		if s.IsTerminal() {
			t.Fatal("game ended while looking for a position")
		}
		if p := s.CurrentPlayer(); p == games.ChancePlayer {
			s.Apply(s.(games.ChanceState).SampleChance(rng))
			continue
		}
		s.Legal(m)
		if i > 20 && m.Count() > 2 {
			return s
		}
		s.Apply(m.Random(rng))
	}
}

// Root determinization: K deals of S simulations each, merged at the root.
func TestDeterminizationUsesKDeals(t *testing.T) {
	g := games.MustNew("sequence")
	sp, _ := spec.Parse("mcts:det=8,sims=1600,depth=16")
	o, err := ParseOptions(g, sp, agent.Env{})
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, g, o, 1)
	s := seqPosition(t, g, 3)
	cs := &countingState{State: s}
	st, err := a.Stats(context.Background(), cs, s.CurrentPlayer())
	if err != nil {
		t.Fatal(err)
	}
	if cs.calls != 8 {
		t.Errorf("Resample called %d times, want K = 8", cs.calls)
	}
	total := 0
	for _, x := range st {
		total += x.Visits
	}
	if total != 8*200 {
		t.Errorf("root visits %d, want 8 deals x 200 = 1600", total)
	}
	// Imperfect-information games default to det=8 (no peeking at hands).
	sp, _ = spec.Parse("mcts")
	if o, _ := ParseOptions(g, sp, agent.Env{}); o.Determinize != 8 {
		t.Errorf("default det for sequence = %d, want 8", o.Determinize)
	}
}

// SO-ISMCTS re-determinizes at every simulation: one Resample per
// simulation, every root action legal for the observer, visits summing to
// the budget.
func TestISMCTS(t *testing.T) {
	g := games.MustNew("sequence")
	sp, _ := spec.Parse("mcts:ismcts=true,sims=500,depth=16")
	o, err := ParseOptions(g, sp, agent.Env{})
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, g, o, 1)
	for seed := range uint64(3) {
		s := seqPosition(t, g, seed)
		cs := &countingState{State: s}
		st, err := a.Stats(context.Background(), cs, s.CurrentPlayer())
		if err != nil {
			t.Fatal(err)
		}
		if cs.calls != 500 {
			t.Errorf("Resample called %d times, want one per simulation (500)", cs.calls)
		}
		m := games.NewMask(g.NumActions())
		s.Legal(m)
		total := 0
		for _, x := range st {
			total += x.Visits
			if !m.Has(x.Action) {
				t.Errorf("root action %s is not legal", s.ActionString(x.Action))
			}
		}
		if total != 500 {
			t.Errorf("root visits %d, want 500", total)
		}
		act, err := a.Act(context.Background(), s, s.CurrentPlayer())
		if err != nil || !m.Has(act) {
			t.Errorf("Act: %v %v", act, err)
		}
	}
}

// The K determinizations split the move's budget: sims/K simulations and
// time/K each, for a time budget alone too (it used to be left whole, so
// that det=8,time=100ms searched for 800 ms), and under a time budget the
// default arena (2^20 nodes, 2^24 edges) too; sequence has 700 actions, so
// a node reserves 128 edges (Options.MaxEdges).
func TestDeterminizationSplitsBudget(t *testing.T) {
	g := games.MustNew("sequence")
	for _, c := range []struct {
		sp           string
		sims         int
		dt           time.Duration
		nodes, edges int // 0: the tree's own default (not checked)
	}{
		{"mcts:det=8,time=100ms", 0, 12500 * time.Microsecond, 1 << 17, 1 << 21},
		{"mcts:det=8,time=100ms,nodes=5000", 0, 12500 * time.Microsecond, 5000, 5000 * 128},
		{"mcts:det=4,sims=1000", 250, 0, 0, 0},
		{"mcts:det=4,sims=1000,time=1s", 250, 250 * time.Millisecond, 0, 0},
		{"mcts:det=1,time=100ms,nodes=1000", 0, 100 * time.Millisecond, 1000, 1000 * 128},
	} {
		sp, _ := spec.Parse(c.sp)
		o, err := ParseOptions(g, sp, agent.Env{})
		if err != nil {
			t.Fatal(err)
		}
		a := newAgent(t, g, o, 1)
		if to := a.Tree().Options(); to.Sims != c.sims || to.Time != c.dt {
			t.Errorf("%s: each tree gets sims=%d time=%v, want sims=%d time=%v", c.sp, to.Sims, to.Time, c.sims, c.dt)
		}
		if n, e := len(a.Tree().a.nodes), len(a.Tree().a.edges); c.nodes != 0 && (n != c.nodes || e != c.edges) {
			t.Errorf("%s: each tree has room for %d nodes and %d edges, want %d and %d", c.sp, n, e, c.nodes, c.edges)
		}
	}
}
