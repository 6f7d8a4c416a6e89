package tetrislink

import (
	"strings"
	"sync"

	"github.com/canopy-go/canopy/games"
)

// Tetris Link's declared symmetry is the left-right mirror of the board,
// column c -> Width-1-c. Pieces fall straight down and the scoring rules
// (groups of edge-adjacent cells, empty squares covered) know no left or
// right, and every shape's set of orientations is closed under the mirror
// (S <-> Z and L <-> J are orientations of one shape, T and the others map
// to themselves), so each placement maps to one of the same shape: the
// mirrored orientation dropped at column Width-w-x, for an orientation of
// width w dropped at column x. Ids of drops that never fit (x > Width-w)
// map to the same column of the mirrored orientation, which has the same
// width, so the action map is a permutation of all NumActionIDs ids.
// Flipping rows is no symmetry (gravity), nor is exchanging players.
//
// In the observation ([6*players, Height, Width]) every plane is mirrored;
// the pieces-left planes are constant and unchanged.

// mirrors caches the symmetry per player count (built on first use).
var mirrors [MaxPlayers + 1]struct {
	once sync.Once
	syms []games.Symmetry
}

// mirrorOrients returns, per orientation o, the orientation whose picture
// is o's mirrored (built on first use, not at start-up).
var mirrorOrients = sync.OnceValue(func() (m [NumOrients]uint8) {
	var flat []string
	for _, pics := range orientPictures {
		flat = append(flat, pics...)
	}
	for o, pic := range flat {
		rows := strings.Split(pic, "/")
		for i, r := range rows {
			b := []byte(r)
			for j, k := 0, len(b)-1; j < k; j, k = j+1, k-1 {
				b[j], b[k] = b[k], b[j]
			}
			rows[i] = string(b)
		}
		mirrored, found := strings.Join(rows, "/"), false
		for q, other := range flat {
			if other == mirrored && orients[q].shape == orients[o].shape {
				m[o], found = uint8(q), true
			}
		}
		if !found {
			panic("tetrislink: orientation " + pic + " has no mirror image in its shape")
		}
	}
	return m
})

// Symmetries implements games.Symmetric: the left-right mirror.
func (g *Game) Symmetries() []games.Symmetry {
	m := &mirrors[g.players]
	m.once.Do(func() {
		mirrorOrient := mirrorOrients()
		s, err := games.NewBoardSymmetry("mirror", g.ObservationShape(), g.NumActions(),
			func(r, c int) (int, int) { return r, Width - 1 - c },
			func(a games.Action) games.Action {
				o, x := int(actOrient[a]), int(actX[a])
				mo, w := int(mirrorOrient[o]), int(orients[o].w)
				if x <= Width-w {
					x = Width - w - x
				}
				return games.Action(mo*Width + x)
			})
		if err != nil {
			panic(err) // the maps above are permutations
		}
		m.syms = []games.Symmetry{s}
	})
	return m.syms
}
