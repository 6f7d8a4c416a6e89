package tictactoe

import (
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

func TestConformance(t *testing.T) {
	gametest.Run(t, games.MustNew("tictactoe"), gametest.Options{Games: 300})
}

func FuzzNotation(f *testing.F) { gametest.FuzzNotation(f, games.MustNew("tictactoe")) }

// Known counts (e.g. OEIS A008907 partial sums / the classic enumeration):
// 255168 complete games, of which 131184 are won by X, 77904 by O and
// 46080 drawn.
func TestAllGames(t *testing.T) {
	var xw, ow, dr int
	var walk func(s *State)
	walk = func(s *State) {
		if s.IsTerminal() {
			switch s.winner {
			case 1:
				xw++
			case 2:
				ow++
			default:
				dr++
			}
			return
		}
		m := games.NewMask(9)
		s.Legal(m)
		for a := range m.All() {
			s.Apply(a)
			walk(s)
			s.Undo(a)
		}
	}
	walk(&State{})
	if xw != 131184 || ow != 77904 || dr != 46080 {
		t.Errorf("X wins %d, O wins %d, draws %d; want 131184, 77904, 46080", xw, ow, dr)
	}
}
