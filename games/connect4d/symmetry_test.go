package connect4d

import (
	"testing"

	"github.com/canopy-go/canopy/games"
)

func TestMirrorSymmetry(t *testing.T) {
	n := 100
	if testing.Short() {
		n = 20
	}
	for _, d := range []int{2, 3, 5} {
		g, err := New(d)
		if err != nil {
			t.Fatal(err)
		}
		syms := games.SymmetriesOf(g)
		if len(syms) != 1 {
			t.Fatalf("d=%d: %d symmetries, want 1", d, len(syms))
		}
		if err := games.CheckSymmetry(g, syms[0], games.NewRand(uint64(d)), n); err != nil {
			t.Fatal(err)
		}
		if &g.Symmetries()[0] != &syms[0] {
			t.Errorf("d=%d: Symmetries builds a new slice per call", d)
		}
	}
}

// Reversing the board order is not a symmetry (the k-th stone of a turn
// goes to board k); the check must say so.
func TestBoardReversalIsNotASymmetry(t *testing.T) {
	g, _ := New(3)
	w := 3 * Cols
	bad, err := games.NewBoardSymmetry("reverse-boards", g.ObservationShape(), g.NumActions(),
		func(r, x int) (int, int) { return r, w - 1 - x },
		func(a games.Action) games.Action { return games.Action(g.NumActions()-1) - a })
	if err != nil {
		t.Fatal(err)
	}
	if err := games.CheckSymmetry(g, bad, games.NewRand(1), 5); err == nil {
		t.Fatal("CheckSymmetry accepted reversing the board order")
	}
}
