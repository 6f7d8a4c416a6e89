package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
)

// matrixGame is a hand-built one-shot simultaneous game: player 0 picks
// a row U, M or D (actions 0-2), player 1 a column L or R (actions 0-1),
// and the returns are matrixPay (player 0's; player 1 gets the negation).
// R is player 1's dominant column (every row pays player 0 less under
// R), and player 0's best response to it is M, while against a uniform
// player 1 it would be U: a search must find the best response to the
// opponent's actual play. The equilibrium (M, R) is worth 0.3.
type matrixGame struct{}

var matrixPay = [3][2]float64{
	{1.0, -0.2}, // U
	{0.4, 0.3},  // M
	{0.0, -0.5}, // D
}

type matrixState struct {
	done   bool
	a0, a1 games.Action
}

func (matrixGame) Type() games.Type {
	return games.Type{Name: "matrix", Dynamics: games.Simultaneous, Chance: games.Deterministic,
		Information: games.PerfectInformation, Utility: games.ZeroSum, MinPlayers: 2, MaxPlayers: 2, MinReturn: -1, MaxReturn: 1}
}
func (matrixGame) Spec() string                 { return "matrix" }
func (matrixGame) NumPlayers() int              { return 2 }
func (matrixGame) NumActions() int              { return 3 }
func (matrixGame) MaxGameLength() int           { return 2 }
func (matrixGame) ObservationShape() []int      { return []int{2} }
func (matrixGame) NewInitialState() games.State { return &matrixState{} }
func (matrixGame) ParseState(string) (games.State, error) {
	return nil, fmt.Errorf("matrix: no notation")
}
func (s *matrixState) Game() games.Game          { return matrixGame{} }
func (s *matrixState) IsTerminal() bool          { return s.done }
func (s *matrixState) Clone() games.State        { c := *s; return &c }
func (s *matrixState) CloneInto(dst games.State) { *dst.(*matrixState) = *s }
func (s *matrixState) Hash() uint64              { return uint64(s.a0)<<3 | uint64(s.a1)<<1 | b2u(s.done) }
func (s *matrixState) MoveNumber() int {
	if s.done {
		return 2
	}
	return 0
}
func (s *matrixState) String() string                     { return fmt.Sprint(s.done, s.a0, s.a1) }
func (s *matrixState) Apply(games.Action)                 { panic("matrix: simultaneous moves only") }
func (s *matrixState) ActionString(a games.Action) string { return strconv.Itoa(int(a)) }
func (s *matrixState) ParseAction(x string) (games.Action, error) {
	n, err := strconv.Atoi(x)
	return games.Action(n), err
}
func (s *matrixState) CurrentPlayer() int {
	if s.done {
		return games.TerminalPlayer
	}
	return games.SimultaneousPlayer
}
func (s *matrixState) Legal(dst games.Mask) { dst.Clear() }
func (s *matrixState) LegalFor(p int, dst games.Mask) {
	dst.Clear()
	if s.done {
		return
	}
	for a := range 3 - p { // player 0: three rows, player 1: two columns
		dst.Set(games.Action(a))
	}
}
func (s *matrixState) ApplyJoint(j []games.Action) { s.a0, s.a1, s.done = j[0], j[1], true }
func (s *matrixState) Returns(dst []float64) {
	clear(dst[:2])
	if s.done {
		dst[0] = matrixPay[s.a0][s.a1]
		dst[1] = -dst[0]
	}
}

