package engine

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/spec"
)

// outcomeGame is a hand-built three-player game where the objectives
// (search.ObjectiveReturns, search.ObjectiveWin) must choose differently:
// a twoMoveGame that ends after the two moves with outcomeRet. Under the
// returns, player 1 answers A with x (0.5 > 0.4) and B with y
// (0.2 > 0.1), so player 0 gets 0.5 from A and 0.25 from B and plays A;
// under objective=win, player 1 answers A with y (its only sole win),
// which leaves player 0 without one, while after B player 0 wins alone
// whatever player 1 does, so player 0 plays B.
var outcomeGame = twoMoveGame{"outcome", &outcomeRet, 2}

// outcomeRet[a0][a1] are the players' returns after moves a0, a1.
var outcomeRet = [2][2][3]float64{
	{{0.5, 0.5, -1}, {0.2, 0.4, 0}},     // A: x (0 and 1 share first), y (1 alone)
	{{0.3, 0.1, 0.2}, {0.25, 0.2, 0.1}}, // B: x, y (0 alone either way)
}

// zeroNet has uniform priors and values of 0 for every player: the
// outcome game's values all come from its terminal returns.
type zeroNet struct{}

func (zeroNet) Name() string        { return "zero" }
func (zeroNet) Shape() (int, int)   { return 4, 2 }
func (zeroNet) PreferredBatch() int { return 8 }
func (zeroNet) MaxBatch() int       { return 64 }
func (zeroNet) ValueSize() int      { return 3 }
func (zeroNet) Evaluate(_ context.Context, batch int, _, policy, value []float32) error {
	clear(policy[:batch*2])
	clear(value[:batch*3])
	return nil
}

// outcomeMove is the brute-force move of player 0 in outcomeGame when
// each player picks the reply best for itself: on the returns, or on
// sole wins (1 for the one player strictly ahead of both others, else 0).
func outcomeMove(win bool) int {
	val := func(r [3]float64, p int) float64 {
		if !win {
			return r[p]
		}
		for q := range r {
			if q != p && r[q] >= r[p] {
				return 0
			}
		}
		return 1
	}
	var v0 [2]float64
	for a0 := range 2 {
		x, y := outcomeRet[a0][0], outcomeRet[a0][1]
		reply := x
		if val(y, 1) > val(x, 1) {
			reply = y
		}
		v0[a0] = val(reply, 0)
	}
	if v0[1] > v0[0] {
		return 1
	}
	return 0
}

// Both agents play the brute-force move of each objective in the outcome
// game: az through Settings (its objective option) and mcts through its
// spec, with random rollouts.
func TestObjectiveWin(t *testing.T) {
	g := outcomeGame
	if outcomeMove(false) == outcomeMove(true) {
		t.Fatalf("the game does not separate the objectives: both play %d", outcomeMove(false))
	}
	for _, obj := range search.ObjectiveKinds {
		want := outcomeMove(obj == search.ObjectiveWin)
		e, err := New(g, zeroNet{}, Options{Workers: 1, Batch: 8, Wait: -1})
		if err != nil {
			t.Fatal(err)
		}
		st := DefaultSettings()
		st.Sims, st.Objective = 400, obj
		s, err := NewSearcher(e, st.SearchOptions(), 3)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := s.Search(context.Background(), g.NewInitialState(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := mostVisited(stats); got != want {
			t.Errorf("az, objective=%s: plays %d, brute force %d (stats %+v)", obj, got, want, stats)
		}
		e.Close()

		sp, err := spec.Parse("mcts:sims=2000,objective=" + obj)
		if err != nil {
			t.Fatal(err)
		}
		o, err := search.ParseOptions(g, sp, agent.Env{})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := search.New(g, o, 5)
		if err != nil {
			t.Fatal(err)
		}
		tr.Search(context.Background(), g.NewInitialState())
		if got := mostVisited(tr.RootStats(0, nil)); got != want {
			t.Errorf("mcts, objective=%s: plays %d, brute force %d (stats %+v)", obj, got, want, tr.RootStats(0, nil))
		}
	}
}
