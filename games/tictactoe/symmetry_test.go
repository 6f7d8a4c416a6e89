package tictactoe

import (
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

// The rules are the outside truth: each declared symmetry maps random games
// onto games with the same legal moves, observations and results, and the
// seven are distinct.
func TestSymmetriesFollowTheRules(t *testing.T) {
	g := &Game{}
	gametest.Symmetries(t, g, []string{"rotate90", "rotate180", "rotate270", "mirror", "flip", "transpose", "antitranspose"}, 30, 1)
	seen := map[[9]games.Action]string{{0, 1, 2, 3, 4, 5, 6, 7, 8}: "identity"}
	for _, s := range g.Symmetries() {
		var p [9]games.Action
		for a := range 9 {
			p[a] = s.Action(games.Action(a))
		}
		if other, ok := seen[p]; ok {
			t.Fatalf("%s maps actions as %s does", s.Name(), other)
		}
		seen[p] = s.Name()
	}
}
