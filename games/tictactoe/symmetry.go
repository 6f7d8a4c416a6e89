package tictactoe

import (
	"sync"

	"github.com/canopy-go/canopy/games"
)

// Tic-tac-toe's declared symmetries are the seven non-identity symmetries
// of the square: three rotations and four reflections. The eight winning
// lines (rows, columns, diagonals) map onto one another under each, so the
// rules do. Cell (r, c) is action 3r+c; both observation planes move with
// the cells.

var (
	squareOnce sync.Once
	squareSyms []games.Symmetry
)

// squareMaps are the cell maps of the group, identity excluded.
var squareMaps = []struct {
	name string
	f    func(r, c int) (int, int)
}{
	{"rotate90", func(r, c int) (int, int) { return c, 2 - r }},
	{"rotate180", func(r, c int) (int, int) { return 2 - r, 2 - c }},
	{"rotate270", func(r, c int) (int, int) { return 2 - c, r }},
	{"mirror", func(r, c int) (int, int) { return r, 2 - c }},
	{"flip", func(r, c int) (int, int) { return 2 - r, c }},
	{"transpose", func(r, c int) (int, int) { return c, r }},
	{"antitranspose", func(r, c int) (int, int) { return 2 - c, 2 - r }},
}

// Symmetries implements games.Symmetric: the square's 7 symmetries
// besides the identity.
func (g *Game) Symmetries() []games.Symmetry {
	squareOnce.Do(func() {
		for _, m := range squareMaps {
			s, err := games.NewBoardSymmetry(m.name, g.ObservationShape(), g.NumActions(), m.f,
				func(a games.Action) games.Action {
					r, c := m.f(int(a)/3, int(a)%3)
					return games.Action(3*r + c)
				})
			if err != nil {
				panic(err) // the maps above are permutations
			}
			squareSyms = append(squareSyms, s)
		}
	})
	return squareSyms
}
