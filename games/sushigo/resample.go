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
func (s *State) Resample(player int, rng *rand.Rand, dst games.State) {
	d := dst.(*State)
	*d = *s
	c := &d.c
	np := int(c.np)
	pool := c.deck
	total := pool.Total()
	for q := range np {
		if !c.knows(player, q) {
			for k, n := range c.hands[q] {
				pool[k] += n
				total += int(n)
			}
		}
	}
	r := fastRand{s: rng.Uint64()}
	for q := range np {
		if c.knows(player, q) {
			continue
		}
		n := c.hands[q].Total()
		c.hands[q] = Counts{}
		for range n {
			x := r.intN(total)
			k := 0
			for x >= int(pool[k]) {
				x -= int(pool[k])
				k++
			}
			pool[k]--
			total--
			c.hands[q][k]++
		}
	}
	c.deck = pool
	for q := range int(c.next) {
		if q != player {
			c.pending[q] = c.randomLegal(q, &r)
		}
	}
}

// randomLegal returns a uniformly random legal action of p (choosing phase).
func (c *core) randomLegal(p int, r *fastRand) games.Action {
	w0, w1 := c.legalBits(p)
	return randomBit(w0, w1, r.intN(bits.OnesCount64(w0)+bits.OnesCount64(w1)))
}
