package strands

import (
	"sync"

	"github.com/canopy-go/canopy/games"
)

// Strands' declared symmetries are the eleven non-identity symmetries of
// the regular hexagon (the dihedral group of order 12): five rotations by
// multiples of 60 degrees and six reflections. The printed numbers depend
// only on a cell's ring and on whether it is a corner of the outer ring
// (ringLabels), both invariant under these maps, and adjacency is cube
// distance 1, which they preserve; so the rules, the group sizes that
// decide the game and every observation plane map onto themselves.
//
// In cube coordinates (q, r, s), q+r+s = 0, a rotation by 60 degrees is
// (q, r, s) -> (-r, -s, -q) and the reflection is (q, r, s) -> (q, s, r).
// Board cells (x, y) of the W x W observation array have q = y-(Side-1),
// r = x-(Side-1); the array's off-board corners map to themselves (they
// are zero in every plane but the constant one). Action a (cell a) maps to
// the cell its position maps to.

// symmetries caches the symmetries per board side (built on first use).
var symmetries [7]struct {
	once sync.Once
	syms []games.Symmetry
}

// symmetryNames names the element rotations k (0..5) x reflection m (0, 1)
// of the group, identity (k = 0, m = 0) first.
var symmetryNames = [2][6]string{
	{"identity", "rotate60", "rotate120", "rotate180", "rotate240", "rotate300"},
	{"mirror", "mirror-rotate60", "mirror-rotate120", "mirror-rotate180", "mirror-rotate240", "mirror-rotate300"},
}

// hexMap applies the reflection m times (0 or 1) and then k rotations by
// 60 degrees to the cube coordinates (q, r), returning the image's (q, r).
func hexMap(q, r, k, m int) (int, int) {
	s := -q - r
	if m == 1 {
		r, s = s, r
	}
	for range k {
		q, r, s = -r, -s, -q
	}
	return q, r
}

// Symmetries implements games.Symmetric: the rotations and reflections of
// the hexagon (11, the identity excluded).
func (g *Game) Symmetries() []games.Symmetry {
	b := g.b
	c := &symmetries[b.Side]
	c.once.Do(func() {
		off := b.Side - 1
		for m := range 2 {
			for k := range 6 {
				if k == 0 && m == 0 {
					continue
				}
				cell := func(x, y int) (int, int) {
					if b.At(x, y) < 0 {
						return x, y
					}
					q, r := hexMap(y-off, x-off, k, m)
					return r + off, q + off
				}
				s, err := games.NewBoardSymmetry(symmetryNames[m][k], g.ObservationShape(), g.NumActions(), cell,
					func(a games.Action) games.Action {
						x, y := cell(int(b.X[a]), int(b.Y[a]))
						return games.Action(b.At(x, y))
					})
				if err != nil {
					panic(err) // the maps above are permutations of the board's cells
				}
				c.syms = append(c.syms, s)
			}
		}
	})
	return c.syms
}
