package tetrislink

import (
	"math/bits"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
)

// legalWords returns the legal-action mask of the player to move (zero at
// terminal states).
func (s *State) legalWords() (w0, w1, w2 uint64) {
	if s.toMove < 0 {
		return 0, 0, 0
	}
	av := &s.avail[s.toMove]
	return s.fit[0] & av[0], s.fit[1] & av[1], s.fit[2] & av[2]
}

// NumLegal returns the number of legal actions of the player to move.
func (s *State) NumLegal() int {
	w0, w1, w2 := s.legalWords()
	return bits.OnesCount64(w0) + bits.OnesCount64(w1) + bits.OnesCount64(w2)
}

// FirstLegal returns the smallest legal action id, or games.NoAction at a
// terminal state.
func (s *State) FirstLegal() games.Action {
	w0, w1, w2 := s.legalWords()
	switch {
	case w0 != 0:
		return games.Action(bits.TrailingZeros64(w0))
	case w1 != 0:
		return games.Action(64 + bits.TrailingZeros64(w1))
	case w2 != 0:
		return games.Action(128 + bits.TrailingZeros64(w2))
	}
	return games.NoAction
}

// RandomLegal returns a uniformly random legal action, or games.NoAction at
// a terminal state. With many legal actions it samples action ids byte by
// byte from rng.Uint64 and rejects illegal ones (uniform over the legal
// set, about 256/legal bytes per call); with few it selects the k-th set
// bit of the mask.
func (s *State) RandomLegal(rng *rand.Rand) games.Action {
	w0, w1, w2 := s.legalWords()
	c0, c1 := bits.OnesCount64(w0), bits.OnesCount64(w1)
	n := c0 + c1 + bits.OnesCount64(w2)
	if n >= 24 {
		words := [4]uint64{w0, w1, w2, 0}
		for {
			r := rng.Uint64()
			for range 8 {
				a := r & 0xff
				r >>= 8
				if words[(a>>6)&3]>>(a&63)&1 != 0 {
					return games.Action(a)
				}
			}
		}
	}
	if n == 0 {
		return games.NoAction
	}
	k := int(rng.Uint64N(uint64(n)))
	switch {
	case k < c0:
		return games.Action(games.SelectBit(w0, k))
	case k < c0+c1:
		return games.Action(64 + games.SelectBit(w1, k-c0))
	}
	return games.Action(128 + games.SelectBit(w2, k-c0-c1))
}

// PlayRandom plays uniformly random legal actions until the game ends and
// returns the number of actions applied. It is the specialised playout path
// (no interface calls, no mask); it never allocates.
func (s *State) PlayRandom(rng *rand.Rand) int {
	n := 0
	for s.toMove >= 0 {
		s.Apply(s.RandomLegal(rng))
		n++
	}
	return n
}

// PlayFirst plays the smallest legal action until the game ends and returns
// the number of actions applied.
func (s *State) PlayFirst() int {
	n := 0
	for s.toMove >= 0 {
		s.Apply(s.FirstLegal())
		n++
	}
	return n
}
