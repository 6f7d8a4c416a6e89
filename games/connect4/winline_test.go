package connect4

import (
	"slices"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// Columns 1, 2, 1, 2, 1, 2, 1: four of player 0 in column 1, rows 0-3 from
// the bottom: observation cells 0, 7, 14, 21.
func TestWinningLine(t *testing.T) {
	s := New().NewInitialState().(*State)
	var wl games.WinningLiner = s
	for i, a := range []games.Action{0, 1, 0, 1, 0, 1, 0} {
		if wl.WinningLine() != nil {
			t.Fatalf("a line before move %d", i+1)
		}
		s.Apply(a)
	}
	if got := s.WinningLine(); !slices.Equal(got, []int{0, 7, 14, 21}) {
		t.Errorf("winning line %v, want [0 7 14 21]", got)
	}
}
