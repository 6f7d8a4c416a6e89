package hex

import (
	"slices"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// On 3x3, Black (top to bottom) plays b1 b2 b3 while White plays a1 a2;
// Black's chain is cells 1, 4, 7 (r*3+c). A stone off the chain (c1) is
// not part of the line.
func TestWinningLine(t *testing.T) {
	g, err := New(3, false)
	if err != nil {
		t.Fatal(err)
	}
	s := g.NewInitialState().(*State)
	var wl games.WinningLiner = s
	for _, m := range []string{"b1", "a1", "c1", "a2", "b2", "c3", "b3"} {
		if wl.WinningLine() != nil {
			t.Fatalf("a line before %s", m)
		}
		a, err := s.ParseAction(m)
		if err != nil {
			t.Fatal(err)
		}
		s.Apply(a)
	}
	if !s.IsTerminal() {
		t.Fatal("Black has not won")
	}
	if got := s.WinningLine(); !slices.Equal(got, []int{1, 4, 7}) {
		t.Errorf("winning line %v, want [1 4 7]", got)
	}
}
