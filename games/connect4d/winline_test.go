package connect4d

import (
	"slices"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// With 4 boards, player 0 ends with a stone in column a of board k at row k
// from the bottom (k = 0..3), player 1 filling the cells below: the 3-D line
// is at observation cells (5-k)*28 + k*7: 140, 119, 98, 77.
func TestWinningLine(t *testing.T) {
	g, err := New(4)
	if err != nil {
		t.Fatal(err)
	}
	s := g.NewInitialState().(*State)
	var wl games.WinningLiner = s
	// One turn per row: the column played on boards 0..3.
	turns := [][4]int{{0, 6, 6, 6}, {6, 0, 0, 0}, {5, 0, 5, 5}, {5, 5, 0, 0}, {4, 4, 0, 4}, {4, 4, 4, 0}, {3, 3, 3, 0}}
	for _, turn := range turns {
		for b, c := range turn {
			if wl.WinningLine() != nil {
				t.Fatalf("a line before the end")
			}
			s.Apply(games.Action(b*Cols + c))
		}
	}
	if !s.IsTerminal() || s.Winner() != 0 {
		t.Fatalf("player 0 has not won: %s", s.Draw(-1))
	}
	if got := s.WinningLine(); !slices.Equal(got, []int{77, 98, 119, 140}) {
		t.Errorf("winning line %v, want [77 98 119 140]", got)
	}
}
