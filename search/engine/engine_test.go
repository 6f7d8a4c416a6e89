package engine

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/tictactoe"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
)

func newEngine(t testing.TB, spec string, seed uint64, opt Options) (games.Game, *Engine) {
	t.Helper()
	g := games.MustNew(spec)
	obs := 1
	for _, d := range g.ObservationShape() {
		obs *= d
	}
	be := nets.NewRandomBackend(obs, g.NumActions(), seed, nets.BackendOptions{})
	e, err := New(g, be, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return g, e
}

// syncNet is the test's own synchronous network evaluator: one backend
// call per leaf, value v for the mover and -v for the opponent, priors a
// softmax over the legal actions.
type syncNet struct {
	be         nets.Backend
	g          games.Game
	row, pol   []float32
	val        []float32
	mask       games.Mask
	evalsCount int
}

func (n *syncNet) Evaluate(c *search.EvalContext, s games.State, value []float64, priors []float32) bool {
	if s.IsTerminal() {
		c.Terminal(s, value)
		return false
	}
	p := s.CurrentPlayer()
	s.Observation(p, n.row)
	if err := n.be.Evaluate(context.Background(), 1, n.row, n.pol, n.val); err != nil {
		panic(err)
	}
	n.evalsCount++
	value[p], value[1-p] = float64(n.val[0]), -float64(n.val[0])
	if priors == nil {
		return false
	}
	s.Legal(n.mask)
	var sum float64
	for a := range n.mask.All() {
		sum += math.Exp(float64(n.pol[a]))
	}
	for a := range n.mask.All() {
		priors[a] = float32(math.Exp(float64(n.pol[a])) / sum)
	}
	return true
}

// The batched driver (one worker, one leaf in flight) must build exactly
// the tree of the synchronous search with an equivalent evaluator.
func TestMatchesSynchronousSearch(t *testing.T) {
	for _, moves := range []string{"", "4", "0 4 8"} {
		g, e := newEngine(t, "tictactoe", 7, Options{Workers: 1, Leaves: 1, Batch: 8, Wait: -1})
		s := g.NewInitialState()
		for _, m := range strings.Fields(moves) {
			a, _ := strconv.Atoi(m)
			s.Apply(games.Action(a))
		}
		o := search.DefaultOptions()
		o.Rule, o.Sims, o.ExpandVisits = search.PUCT, 300, 0
		be := nets.NewRandomBackend(18, 9, 7, nets.BackendOptions{})
		sn := &syncNet{be: be, g: g, row: make([]float32, 18), pol: make([]float32, 9), val: make([]float32, 1), mask: games.NewMask(9)}
		so := o
		so.Eval = sn
		st, err := search.New(g, so, 1)
		if err != nil {
			t.Fatal(err)
		}
		st.Search(context.Background(), s)
		want := st.RootStats(s.CurrentPlayer(), nil)

		bt, err := e.Analyze(context.Background(), s, o, 99)
		if err != nil {
			t.Fatal(err)
		}
		got := bt.RootStats(s.CurrentPlayer(), nil)
		if len(got) != len(want) {
			t.Fatalf("%q: %d root actions, want %d", moves, len(got), len(want))
		}
		for i := range want {
			w, x := want[i], got[i]
			if w.Action != x.Action || w.Visits != x.Visits || math.Abs(w.Q-x.Q) > 1e-6 || math.Abs(float64(w.Prior-x.Prior)) > 1e-6 {
				t.Errorf("%q action %d: batched %+v, synchronous %+v", moves, i, x, w)
			}
		}
		if c := e.Counters(); c.Evals != int64(sn.evalsCount) {
			t.Errorf("%q: batched made %d network evaluations, synchronous %d", moves, c.Evals, sn.evalsCount)
		}
	}
}

// Terminal leaves are valued by the rules: X to move with a win on the
// board gets Q exactly 1 for the winning move, and the value of the
// opponent's win reaches the tree with the right sign.
func TestTerminalValues(t *testing.T) {
	g, e := newEngine(t, "tictactoe", 3, Options{Workers: 2, Leaves: 4})
	s := g.NewInitialState()
	for _, a := range []games.Action{0, 3, 1, 4} { // X: 0,1; O: 3,4; X to move, 2 wins
		s.Apply(a)
	}
	o := search.DefaultOptions()
	o.Rule, o.Sims = search.PUCT, 400
	tr, err := e.Analyze(context.Background(), s, o, 5)
	if err != nil {
		t.Fatal(err)
	}
	st := tr.RootStats(0, nil)
	total := 0
	for _, x := range st {
		total += x.Visits
		if x.Action == 2 && x.Q != 1 {
			t.Errorf("winning move Q = %v, want exactly 1", x.Q)
		}
	}
	if st[0].Action != 2 {
		t.Errorf("most visited %v, want the win at 2 (%+v)", st[0].Action, st)
	}
	if total != 400 {
		t.Errorf("root visits %d, want 400", total)
	}
}

func TestFillValue(t *testing.T) {
	v := make([]float64, 2)
	fillValue(v, 1, 0.5)
	if v[0] != -0.5 || v[1] != 0.5 {
		t.Errorf("2 players: %v", v)
	}
	v = make([]float64, 3)
	fillValue(v, 0, 0.6)
	if math.Abs(v[0]-0.6) > 1e-7 || math.Abs(v[1]+0.3) > 1e-7 || math.Abs(v[2]+0.3) > 1e-7 {
		t.Errorf("3 players: %v", v)
	}
	fillValue(v, 2, 3) // clamped
	if v[2] != 1 {
		t.Errorf("clamp: %v", v)
	}
}
