package sushigo

import (
	"math/bits"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
)

// RandomPlayout finishes the game from s with uniformly random play: each
// deal is completed at once (uniform over the deck, as the chance nodes
// would) and every player picks uniformly among its legal actions, the same
// distribution as games.RandomPlayout (not the same random stream). It
// works on the rules core directly, bypassing masks and interface calls,
// and never allocates. Pending choices of the sequential view are kept.
func (s *State) RandomPlayout(rng *rand.Rand) {
	s.RandomPlayoutTricks(rng, 1<<30)
}

// RandomPlayoutTricks is RandomPlayout stopped after at most n tricks.
func (s *State) RandomPlayoutTricks(rng *rand.Rand, n int) {
	c := &s.c
	var joint [MaxPlayers]games.Action
	var buf [108]Card
	nbuf := -1
	r := fastRand{s: rng.Uint64()}
	for !c.over() && n > 0 {
		if c.dealing() {
			c.dealRest(&r, &buf, &nbuf)
		}
		for p := range int(c.np) {
			if p < int(c.next) {
				joint[p] = c.pending[p]
				continue
			}
			w0, w1 := c.legalBits(p)
			joint[p] = randomBit(w0, w1, r.intN(bits.OnesCount64(w0)+bits.OnesCount64(w1)))
		}
		c.next = 0
		for i := range c.pending {
			c.pending[i] = games.NoAction
		}
		c.resolve(joint[:c.np])
		n--
	}
}

// randomBit returns the k-th (0-based) set bit of the 128-bit mask w0|w1.
func randomBit(w0, w1 uint64, k int) games.Action {
	if w1 == 0 && w0 < 1<<NumCards { // single picks only: at most 12 bits
		for ; k > 0; k-- {
			w0 &= w0 - 1
		}
		return games.Action(bits.TrailingZeros64(w0))
	}
	base := 0
	if c := bits.OnesCount64(w0); k >= c {
		k -= c
		w0, base = w1, 64
	}
	return games.Action(base + select64(w0, k))
}

// select64 returns the position of the k-th (0-based) set bit of w, which
// has more than k set bits: halving by population count, then a short scan.
func select64(w uint64, k int) int {
	pos := 0
	if c := bits.OnesCount32(uint32(w)); k >= c {
		k -= c
		w >>= 32
		pos += 32
	}
	if c := bits.OnesCount16(uint16(w)); k >= c {
		k -= c
		w >>= 16
		pos += 16
	}
	if c := bits.OnesCount8(uint8(w)); k >= c {
		k -= c
		w >>= 8
		pos += 8
	}
	for ; k > 0; k-- {
		w &= w - 1
	}
	return pos + bits.TrailingZeros64(w)
}

// fastRand is the playout's generator: a wyrand stream (64-bit state, one
// add and one 128-bit multiply per draw) seeded from the caller's PCG, so
// playouts stay reproducible from the rng while costing a fraction of a
// PCG step per draw. intN reduces a draw to [0, n) without bias (Lemire's
// multiply-and-reject): the same distribution as rand.IntN, a different
// stream.
type fastRand struct{ s uint64 }

func (r *fastRand) next() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// intN returns a uniform integer in [0, n), n > 0.
func (r *fastRand) intN(n int) int {
	hi, lo := bits.Mul64(r.next(), uint64(n))
	if lo < uint64(n) {
		t := -uint64(n) % uint64(n)
		for lo < t {
			hi, lo = bits.Mul64(r.next(), uint64(n))
		}
	}
	return int(hi)
}

// dealRest finishes the current deal: card d goes to player d mod np, each
// drawn uniformly from the remaining deck. buf/nbuf hold the deck expanded
// into single cards (built on first use, nbuf < 0 before), so that a draw is
// one random index and a swap-remove rather than a walk over the counts.
func (c *core) dealRest(r *fastRand, buf *[108]Card, nbuf *int) {
	if *nbuf < 0 {
		n := 0
		for k, x := range c.deck {
			for range x {
				buf[n] = Card(k)
				n++
			}
		}
		*nbuf = n
	}
	np := int(c.np)
	end := np * c.handSize()
	n := *nbuf
	p := int(c.dealt) % np
	for d := int(c.dealt); d < end; d++ {
		j := r.intN(n)
		k := buf[j]
		n--
		buf[j] = buf[n]
		c.deck[k]--
		c.hands[p][k]++
		if p++; p == np {
			p = 0
		}
	}
	*nbuf = n
	c.dealt = int8(end)
}
