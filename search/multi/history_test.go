package multi_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/multi"
)

// fixedPolicy is an evaluator that values every state 0 for every
// player and puts its policy on the first legal actions: first[k] on the
// k-th at states where board 0 of Connect4d is to play (actions 0-6),
// later[k] elsewhere. With value 0 (and PUCT's FPU 0), a node's visits
// follow the priors alone, which the tests below count by hand.
type fixedPolicy struct {
	first, later []float32
	mask         games.Mask
}

func (e *fixedPolicy) Evaluate(_ *search.EvalContext, s games.State, value []float64, priors []float32) bool {
	clear(value)
	if priors == nil { // EMCTS asks leaves for a value only
		return true
	}
	if e.mask == nil {
		e.mask = games.NewMask(s.Game().NumActions())
	}
	s.Legal(e.mask)
	legal := e.mask.AppendTo(nil) // Connect4d: 7 legal actions here
	p := e.later
	if legal[0] < 7 {
		p = e.first
	}
	for k, v := range p {
		priors[legal[k]] = v
	}
	return true
}

// wantRows returns the policy rows (n actions each) with the given
// probabilities by action, one map per row.
func wantRows(n int, rows ...map[games.Action]float64) []float32 {
	out := make([]float32, n*len(rows))
	for i, r := range rows {
		for a, p := range r {
			out[i*n+int(a)] = float32(p)
		}
	}
	return out
}

func near(got, want []float32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			return false
		}
	}
	return true
}

