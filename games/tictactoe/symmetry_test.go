package tictactoe

import (
	"testing"

	"github.com/canopy-go/canopy/games"
)

// The rules are the outside truth: each declared symmetry maps random games
// onto games with the same legal moves, observations and results, and the
// seven are distinct.
func TestSymmetriesFollowTheRules(t *testing.T) {
	g := &Game{}
	syms := games.SymmetriesOf(g)
	if len(syms) != 7 {
		t.Fatalf("%d symmetries, want the square's 7 besides the identity", len(syms))
	}
	seen := map[[9]games.Action]string{{0, 1, 2, 3, 4, 5, 6, 7, 8}: "identity"}
	for i, s := range syms {
		var p [9]games.Action
		for a := range 9 {
			p[a] = s.Action(games.Action(a))
		}
		if other, ok := seen[p]; ok {
			t.Fatalf("%s maps actions as %s does", s.Name(), other)
		}
		seen[p] = s.Name()
		if err := games.CheckSymmetry(g, s, games.NewRand(uint64(i)), 30); err != nil {
			t.Fatal(err)
		}
	}
}
