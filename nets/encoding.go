package nets

import (
	"fmt"

	"github.com/canopy-go/canopy/games"
)

// Encoding is how a net's input is made from a state: the game's own
// observation from the mover's side (State.Observation), optionally
// followed by one more plane, or the game's flat feature encoding. A
// plain net's input size tells which of the first two it was built for
// (EncodingFor); recurrent nets read the features.
type Encoding struct {
	// Features replaces the observation by the game's flat feature
	// encoding (FeatureState.Features: study 000's board planes, hand
	// one-hot and rank counts for games/sequence), the input of a
	// Recurrent net. It excludes LegalPlane.
	Features bool
	// LegalPlane appends study 002's broadcast legal-move plane (section
	// 4.1, input channel 2) after the game's planes: for a game whose
	// actions are the board's columns (NumActions = width, Connect Four)
	// every cell of a legal column is 1, and for one whose actions are
	// its cells (NumActions = height x width) every legal cell is 1; all
	// other cells are 0.
	LegalPlane bool
}

// boardDims is the height and width of g's observation (its last two
// dimensions; 1 x n for a 1-D observation).
func boardDims(g games.Game) (h, w int) {
	s := g.ObservationShape()
	if len(s) < 2 {
		return 1, games.ObservationSize(g)
	}
	return s[len(s)-2], s[len(s)-1]
}

// Check reports whether e fits g.
func (e Encoding) Check(g games.Game) error {
	if e.Features {
		if e.LegalPlane {
			return fmt.Errorf("nets: the feature encoding has no legal-move plane")
		}
		_, okG := g.(FeatureGame)
		_, okS := g.NewInitialState().(FeatureState)
		if !okG || !okS {
			return fmt.Errorf("nets: game %s has no flat feature encoding (FeatureSize and Features)", g.Spec())
		}
		return nil
	}
	if !e.LegalPlane {
		return nil
	}
	h, w := boardDims(g)
	if n := g.NumActions(); n != w && n != h*w {
		return fmt.Errorf("nets: game %s has %d actions on a %dx%d board: the legal-move plane needs one action per column (%d) or per cell (%d)",
			g.Spec(), n, h, w, w, h*w)
	}
	return nil
}

// Size is the length of an observation of g under e.
func (e Encoding) Size(g games.Game) int {
	if fg, ok := g.(FeatureGame); ok && e.Features {
		return fg.FeatureSize()
	}
	n := games.ObservationSize(g)
	if e.LegalPlane {
		h, w := boardDims(g)
		n += h * w
	}
	return n
}

// Encoder writes observations of one game under one Encoding. It holds
// no scratch, so one Encoder may be used concurrently.
type Encoder struct {
	enc                 Encoding
	obsSize, h, w, nAct int
}

// NewEncoder returns the encoder of e for g.
func NewEncoder(g games.Game, e Encoding) (*Encoder, error) {
	if err := e.Check(g); err != nil {
		return nil, err
	}
	h, w := boardDims(g)
	c := &Encoder{enc: e, obsSize: games.ObservationSize(g), h: h, w: w, nAct: g.NumActions()}
	if e.Features {
		c.obsSize = g.(FeatureGame).FeatureSize()
	}
	return c, nil
}

// Size is the length of one observation.
func (c *Encoder) Size() int {
	if c.enc.LegalPlane {
		return c.obsSize + c.h*c.w
	}
	return c.obsSize
}

// Encode writes player's observation of s into dst (Size values); legal
// is the legal actions of s. It allocates nothing.
func (c *Encoder) Encode(s games.State, player int, legal games.Mask, dst []float32) {
	if c.enc.Features {
		s.(FeatureState).Features(player, dst[:c.obsSize])
		return
	}
	s.Observation(player, dst[:c.obsSize])
	if !c.enc.LegalPlane {
		return
	}
	h, w := c.h, c.w
	plane := dst[c.obsSize : c.obsSize+h*w]
	clear(plane)
	if c.nAct == w {
		for a := range legal.All() {
			for r := range h {
				plane[r*w+int(a)] = 1
			}
		}
		return
	}
	for a := range legal.All() {
		plane[a] = 1
	}
}

// EncodingFor returns the encoding of a net with inputSize inputs
// (Net.InputSize) playing g: the game's observation alone when the input
// is that size, with the legal-move plane when it is one board plane
// larger. Nets saved before the legal-move plane existed have the first
// shape and keep working.
func EncodingFor(g games.Game, inputSize int) (Encoding, error) {
	in := inputSize
	if plain := (Encoding{}); in == plain.Size(g) {
		return plain, nil
	}
	lp := Encoding{LegalPlane: true}
	if in == lp.Size(g) {
		return lp, lp.Check(g)
	}
	return Encoding{}, fmt.Errorf("nets: the net takes %d inputs; game %s has %d-value observations (%d with the legal-move plane)",
		in, g.Spec(), games.ObservationSize(g), lp.Size(g))
}