// Observation is (viewer, the game is over).
func (s *matrixState) Observation(player int, dst []float32) {
	dst[0], dst[1] = float32(player), float32(b2u(s.done))
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// viewNet is a network for matrixGame whose policy depends on the viewer
// (the observation's first entry): from player 0's view the logits are
// (0, 0, ln 3), so its priors over U, M, D are (0.2, 0.2, 0.6); from
// player 1's view (ln 4, 0, 0), over L, R (0.8, 0.2). Read from the wrong
// view, player 1's priors would be (0.5, 0.5). Its value is
// matrixViewV[viewer] from the viewer's view (players = 1) or, with
// players = 2, the row (matrixViewV[viewer], -0.1).
type viewNet struct{ players int }

var matrixViewV = [2]float32{0.25, -0.75}

func (n *viewNet) Name() string        { return "view" }
func (n *viewNet) Shape() (int, int)   { return 2, 3 }
func (n *viewNet) PreferredBatch() int { return 8 }
func (n *viewNet) MaxBatch() int       { return 64 }
func (n *viewNet) ValueSize() int      { return n.players }
func (n *viewNet) Evaluate(_ context.Context, batch int, input, policy, value []float32) error {
	for i := range batch {
		viewer := int(input[i*2])
		pol := policy[i*3 : (i+1)*3]
		if viewer == 0 {
			pol[0], pol[1], pol[2] = 0, 0, float32(math.Log(3))
		} else {
			pol[0], pol[1], pol[2] = float32(math.Log(4)), 0, 0
		}
		row := value[i*n.players : (i+1)*n.players]
		row[0] = matrixViewV[viewer]
		if n.players > 1 {
			row[1] = -0.1
		}
	}
	return nil
}

// matrixSearch runs one az search of the matrix game's root for player.
func matrixSearch(t *testing.T, net nets.Backend, sims, leaves, player int) []search.ActionStat {
	t.Helper()
	g := matrixGame{}
	e, err := New(g, net, Options{Workers: 1, Batch: 8, Wait: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st := DefaultSettings()
	st.Sims, st.Leaves = sims, leaves
	s, err := NewSearcher(e, st.SearchOptions(), 5)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := s.Search(context.Background(), g.NewInitialState(), player)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clone(stats)
}

func priorOf(stats []search.ActionStat, a games.Action) float32 {
	for _, x := range stats {
		if x.Action == a {
			return x.Prior
		}
	}
	return -1
}

// Decoupled PUCT at a joint node: each player's edges take the priors of
// the network evaluated from that player's own view, over that player's
// own legal actions, in the batched jobs and in the mcts agent's network
// evaluator alike.
func TestSimultaneousPriorsPerSeat(t *testing.T) {
	want := [2][]float32{{0.2, 0.2, 0.6}, {0.8, 0.2}}
	check := func(name string, p int, stats []search.ActionStat) {
		t.Helper()
		if len(stats) != len(want[p]) {
			t.Fatalf("%s, player %d: %d root actions, want %d (%+v)", name, p, len(stats), len(want[p]), stats)
		}
		for a, w := range want[p] {
			if got := priorOf(stats, games.Action(a)); math.Abs(float64(got-w)) > 1e-6 {
				t.Errorf("%s, player %d: prior of %d is %v, want %v (from its own view)", name, p, a, got, w)
			}
		}
	}
	for p := range 2 {
		check("az", p, matrixSearch(t, &viewNet{players: 1}, 8, 1, p))
		check("az, per-player head", p, matrixSearch(t, &viewNet{players: 2}, 8, 4, p))
	}
	g := matrixGame{}
	e, err := New(g, &viewNet{players: 1}, Options{Workers: 1, Batch: 8, Wait: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	o := search.DefaultOptions()
	o.Rule, o.Sims, o.ExpandVisits, o.Eval = search.PUCT, 8, 0, NewEngineEvaluator(e)
	tr, err := search.New(g, o, 3)
	if err != nil {
		t.Fatal(err)
	}
	tr.Search(context.Background(), g.NewInitialState())
	for p := range 2 {
		check("mcts:eval=NET", p, tr.RootStats(p, nil))
	}
}

// The decoupled search finds the known best response: player 1 plays its
// dominant column R, player 0 the row M that answers it (not U, the
// answer to a uniform opponent, nor D, which its network prefers), and
// the root's value is the equilibrium's 0.3.
func TestSimultaneousBestResponse(t *testing.T) {
	for _, leaves := range []int{1, 4} {
		s0 := matrixSearch(t, &viewNet{players: 1}, 3000, leaves, 0)
		s1 := matrixSearch(t, &viewNet{players: 1}, 3000, leaves, 1)
		if a := mostVisited(s0); a != 1 {
			t.Errorf("leaves=%d: player 0 plays %d, want M (1): %+v", leaves, a, s0)
		}
		if a := mostVisited(s1); a != 1 {
			t.Errorf("leaves=%d: player 1 plays %d, want R (1): %+v", leaves, a, s1)
		}
		for _, x := range s0 {
			if x.Action == 1 && math.Abs(x.Q-0.3) > 0.05 {
				t.Errorf("leaves=%d: player 0's Q of M %.3f, want the equilibrium value 0.3", leaves, x.Q)
			}
		}
	}
}

// simValues combines every player's own evaluation of a simultaneous
// state (hand-worked values).
func TestSimValues(t *testing.T) {
	v := make([]float64, 2)
	// Scalar head: player 0 says 0.25, player 1 says -0.75 (each of
	// itself): player 0 gets (0.25 - (-0.75))/2 = 0.5, player 1 -0.5.
	simValues(v, []float32{0.25, -0.75}, nil, 1, false)
	if math.Abs(v[0]-0.5) > 1e-12 || math.Abs(v[1]+0.5) > 1e-12 {
		t.Errorf("scalar, 2 players: %v, want [0.5 -0.5]", v)
	}
	v = make([]float64, 3)
	// Three players, scalar: 0.6, 0, -0.3. Player 0: (0.6 - (0 - 0.3)/2)/3
	// = 0.75/3 = 0.25; player 1: (0 - 0.3/2)/3 = -0.05; player 2: (-0.3 -
	// 0.6/2)/3 = -0.2.
	simValues(v, []float32{0.6, 0, -0.3}, nil, 1, false)
	for q, w := range []float64{0.25, -0.05, -0.2} {
		if math.Abs(v[q]-w) > 1e-6 {
			t.Errorf("scalar, 3 players: %v, want [0.25 -0.05 -0.2]", v)
			break
		}
	}
	// Per-player head, MaxN: each player's value is the mean of every
	// row's entry for it, clamped. Row 0 (player 0's view) lists players
	// 0, 1, 2: 0.6, -0.2, -0.4; row 1 lists players 1, 2, 0: 2 (clamped
	// to 1), -0.5, -0.7; row 2 lists 2, 0, 1: -0.3, 0.3, 0.1. Player 0:
	// (0.6 - 0.7 + 0.3)/3 = 0.2/3; player 1: (-0.2 + 1 + 0.1)/3 = 0.3;
	// player 2: (-0.4 - 0.5 - 0.3)/3 = -0.4. (Each player's own entry
	// alone, the rule before, would give 0.6, 1, -0.3.)
	simValues(v, []float32{0.6, 2, -0.3}, []float32{0.6, -0.2, -0.4, 2, -0.5, -0.7, -0.3, 0.3, 0.1}, 3, false)
	for q, w := range []float64{0.2 / 3, 0.3, -0.4} {
		if math.Abs(v[q]-w) > 1e-6 {
			t.Errorf("per-player head: %v, want [0.0667 0.3 -0.4]", v)
			break
		}
	}
}
