package selfplay

import (
	"context"
	"slices"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4d"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/multi"
)

// turnSearchers returns an MCTS-BB and an EMCTS planner for g with
// random rollouts, 40 simulations per turn and seed.
func turnSearchers(t *testing.T, g games.Game, seed uint64) []multi.TurnSearcher {
	t.Helper()
	o := search.DefaultOptions()
	o.Sims = 40
	bb, err := multi.NewBB(g, o, false, seed)
	if err != nil {
		t.Fatal(err)
	}
	em, err := multi.NewEMCTS(g, nil, multi.Budget{Sims: 40}, seed)
	if err != nil {
		t.Fatal(err)
	}
	return []multi.TurnSearcher{bb, em}
}

// TestPlayTurns checks PlayTurns's record against the same game replayed
// by hand with an identical planner (Connect4d with 4 boards, where
// lines of four can win; seed 1 gives decisive games): one position per atomic action, the
// observation and legal actions of its state, the planner's policy row
// and (MCTS-BB) value, and the outcome from the mover's view; and that a ply cap cuts the
// game as a draw.
func TestPlayTurns(t *testing.T) {
	g := games.MustNew("connect4d:d=4")
	n := g.NumActions()
	obsN := 1
	for _, d := range g.ObservationShape() {
		obsN *= d
	}
	for k := range turnSearchers(t, g, 1) {
		rec, err := PlayTurns(context.Background(), g, turnSearchers(t, g, 1)[k], 7, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The reference: the same planner, seed and game, played here.
		ts := turnSearchers(t, g, 1)[k]
		s := g.NewInitialState()
		var obs, policy, rootQ []float32
		var legal []uint8
		var movers []int
		mask := games.NewMask(n)
		for !s.IsTerminal() {
			turn, err := ts.PlanTurn(context.Background(), s, nil)
			if err != nil {
				t.Fatal(err)
			}
			hist := ts.PolicyHistory(nil)
			values := make([]float32, len(turn)) // 0 unless ts values its states
			if tv, ok := ts.(multi.TurnValuer); ok {
				values = tv.ValueHistory(nil)
			}
			for i, a := range turn {
				rootQ = append(rootQ, values[i])
				o := make([]float32, obsN)
				s.Observation(s.CurrentPlayer(), o)
				obs = append(obs, o...)
				policy = append(policy, hist[i*n:(i+1)*n]...)
				s.Legal(mask)
				for b := range n {
					if mask.Has(games.Action(b)) {
						legal = append(legal, 1)
					} else {
						legal = append(legal, 0)
					}
				}
				movers = append(movers, s.CurrentPlayer())
				s.Apply(a)
			}
		}
		ret := make([]float64, 2)
		s.Returns(ret) // connect4d's returns are in [-1, 1] already
		if rec.ID != 7 || rec.Positions() != len(movers) || !slices.Equal(rec.Obs, obs) || !slices.Equal(rec.Policy, policy) || !slices.Equal(rec.Legal, legal) || !slices.Equal(rec.RootQ, rootQ) {
			t.Fatalf("planner %d: record of %d positions (id %d) differs from the game replayed (%d positions)", k, rec.Positions(), rec.ID, len(movers))
		}
		for i, p := range movers {
			if rec.Value[i] != float32(ret[p]) || rec.Ply[i] != int32(i) {
				t.Fatalf("planner %d position %d: value %v, ply %d; want %v, %d", k, i, rec.Value[i], rec.Ply[i], ret[p], i)
			}
		}
		if _, ok := turnSearchers(t, g, 1)[k].(multi.TurnValuer); ok && !slices.ContainsFunc(rec.RootQ, func(q float32) bool { return q != 0 }) {
			t.Errorf("planner %d values its states, but every RootQ is 0", k)
		}
		if ret[0] == 0 {
			t.Fatalf("planner %d: a draw; the value check needs a decisive game (change the seed)", k)
		}
		if !slices.Equal(rec.Returns, ret) {
			t.Errorf("planner %d: returns %v, want %v", k, rec.Returns, ret)
		}

		cut, err := PlayTurns(context.Background(), g, turnSearchers(t, g, 1)[k], 0, 3)
		if err != nil {
			t.Fatal(err)
		}
		if cut.Positions() != 3 || slices.ContainsFunc(cut.Value, func(v float32) bool { return v != 0 }) || !slices.Equal(cut.Policy, policy[:3*n]) {
			t.Errorf("planner %d capped at 3 plies: %d positions, values %v; want 3 positions, a draw, the game's first 3 policy rows", k, cut.Positions(), cut.Value)
		}
	}
}

func TestPlayTurnsCancelled(t *testing.T) {
	g := games.MustNew("connect4d:d=4")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := PlayTurns(ctx, g, turnSearchers(t, g, 1)[0], 0, 0); err == nil {
		t.Error("cancelled context: no error")
	}
}
