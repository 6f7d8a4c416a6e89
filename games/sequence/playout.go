package sequence

import (
	"math/bits"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
)

// PlayRandom plays s to the end with uniformly random legal actions and
// chance draws, like games.RandomPlayout, and returns the number of actions
// applied. It is the specialised fast path for playouts: it counts each
// slot's targets with popcounts instead of building a mask, and draws
// cards from the deck counts directly. With the same rng it makes exactly
// the choices games.RandomPlayout makes (same random calls, same action
// order), so both give the same game. It never allocates.
func (s *State) PlayRandom(rng *rand.Rand) int {
	n := 0
	for s.phase != phOver {
		if s.phase != phPlay {
			s.Apply(s.SampleChance(rng))
		} else {
			s.Apply(s.randomAction(rng))
		}
		n++
	}
	return n
}

// randomAction returns a uniformly random legal action of the player to
// move; the k-th action in increasing id order for k = rng.IntN(count).
func (s *State) randomAction(rng *rand.Rand) games.Action {
	p := int(s.player)
	occ := s.chips[0].or(s.chips[1]).or(s.chips[2])
	empty := bitboard{^occ[0] &^ corners[0], (^occ[1] &^ corners[1]) & allSquares[1]}
	canExchange := s.deckN > 0 && !s.exchanged
	var cnt [maxHand]uint8
	total := 0
	prev := uint8(255)
	hand := &s.hand[p]
	n := int(s.hn[p])
	for i := range n {
		k := hand[i]
		if k == prev {
			continue
		}
		prev = k
		c := 0
		t := s.slotTargets(p, k, empty)
		c = bits.OnesCount64(t[0]) + bits.OnesCount64(t[1])
		if c == 0 && canExchange && classOf[k] == kindNormal {
			c = 1
		}
		cnt[i] = uint8(c)
		total += c
	}
	if total == 0 {
		rng.IntN(1) // keep the random stream in step with Mask.Random
		return PassAction
	}
	r := rng.IntN(total)
	for i := range n {
		if r >= int(cnt[i]) {
			r -= int(cnt[i])
			continue
		}
		t := s.slotTargets(p, hand[i], empty)
		if t[0]|t[1] == 0 {
			return exchangeAction(i)
		}
		return games.Action(i*numSquares + t.nth(r))
	}
	return PassAction // unreachable
}

// slotTargets returns where p's card k can be played.
func (s *State) slotTargets(p int, k uint8, empty bitboard) bitboard {
	switch classOf[k] {
	case kindNormal:
		f := &faceSquares[k]
		return bitboard{f[0] & empty[0], f[1] & empty[1]}
	case kindTwoEyed:
		return empty
	}
	return s.removable(p)
}
