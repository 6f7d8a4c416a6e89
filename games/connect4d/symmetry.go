package connect4d

import (
	"sync"

	"github.com/canopy-go/canopy/games"
)

// Connect4d's declared symmetry is the mirror of the columns of every
// board at once: (board, row, column) -> (board, row, 6-column). The six
// winning directions (board step 1; row step ±1; column step -1, 0 or +1)
// map onto themselves, gravity acts on rows, and the board order (the k-th
// stone of a turn goes to board k) is untouched, so it is a symmetry of the
// rules. Reversing the board order is NOT one (turns fill the boards in
// order), nor is any reflection of rows (gravity).
//
// In the observation ([3, 6, 7d], board b in tensor columns 7b..7b+6)
// the mirror reflects each board's block of columns in place; plane 2,
// ones over the board to play in, covers whole blocks and is unchanged.
// Action b*7+c maps to b*7+6-c.

// mirrors caches the symmetry per d (built on first use).
var mirrors [MaxD + 1]struct {
	once sync.Once
	syms []games.Symmetry
}

// Symmetries implements games.Symmetric: the column mirror.
func (g *Game) Symmetries() []games.Symmetry {
	m := &mirrors[g.d]
	m.once.Do(func() {
		s, err := games.NewBoardSymmetry("mirror", g.ObservationShape(), g.NumActions(),
			func(r, x int) (int, int) { return r, x - x%Cols + Cols - 1 - x%Cols },
			func(a games.Action) games.Action { return a - a%Cols + Cols - 1 - a%Cols })
		if err != nil {
			panic(err) // the maps above are permutations
		}
		m.syms = []games.Symmetry{s}
	})
	return m.syms
}
