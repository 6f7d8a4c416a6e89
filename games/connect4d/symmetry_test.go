package connect4d

import (
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

func TestMirrorSymmetry(t *testing.T) {
	for _, d := range []int{2, 3, 5} {
		g, err := New(d)
		if err != nil {
			t.Fatal(err)
		}
		gametest.Symmetries(t, g, []string{"mirror"}, 100, uint64(d))
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
	if err := gametest.CheckSymmetry(g, bad, games.NewRand(1), 5); err == nil {
		t.Fatal("CheckSymmetry accepted reversing the board order")
	}
}
