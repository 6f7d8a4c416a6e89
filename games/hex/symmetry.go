package hex

import (
	"sync"

	"github.com/canopy-go/canopy/games"
)

// Hex's declared symmetry is the rotation of the board by 180 degrees,
// (r, c) -> (n-1-r, n-1-c). The neighbour offsets (0,±1), (±1,0), (-1,+1),
// (+1,-1) are closed under negation, so adjacency is preserved; the top
// and bottom rows swap, as do the left and right columns, so each player
// keeps their own pair of edges. It commutes with the swap rule's
// transposition ((r, c) -> (c, r)), so the swap action maps to itself.
// The observation's planes rotate the same way; plane 2 (constant) is
// unchanged. Cell action a = r*n+c maps to n*n-1-a.
//
// Transposition is not a symmetry on its own: it exchanges the players'
// goals (it would need the players swapped as well).

// rotations caches the symmetry per (size, swap) (built on first use).
var rotations [MaxSize + 1][2]struct {
	once sync.Once
	syms []games.Symmetry
}

// Symmetries implements games.Symmetric: the 180-degree rotation.
func (g *Game) Symmetries() []games.Symmetry {
	sw := 0
	if g.swap {
		sw = 1
	}
	r := &rotations[g.n][sw]
	r.once.Do(func() {
		n, nn := g.n, g.nn
		s, err := games.NewBoardSymmetry("rotate180", g.ObservationShape(), g.NumActions(),
			func(r, c int) (int, int) { return n - 1 - r, n - 1 - c },
			func(a games.Action) games.Action {
				if int(a) == nn {
					return a // swap
				}
				return games.Action(nn-1) - a
			})
		if err != nil {
			panic(err) // the maps above are permutations
		}
		r.syms = []games.Symmetry{s}
	})
	return r.syms
}
