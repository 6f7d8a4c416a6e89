package sushigo

import (
	"math/bits"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
)

// Resample implements games.Resampler. dst becomes a copy of s in which
// every hand that player does not know (see Knows) is redealt uniformly at
// random from player's unseen pool (those hands plus the undealt deck), the
// rest of the pool becoming the deck; hand sizes, tables, puddings, scores
// and player's own hand and pending choice are kept. In the sequential view
// the pending choices of the other players, which player has not seen, are
// replaced by uniformly random legal choices for their (possibly redealt)
// hands. It takes one value from rng to seed its own fast generator
// (fastRand), so it is reproducible from rng; it never allocates.
//
// Implementation: the pool is packed (nibble.go) and expanded into single
// cards; each unknown hand is drawn card by card by swap-removing uniform
// indices, several per random word (fastRand.batch).
func (s *State) Resample(player int, rng *rand.Rand, dst games.State) {
	d := dst.(*State)
	*d = *s
	c := &d.c
	np := int(c.np)
	pool := packNib(&c.deck)
	var redeal [MaxPlayers]bool
	some := false
	for q := range np {
		if !c.knows(player, q) {
			redeal[q] = true
			some = true
			hand := packNib(&c.hands[q])
			pool += hand
			c.h ^= handKeyOf(hand, c.origin(q))
		}
	}
	r := fastRand{s: rng.Uint64()}
	if some {
		var dk deckCards
		dk.fill(pool)
		for q := range np {
			if !redeal[q] {
				continue
			}
			hand := dk.draw(&r, c.hands[q].Total())
			unpackNib(hand, &c.hands[q])
			c.h ^= handKeyOf(hand, c.origin(q))
			pool -= hand
		}
		unpackNib(pool, &c.deck)
	}
	for q := range int(c.next) {
		if q != player {
			c.setPending(q, c.randomLegal(q, &r))
		}
	}
}

// randomLegal returns a uniformly random legal action of p (choosing phase).
func (c *core) randomLegal(p int, r *fastRand) games.Action {
	w0, w1 := c.legalBits(p)
	return randomBit(w0, w1, r.intN(bits.OnesCount64(w0)+bits.OnesCount64(w1)))
}