// TestBBPolicyHistory checks Eq. 1 on a tiny search counted by hand:
// Connect4d with d=2 (a turn is one stone on board 0, then one on board
// 1), 11 evaluations per turn, fixedPolicy with priors 0.65 and 0.35 on
// board 0, 0.7 and 0.3 on board 1.
//
// At a node whose priors are 0.65 and 0.35 (A and B), P/(1+n) takes A
// while 13(1+nB) > 7(1+nA): the visits go A B A A B A A B A A; with 0.7
// and 0.3 (A' = action 7, B' = 8): A' A' B' A' A' B' A' A'. A child's
// first visit expands it, so a child visited k times has passed k-1
// visits on to its own children.
//
// MCTS-BB: the root's expansion costs 1 evaluation, and the 10 left are
// split over 2 phases. Phase 1: 5 visits, A 3 and B 2; A is committed.
// Phase 2 searches from A (kept, expanded: no evaluation) with the 5
// left: A's children had 3-1 = 2 visits (A' A'), now 7: A' 5, B' 2.
//
// MCTS-V: all 10 from the root, A 7 and B 3; the walk then reads A's
// children after 7-1 = 6 visits: A' 4, B' 2.
func TestBBPolicyHistory(t *testing.T) {
	g := games.MustNew("connect4d:d=2")
	n := g.NumActions()
	for _, c := range []struct {
		vanilla bool
		want    []float32
	}{
		{false, wantRows(n, map[games.Action]float64{0: 3.0 / 5, 1: 2.0 / 5}, map[games.Action]float64{7: 5.0 / 7, 8: 2.0 / 7})},
		{true, wantRows(n, map[games.Action]float64{0: 7.0 / 10, 1: 3.0 / 10}, map[games.Action]float64{7: 4.0 / 6, 8: 2.0 / 6})},
	} {
		o := search.DefaultOptions()
		o.Rule, o.Sims, o.Eval = search.PUCT, 11, &fixedPolicy{first: []float32{0.65, 0.35}, later: []float32{0.7, 0.3}}
		b, err := multi.NewBB(g, o, c.vanilla, 1)
		if err != nil {
			t.Fatal(err)
		}
		turn, err := b.PlanTurn(context.Background(), g.NewInitialState(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(turn, []games.Action{0, 7}) || b.Sims != 11 {
			t.Errorf("vanilla %v: turn %v in %d evaluations, want [0 7] in 11", c.vanilla, turn, b.Sims)
		}
		if got := b.PolicyHistory(nil); !near(got, c.want) {
			t.Errorf("vanilla %v: policy history\n%v\nwant\n%v", c.vanilla, got, c.want)
		}
	}
}

// TestEMCTSPolicyHistory checks Eq. 2 on tiny searches counted by hand:
// Connect4d with d=2, fixedPolicy with priors .55, .28, .17 on actions
// 0-2 of board 0 and .81, .19 on actions 7-8 of board 1, greedy L0
// (InitTemp 0): L0 = [0, 7], 2 policy calls.
//
// A node's edges are its mutations with the root priors at their
// position and the keep mutation with weight 1, normalised; for the root
// R = [0, 7] (sum 1.64): keep .610, a = (0,1) .171, b = (1,8) .116, c =
// (0,2) .104, the rest 0. Values are 0, so a visited edge scores P/(1+n)
// and an unvisited one P (times a factor common to the node). Each keep
// child Ki has R's sequence, so its edges are R's. The simulations:
//
//	1  expand R
//	2  R keep (.610) -> K1
//	3  R keep (.305 > a .171); K1 keep -> K2
//	4  R keep (.203); K1 keep (.305); K2 keep -> K3
//	5  R a (.171 > keep .152) -> [1, 7]
//	6  R keep (.152 > b .116); K1 keep (.203); K2 keep; K3 keep -> K4
//	7  R keep (.122 > b .116); K1 a (.171 > keep .152) -> [1, 7]
//	8  R b (.116 > keep .102) -> [0, 8]
//	9  R c (.104 > keep .102) -> [2, 7]
//	10 R keep (.102); K1 keep (.152 > b .116); K2 keep (.203 > a .171); K3 keep; K4 keep -> K5
//	11 R keep (.0871 > a .0854); K1 keep (.122 > b .116); K2 a (.171 > keep .152) -> [1, 7]
//	12 R a (.0854 > keep .0762) -> [1, 7] again: R's edge a now has 2 visits
//
// With 4 simulations (budget 6) only keep mutations are taken: each row
// is all on the action played. With 12 (budget 14): mutations (0,1) 2+1+1
// times (R, K1, K2), (0,2) and (1,8) once; row 0 = {1: 4/5, 2: 1/5}, row 1
// = {8: 1}, none of it on the actions played, kept, not mutated (see
// EMCTS.PolicyHistory). Both turns walk the keeps: [0, 7].
func TestEMCTSPolicyHistory(t *testing.T) {
	g := games.MustNew("connect4d:d=2")
	n := g.NumActions()
	for _, c := range []struct {
		budget int
		want   []float32
	}{
		{6, wantRows(n, map[games.Action]float64{0: 1}, map[games.Action]float64{7: 1})},
		{14, wantRows(n, map[games.Action]float64{1: 4.0 / 5, 2: 1.0 / 5}, map[games.Action]float64{8: 1})},
	} {
		ev := &fixedPolicy{first: []float32{0.55, 0.28, 0.17}, later: []float32{0.81, 0.19}}
		e, err := multi.NewEMCTS(g, ev, multi.Budget{Sims: c.budget}, 1)
		if err != nil {
			t.Fatal(err)
		}
		e.InitTemp = 0
		turn, err := e.PlanTurn(context.Background(), g.NewInitialState(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(turn, []games.Action{0, 7}) || e.Sims != c.budget {
			t.Fatalf("budget %d: turn %v in %d evaluations, want [0 7] in %d", c.budget, turn, e.Sims, c.budget)
		}
		if got := e.PolicyHistory(nil); !near(got, c.want) {
			t.Errorf("budget %d: policy history\n%v\nwant\n%v", c.budget, got, c.want)
		}
		// Explain counts the same mutations, for the actions played only.
		for i, r := range e.Explain(nil) {
			if r.Visits != 0 || r.Score != 0 {
				t.Errorf("budget %d: Explain row %d: %d visits, score %v; want 0, 0 (kept, not mutated)", c.budget, i, r.Visits, r.Score)
			}
		}
	}
}

// TestPolicyHistoryShape checks, over random positions of Connect4d and
// Strands (whose later actions in a turn depend on the earlier ones), that
// every TurnSearcher returns one row per action of the turn, each a
// distribution over the actions legal at its state, and that EMCTS's rows
// give the actions played their Explain shares.
func TestPolicyHistoryShape(t *testing.T) {
	for _, gs := range []string{"connect4d:d=3", "strands:size=4"} {
		g := games.MustNew(gs)
		n := g.NumActions()
		rng := games.NewRand(5)
		mask := games.NewMask(n)
		for seed := range uint64(4) {
			s := g.NewInitialState()
			for range rng.IntN(12) {
				if s.IsTerminal() {
					break
				}
				s.Legal(mask)
				s.Apply(mask.Random(rng))
			}
			if s.IsTerminal() {
				continue
			}
			for name, p := range planners(t, g, 120, nil, seed+1) {
				ts, ok := p.(multi.TurnSearcher)
				if !ok {
					if name != "oep" {
						t.Errorf("%s is not a TurnSearcher", name)
					}
					continue
				}
				turn, err := ts.PlanTurn(context.Background(), s, nil)
				if err != nil {
					t.Fatal(err)
				}
				hist := ts.PolicyHistory(nil)
				if len(hist) != n*len(turn) {
					t.Fatalf("%s %s: %d values for a turn of %d actions, want %d", gs, name, len(hist), len(turn), n*len(turn))
				}
				ex := ts.(multi.Explainer).Explain(nil)
				c := s.Clone()
				for i, a := range turn {
					row := hist[i*n : (i+1)*n]
					c.Legal(mask)
					var sum float64
					for b, v := range row {
						if v < 0 || (v > 0 && !mask.Has(games.Action(b))) {
							t.Errorf("%s %s row %d: %v on action %d (legal: %v)", gs, name, i, v, b, mask.Has(games.Action(b)))
						}
						sum += float64(v)
					}
					if math.Abs(sum-1) > 1e-5 {
						t.Errorf("%s %s row %d sums to %v", gs, name, i, sum)
					}
					if strings.HasPrefix(name, "mcts") && ex[i].Visits > 0 && math.Abs(float64(row[a])-ex[i].Score) > 1e-6 {
						t.Errorf("%s %s row %d: %v on the action played, Explain's share %v", gs, name, i, row[a], ex[i].Score)
					}
					c.Apply(a)
				}
			}
		}
	}
}

// TestEvalErrorsNameAgent checks that a bad evaluator option is reported
// under the agent's name, not under `mcts`, whose parser reads it.
func TestEvalErrorsNameAgent(t *testing.T) {
	g := games.MustNew("connect4d")
	for _, sp := range []string{"emcts:eval=nosuch", "oep:eval=nosuch", "emcts:rollout=heuristic", "oep:eval=blend,static=nosuch", "mcts-bb:eval=nosuch", "mcts-v:rollout=heuristic"} {
		_, err := agent.New(g, sp, agent.Env{Seed: 1})
		name, _, _ := strings.Cut(sp, ":")
		if err == nil || !strings.HasPrefix(err.Error(), name+": ") {
			t.Errorf("%s: error %v, want one beginning %q", sp, err, name+": ")
		}
	}
}
