package games

import (
	"fmt"
)

// Symmetric is implemented by games whose rules are invariant under a
// relabelling of the board, such as Connect Four's left-right mirror. The
// capability sits on the Game, not the State: a symmetry is a property of
// the rules and must hold at every reachable state, so code that sees no
// State at all (training on recorded positions) can use it.
//
// Games that do not implement Symmetric have no declared symmetry; data
// augmentation then leaves their samples as they are.
type Symmetric interface {
	Game
	// Symmetries returns the game's symmetries other than the identity,
	// the same slice on every call. Callers must not modify it.
	Symmetries() []Symmetry
}

// SymmetriesOf returns g's declared symmetries (identity excluded), or nil
// when g does not implement Symmetric.
func SymmetriesOf(g Game) []Symmetry {
	if s, ok := g.(Symmetric); ok {
		return s.Symmetries()
	}
	return nil
}

// Symmetry is one symmetry of a game: a permutation of the elements of the
// observation tensor together with a permutation of the action ids such
// that, for every reachable state s, playing the mapped actions from the
// initial state reaches a state s' where
//
//   - s' has the same player to move, terminal status and returns as s;
//   - action a is legal in s exactly when Action(a) is legal in s';
//   - for every player p, s'.Observation(p) is Observation applied to
//     s.Observation(p).
//
// A policy over actions maps by the same action permutation (Policy).
// gametest.CheckSymmetry verifies these properties on random games.
//
// A Symmetry is immutable once built by NewSymmetry or NewBoardSymmetry
// and safe for concurrent use; its methods do not allocate. The zero value
// is the identity on empty tensors and is of no use.
type Symmetry struct {
	name string
	obs  []int32 // obs[i]: where element i of an observation goes
	act  []int32 // act[a]: the image of action a
}

// NewSymmetry builds a symmetry from two permutations given as images:
// element i of an observation moves to obsImage[i], and action a maps to
// actionImage[a]. Each must be a permutation of 0..len-1.
func NewSymmetry(name string, obsImage, actionImage []int) (Symmetry, error) {
	s := Symmetry{name: name, obs: make([]int32, len(obsImage)), act: make([]int32, len(actionImage))}
	if err := fillPermutation(s.obs, obsImage); err != nil {
		return Symmetry{}, fmt.Errorf("symmetry %s: observation map: %v", name, err)
	}
	if err := fillPermutation(s.act, actionImage); err != nil {
		return Symmetry{}, fmt.Errorf("symmetry %s: action map: %v", name, err)
	}
	return s, nil
}

func fillPermutation(dst []int32, image []int) error {
	seen := make([]bool, len(image))
	for i, j := range image {
		if j < 0 || j >= len(image) {
			return fmt.Errorf("element %d maps to %d, outside [0, %d)", i, j, len(image))
		}
		if seen[j] {
			return fmt.Errorf("two elements map to %d: not a permutation", j)
		}
		seen[j] = true
		dst[i] = int32(j)
	}
	return nil
}

// NewBoardSymmetry builds a symmetry of a game whose observation has shape
// [planes..., height, width] (at least 2 dimensions) and that transforms
// every plane by the same cell map: the value at (r, c) of each plane
// moves to cell(r, c). action maps each action id in [0, numActions).
func NewBoardSymmetry(name string, shape []int, numActions int, cell func(r, c int) (int, int), action func(Action) Action) (Symmetry, error) {
	if len(shape) < 2 {
		return Symmetry{}, fmt.Errorf("symmetry %s: observation shape %v has no board (want [planes..., height, width])", name, shape)
	}
	h, w := shape[len(shape)-2], shape[len(shape)-1]
	planes := shapeSize(shape[:len(shape)-2])
	obs := make([]int, planes*h*w)
	for p := range planes {
		for r := range h {
			for c := range w {
				r2, c2 := cell(r, c)
				if r2 < 0 || r2 >= h || c2 < 0 || c2 >= w {
					return Symmetry{}, fmt.Errorf("symmetry %s: cell (%d, %d) maps to (%d, %d), off the %dx%d board", name, r, c, r2, c2, h, w)
				}
				obs[(p*h+r)*w+c] = (p*h+r2)*w + c2
			}
		}
	}
	act := make([]int, numActions)
	for a := range act {
		act[a] = int(action(Action(a)))
	}
	return NewSymmetry(name, obs, act)
}

// Name says what the symmetry does ("mirror", "rotate180").
func (s *Symmetry) Name() string { return s.name }

// ObservationSize and NumActions are the lengths the symmetry works on.
func (s *Symmetry) ObservationSize() int { return len(s.obs) }
func (s *Symmetry) NumActions() int      { return len(s.act) }

// Action returns the image of action a.
func (s *Symmetry) Action(a Action) Action { return Action(s.act[a]) }

// Observation writes the transformed src into dst. Both have length
// ObservationSize and must not overlap.
func (s *Symmetry) Observation(dst, src []float32) {
	dst = dst[:len(s.obs)]
	for i, v := range src[:len(s.obs)] {
		dst[s.obs[i]] = v
	}
}

// Policy writes the transformed per-action vector src (a policy, logits or
// a 0/1 legality mask) into dst: dst[Action(a)] = src[a]. Both have length
// NumActions and must not overlap.
func (s *Symmetry) Policy(dst, src []float32) {
	dst = dst[:len(s.act)]
	for a, v := range src[:len(s.act)] {
		dst[s.act[a]] = v
	}
}
