package search

import (
	"context"
	"math"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4d"
	_ "github.com/canopy-go/canopy/games/strands"
)

// In a 3-player Tetris Link game every root edge accumulates the value of
// the player to move, and the backed-up values of one simulation are the
// rescaled returns: the root's mean Q equals the mean over its edges.
func TestMultiPlayerBackupUsesMover(t *testing.T) {
	g := games.MustNew("tetrislink:players=3")
	o := DefaultOptions()
	o.Sims = 300
	tr, err := New(g, o, 3)
	if err != nil {
		t.Fatal(err)
	}
	s := g.NewInitialState()
	if n := tr.Search(context.Background(), s); n != 300 {
		t.Fatalf("ran %d simulations, want 300", n)
	}
	st := tr.RootStats(s.CurrentPlayer(), nil)
	total := 0
	for _, x := range st {
		total += x.Visits
		if x.Q < -1-1e-9 || x.Q > 1+1e-9 {
			t.Errorf("Q %v out of [-1, 1]", x.Q)
		}
	}
	if total != 300 {
		t.Errorf("root visits %d, want 300", total)
	}
	// Check the per-mover bookkeeping on one path by hand: run a single
	// simulation through the public pipeline with a known value vector.
	w := tr.NewWalker(9)
	if !tr.SelectLeaf(w) {
		t.Fatal("leaf should need an evaluation")
	}
	var before []int64
	for _, stp := range w.path {
		before = append(before, tr.a.hot[stp.edge].w)
	}
	value := []float64{0.5, -0.25, 1}
	tr.Backup(w, value, nil)
	for i, stp := range w.path {
		mover := tr.a.nodes[stp.node].player
		got := float64(tr.a.hot[stp.edge].w-before[i]) / valueScale
		if math.Abs(got-value[mover]) > 1e-6 {
			t.Errorf("step %d (mover %d): added %v, want %v", i, mover, got, value[mover])
		}
	}
}

// Multi-action turns: the mover repeats within a turn, and each step of a
// path must accumulate the value of the player to move at that step's
// state (replayed from the root), not an alternating player.
func TestMultiActionMover(t *testing.T) {
	for _, gs := range []string{"connect4d", "strands"} {
		g, err := games.New(gs)
		if err != nil {
			t.Fatal(err)
		}
		o := DefaultOptions()
		o.Sims = 300
		tr, err := New(g, o, 1)
		if err != nil {
			t.Fatal(err)
		}
		root := g.NewInitialState()
		tr.Search(context.Background(), root)
		w := tr.NewWalker(2)
		repeats := 0
		for range 50 {
			if tr.SelectLeaf(w) {
				tr.opt.Eval.Evaluate(w.Ctx, w.State, w.Value, nil)
			}
			s := root.Clone()
			prev := -1
			for _, stp := range w.path {
				if int(stp.player) != s.CurrentPlayer() {
					t.Fatalf("%s: step credits player %d, but %d is to move", gs, stp.player, s.CurrentPlayer())
				}
				if int(stp.player) == prev {
					repeats++
				}
				prev = int(stp.player)
				s.Apply(tr.a.edges[stp.edge].action)
			}
			tr.Backup(w, w.Value, nil)
		}
		if repeats == 0 && gs == "connect4d" {
			t.Errorf("%s: no path had two consecutive steps by one player; multi-action turns not exercised", gs)
		}
	}
}
