package search

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)

// minimax returns the exact value of s for the player to move (+1 win,
// 0 draw, -1 loss) by exhaustive search, and the set of optimal moves.
func minimax(s games.State) (float64, []games.Action) {
	if s.IsTerminal() {
		ret := make([]float64, 2)
		s.Returns(ret)
		// the player to move at a terminal state is not defined; the last
		// mover is (MoveNumber-1)%2, and we report from the other's view.
		mover := s.MoveNumber() % 2
		return ret[mover], nil
	}
	m := games.NewMask(s.Game().NumActions())
	s.Legal(m)
	best := -2.0
	var bestMoves []games.Action
	for a := range m.All() {
		c := s.Clone()
		c.Apply(a)
		v, _ := minimax(c)
		v = -v
		if v > best {
			best, bestMoves = v, []games.Action{a}
		} else if v == best {
			bestMoves = append(bestMoves, a)
		}
	}
	return best, bestMoves
}

func newAgent(t testing.TB, g games.Game, o Options, seed uint64) *Agent {
	t.Helper()
	a, err := NewAgent(g, o, seed)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// UCT with enough simulations never loses to perfect play, as either side.
func TestTicTacToeNeverLoses(t *testing.T) {
	g := games.MustNew("tictactoe")
	games_ := 6
	if testing.Short() {
		games_ = 2
	}
	for seed := range uint64(games_) {
		for side := range 2 {
			o := DefaultOptions()
			o.Sims = 3000
			a := newAgent(t, g, o, seed)
			s := g.NewInitialState()
			for !s.IsTerminal() {
				var act games.Action
				if s.CurrentPlayer() == side {
					var err error
					if act, err = a.Act(context.Background(), s, side); err != nil {
						t.Fatal(err)
					}
				} else {
					_, moves := minimax(s)
					act = moves[int(seed)%len(moves)]
				}
				s.Apply(act)
			}
			ret := make([]float64, 2)
			s.Returns(ret)
			if ret[side] < 0 {
				t.Errorf("seed %d: mcts as player %d lost to perfect play: %s", seed, side, s)
			}
		}
	}
}

// In hand-picked positions, the move must be one minimax calls optimal.
func TestTicTacToeTactics(t *testing.T) {
	g := games.MustNew("tictactoe")
	// Cells are 1..9 row by row; notation = moves played.
	cases := []struct{ moves, why string }{
		{"1425", "X wins at 3 (O threatens 6)"},
		{"152", "O must block at 3"},
		{"5137", "X must block O's 1-4-7 line at 4"},
		{"1529", "X wins at 3"},
		{"159", "O must answer the diagonal with an edge, not a corner"},
		{"5", "O must answer the centre with a corner"},
	}
	for _, c := range cases {
		s, err := g.ParseState(c.moves)
		if err != nil {
			t.Fatalf("%s: %v", c.moves, err)
		}
		want, best := minimax(s)
		if len(best) == 9-s.MoveNumber() {
			t.Fatalf("%s: every move is optimal; not a test", c.moves)
		}
		for _, rule := range []Rule{UCT, UCB1Tuned, PUCT, RAVE, PoolRAVE, AlphaAMAF} {
			o := DefaultOptions()
			o.Rule, o.Sims = rule, 4000
			a := newAgent(t, g, o, 7)
			act, err := a.Act(context.Background(), s, s.CurrentPlayer())
			if err != nil {
				t.Fatal(err)
			}
			ok := false
			for _, b := range best {
				ok = ok || b == act
			}
			if !ok {
				t.Errorf("%s (%s) %v: chose %s, optimal (value %v): %v", c.moves, c.why, rule, s.ActionString(act), want, best)
			}
		}
	}
}
