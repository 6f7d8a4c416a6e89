package multi_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4d"
	_ "github.com/canopy-go/canopy/games/strands"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/multi"
)

// winPosition is a Connect4d (d=5) position where x, to move at the start
// of a turn, wins by dropping on board 2 and then board 3 in column a
// (3-D line b0r0 b1r1 b2r2 b3r3 in column a), whatever it plays on
// boards 0 and 1.
func winPosition(t *testing.T) games.State {
	t.Helper()
	g := games.MustNew("connect4d")
	s := g.NewInitialState()
	for _, turn := range [][5]int{
		{0, 3, 0, 0, 6}, // x
		{6, 0, 0, 0, 6}, // o
		{5, 0, 5, 0, 5}, // x
		{6, 6, 6, 6, 4}, // o
	} {
		for b, c := range turn {
			if err := games.ApplyChecked(s, games.Action(b*7+c)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s.IsTerminal() || s.CurrentPlayer() != 0 || s.(games.MultiActionState).StepInTurn() != 0 {
		t.Fatalf("bad test position %s", s)
	}
	return s
}

// winningTurns counts by brute force the turns of the player to move in s
// that win the game at once, and all its turns.
func winningTurns(s games.State) (wins, all int) {
	mover, turn := s.CurrentPlayer(), s.(games.MultiActionState).TurnNumber()
	ret := make([]float64, s.Game().NumPlayers())
	mask := games.NewMask(s.Game().NumActions())
	var rec func(s games.State)
	rec = func(s games.State) {
		if s.IsTerminal() || s.(games.MultiActionState).TurnNumber() != turn {
			all++
			s.Returns(ret)
			if ret[mover] > 0 {
				wins++
			}
			return
		}
		s.Legal(mask)
		for _, a := range mask.AppendTo(nil) {
			c := s.Clone()
			c.Apply(a)
			rec(c)
		}
	}
	rec(s)
	return wins, all
}

// wins reports whether playing turn from s wins for the mover.
func wins(s games.State, turn []games.Action) bool {
	c := s.Clone()
	mover := c.CurrentPlayer()
	for _, a := range turn {
		if err := games.ApplyChecked(c, a); err != nil {
			return false
		}
	}
	ret := make([]float64, 2)
	c.Returns(ret)
	return c.IsTerminal() && ret[mover] > 0
}

// planners returns every variant with a simulation budget per turn.
func planners(t *testing.T, g games.Game, sims int, eval search.Evaluator, seed uint64) map[string]multi.Planner {
	t.Helper()
	o := search.DefaultOptions()
	o.Sims, o.Eval = sims, eval
	v, err := multi.NewBB(g, o, true, seed)
	if err != nil {
		t.Fatal(err)
	}
	bb, err := multi.NewBB(g, o, false, seed)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]multi.Planner{"mcts-v": v, "mcts-bb": bb}
	for _, c := range []struct {
		name    string
		bb      bool
		horizon int
	}{{"emcts-v", false, 1}, {"emcts-bb", true, 1}, {"fh-emcts", false, 3}} {
		e, err := multi.NewEMCTS(g, eval, multi.Budget{Sims: sims}, seed)
		if err != nil {
			t.Fatal(err)
		}
		e.BB, e.Horizon = c.bb, c.horizon
		out[c.name] = e
	}
	oep, err := multi.NewOEP(g, eval, multi.Budget{Sims: sims}, seed)
	if err != nil {
		t.Fatal(err)
	}
	out["oep"] = oep
	return out
}

func TestFindsWholeTurnWin(t *testing.T) {
	s := winPosition(t)
	w, all := winningTurns(s)
	if w == 0 {
		t.Fatal("brute force: no winning turn in the test position")
	}
	t.Logf("brute force: %d winning turns of %d", w, all)
	seeds := 20
	if testing.Short() {
		seeds = 3
	}
	found := map[string]int{}
	for seed := range seeds {
		for name, p := range planners(t, s.Game(), 2000, nil, uint64(seed+1)) {
			turn, err := p.PlanTurn(context.Background(), s, nil)
			if err != nil {
				t.Fatal(name, err)
			}
			if wins(s, turn) {
				found[name]++
			}
		}
	}
	for _, name := range []string{"mcts-v", "mcts-bb", "emcts-v", "emcts-bb", "oep", "fh-emcts"} {
		t.Logf("%s: the win in %d of %d seeds", name, found[name], seeds)
		switch n := found[name]; {
		case name == "fh-emcts":
			// Known limitation (see EMCTS, TestFHEMCTSAbsorbed): the
			// chain settles on the first 3-turn sequence in which x wins
			// at all, mostly on x's next turn after an o reply that does
			// not block: 5 of seeds 1-20.
			if n > seeds/2 {
				t.Errorf("%s finds the win in %d of %d seeds: update the EMCTS doc", name, n, seeds)
			}
		case n != seeds:
			// emcts-v and emcts-bb (Phases 0, the study's c) read the win
			// off the end of their most visited path (TestEMCTSChain).
			t.Errorf("%s: the win in only %d of %d seeds", name, n, seeds)
		}
	}
}

// spy counts evaluator calls.
type spy struct {
	n    atomic.Int64
	eval search.Evaluator
}

func (s *spy) Evaluate(c *search.EvalContext, st games.State, v []float64, p []float32) bool {
	s.n.Add(1)
	return s.eval.Evaluate(c, st, v, p)
}

func TestBudgetExact(t *testing.T) {
	for _, gs := range []string{"connect4d", "strands:size=4"} {
		g := games.MustNew(gs)
		s := g.NewInitialState()
		s.Legal(maskOf(g))
		if gs != "connect4d" { // past Black's one-stone opening
			m := maskOf(g)
			s.Legal(m)
			s.Apply(m.First())
		}
		const sims = 300
		for name := range planners(t, g, sims, nil, 1) {
			sp := &spy{eval: &search.Rollout{}}
			p := planners(t, g, sims, sp, 1)[name]
			turn, err := p.PlanTurn(context.Background(), s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := sp.n.Load(); n != sims {
				t.Errorf("%s %s: %d evaluations, want exactly %d (turn %v)", gs, name, n, sims, turn)
			}
		}
	}
}

func maskOf(g games.Game) games.Mask { return games.NewMask(g.NumActions()) }

func TestDeterministic(t *testing.T) {
	s := winPosition(t)
	g := s.Game()
	s2 := g.NewInitialState() // an early position with many good turns
	for name := range planners(t, g, 200, nil, 7) {
		for _, st := range []games.State{s, s2} {
			a, _ := planners(t, g, 200, nil, 7)[name].PlanTurn(context.Background(), st, nil)
			b, _ := planners(t, g, 200, nil, 7)[name].PlanTurn(context.Background(), st, nil)
			if !slices.Equal(a, b) {
				t.Errorf("%s: seed 7 gave %v then %v", name, a, b)
			}
		}
	}
}

func TestCancelled(t *testing.T) {
	s := winPosition(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, p := range planners(t, s.Game(), 1<<30, nil, 1) {
		turn, err := p.PlanTurn(ctx, s, nil)
		if err != nil || len(turn) == 0 {
			t.Errorf("%s: cancelled search gave %v, %v; want a legal turn", name, turn, err)
		}
	}
}

// TestFullGames plays every agent against random to the end through
// agent.New and the registry (small budgets), checking each action's
// legality.
func TestFullGames(t *testing.T) {
	specs := []string{"mcts-v:sims=40", "mcts-bb:sims=40", "emcts:sims=40", "emcts:sims=40,bb=true", "emcts:sims=40,horizon=2,eval=rollout", "oep:sims=40", "oep:sims=40,pop=4,survival=0.25,mutation=1,reeval=false", "oep:time=20ms,survival=1,reeval=false"}
	for _, gs := range []string{"connect4d:d=4", "strands:size=4"} {
		g := games.MustNew(gs)
		for i, sp := range specs {
			a, err := agent.New(g, sp, agent.Env{Seed: uint64(i)})
			if err != nil {
				t.Fatal(err)
			}
			r, _ := agent.New(g, "random", agent.Env{Seed: 9})
			seat := i % 2
			s := g.NewInitialState()
			for !s.IsTerminal() {
				p := s.CurrentPlayer()
				ag := r
				if p == seat {
					ag = a
				}
				act, err := ag.Act(context.Background(), s, p)
				if err != nil {
					t.Fatalf("%s on %s: %v", sp, gs, err)
				}
				if err := games.ApplyChecked(s, act); err != nil {
					t.Fatalf("%s on %s: %v", sp, gs, err)
				}
			}
		}
	}
}

func TestAgentOptions(t *testing.T) {
	g := games.MustNew("connect4d")
	for _, sp := range []string{"emcts:nosuch=1", "mcts-bb:threads=2", "emcts:horizon=0", "oep:pop=1", "oep:survival=0", "oep:mutation=2", "oep:eval=nosuch"} {
		if _, err := agent.New(g, sp, agent.Env{Seed: 1}); err == nil {
			t.Errorf("%s: no error", sp)
		}
	}
}
