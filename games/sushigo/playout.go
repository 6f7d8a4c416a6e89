package sushigo

import (
	"encoding/binary"
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
//
// Implementation: a trick with pending choices (sequential view) is played
// on the core as it is; every other trick runs in playRound, which keeps
// hands and tables as packed counts (nibble.go) for the rest of the round,
// draws one random word per trick for all players' picks and a few per
// deal (fastRand.batch), and scores the round from the packed tables.
func (s *State) RandomPlayoutTricks(rng *rand.Rand, n int) {
	c := &s.c
	if c.over() || n <= 0 {
		return
	}
	c.h ^= c.scalarKey() // put back at the end
	r := fastRand{s: rng.Uint64()}
	if c.next > 0 && !c.dealing() {
		var joint [MaxPlayers]games.Action
		for p := range int(c.np) {
			if p < int(c.next) {
				joint[p] = c.pending[p]
			} else {
				joint[p] = c.randomLegal(p, &r)
			}
		}
		c.next = 0
		c.clearPending()
		c.resolve(joint[:c.np])
		n--
	}
	var dk deckCards
	dk.n = -1
	for !c.over() && n > 0 {
		n -= c.playRound(&r, &dk, n)
	}
	c.h ^= c.scalarKey()
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
	return games.Action(base + games.SelectBit(w0, k))
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

// batch returns a word x from which several independent uniform integers
// in [0, n1), [0, n2), ..., [0, nk) are read, where n = n1*n2*...*nk > 0
// (no overflow): digit i is the high word of x*ni, and the low word becomes
// x for the next digit (see digit).
//
// Why it is exact: with x_i, r_i the high and low words of r_{i-1}*n_i
// (r_0 = x), x*n = 2^64*(x_1*n2*...*nk + x_2*n3*...*nk + ... + x_k) + r_k,
// so the digits are the mixed-radix digits of floor(x*n/2^64) and r_k is
// the low word of x*n. Lemire's test on that low word (reject below
// 2^64 mod n) makes floor(x*n/2^64) uniform on [0, n), hence the digits
// independent and uniform. The division runs only when the low word is
// below n, with probability n/2^64.
func (r *fastRand) batch(n uint64) uint64 {
	x := r.next()
	if x*n < n {
		x = r.rebatch(x, n)
	}
	return x
}

// rebatch finishes Lemire's test for batch when the low word of x*n is
// below n (rare; kept apart so that the common path stays short).
func (r *fastRand) rebatch(x, n uint64) uint64 {
	t := -n % n
	for x*n < t {
		x = r.next()
	}
	return x
}

// digit splits a word from batch (or a rest from digit) into the next
// digit, in [0, n), and the rest for the digits after it (see batch).
func digit(x, n uint64) (d, rest uint64) { return bits.Mul64(x, n) }

// dealBatch is the number of cards dealt from one batch word: the deck has
// at most 108 cards and 108^8 < 2^56, so the rare division of batch runs at
// most once in 2^8 words.
const dealBatch = 8

// fall8[n] = n*(n-1)*...*(n-7), the product of the ranges of a full deal
// batch from a deck of n >= 8 cards.
var fall8 [109]uint64

func init() {
	for n := dealBatch; n < len(fall8); n++ {
		p := uint64(1)
		for i := range dealBatch {
			p *= uint64(n - i)
		}
		fall8[n] = p
	}
}

// deckCards is the undealt deck expanded into single cards c[:n], in no
// particular order: draw takes uniform indices and swap-removes them. n < 0
// means not built yet. c has slack for the 8-byte stores of fill and a
// power-of-two length, so that masked indices need no bounds checks.
type deckCards struct {
	n int
	c [128]byte // card types
}

// fullDeckCards is FullDeck expanded into single cards.
var fullDeckCards [108]byte

func init() {
	n := 0
	for k, x := range FullDeck {
		for range x {
			fullDeckCards[n] = byte(k)
			n++
		}
	}
}

// fill expands the packed multiset v (at most 108 cards) into d.
func (d *deckCards) fill(v uint64) {
	if v == fullDeckNib {
		copy(d.c[:], fullDeckCards[:])
		d.n = len(fullDeckCards)
		return
	}
	n := 0
	for k := range uint64(NumCards) {
		x := int(v >> (4 * k) & 15)
		w := k * 0x0101010101010101
		binary.LittleEndian.PutUint64(d.c[n&127:], w)
		if x > 8 {
			binary.LittleEndian.PutUint64(d.c[(n+8)&127:], w)
		}
		n += x
	}
	d.n = n
}

// fullDeckNib is FullDeck packed.
var fullDeckNib = packNib(&FullDeck)

// draw removes k uniformly random cards from d (k <= d.n) and returns them
// packed: each is a digit of a batch word over the current deck size (see
// fastRand.batch), swap-removed from the deck.
func (d *deckCards) draw(r *fastRand, k int) (out uint64) {
	n := d.n
	cards := &d.c
	for k > 0 {
		b := min(k, dealBatch)
		var prod uint64
		if b == dealBatch && n < len(fall8) {
			prod = fall8[n]
		} else {
			prod = 1
			for i := range b {
				prod *= uint64(n - i)
			}
		}
		x := r.batch(prod)
		for range b {
			var j uint64
			j, x = digit(x, uint64(n))
			n--
			card := cards[j&127]
			cards[j&127] = cards[n&127]
			out += 1 << (4 * uint(card) & 63)
		}
		k -= b
	}
	d.n = n
	return out
}

// seat is one player's part of a round in playRound: packed hand and table
// (nibble.go), and w, the packed nigiri-on-wasabi counts (egg, salmon,
// squid in fields 0..2) with the number of open wasabi in field 3. m, m1
// and cnt hold the legal actions of the current trick and their number:
// with chop false the packed non-zero mask of hand in m and its prefix
// counts in m1 (see nibSelect), otherwise a full two-word mask.
type seat struct {
	hand, tab, w uint64
	m, m1, cnt   uint64
	chop         bool
}

// openShift is the shift of the open-wasabi field of seat.w.
const openShift = 12

// nibSelect returns the shift (4 * type) of the k-th (0-based) set bit of
// the packed non-zero mask m (bits at multiples of 4 only, more than k of
// them), given pre = m*nibLow, without branches: field i of pre is the
// number of set bits of m at or below field i (at most 12, so the product
// has no carries between fields), and the answer is the set bit whose
// count is k+1, found with an exact SWAR zero-field test.
func nibSelect(m, pre, k uint64) uint {
	x := pre ^ (k+1)*nibLow
	z := ^((x&0x777777777777 + 0x777777777777) | x) & (m << 3)
	return uint(bits.TrailingZeros64(z)-3) & 63
}

// place puts the card at packed shift sh (4 * type) on the seat's table, on
// an open wasabi if it is a nigiri (core.place for packed counts), without
// branches: see placeWasabi and placeNigiri.
func (s *seat) place(sh uint) {
	s.tab += 1 << (sh & 63)
	card := sh >> 2 & 15
	open := s.w >> openShift & 15 // at most 6
	s.w += placeWasabi[card] + placeNigiri[card]*((open+15)>>4)
}

// placeWasabi[k] is added to seat.w when a card of type k is placed: one
// more open wasabi for a wasabi. placeNigiri[k] is added as well when the
// seat has an open wasabi: for a nigiri, one more of its type on a wasabi
// and one open wasabi less (the subtraction wraps, the sum does not).
var placeWasabi, placeNigiri [16]uint64

func init() {
	placeWasabi[Wasabi] = 1 << openShift
	for k := Egg; k <= Squid; k++ {
		placeNigiri[k] = 1<<(4*(k-Egg)) - 1<<openShift
	}
}

// playRound plays at most n tricks of the current round (finishing the
// deal first) and returns the number played. Hands, tables and
// nigiri-on-wasabi counts are packed (nibble.go) for the duration and
// written back when it stops inside the round; when the round ends it is
// scored from the packed tables (the same rules as endRound). Their keys
// are taken out of the hash on entry (seatKey; nothing to do for the empty
// seats of a new round) and put back at the write-back.
func (c *core) playRound(r *fastRand, dk *deckCards, n int) int {
	var seats [MaxPlayers]seat
	ss := seats[:c.np]
	for p := range ss {
		s := &ss[p]
		s.hand = packNib(&c.hands[p])
		s.tab = packNib(&c.table[p])
		w := &c.onWasabi[p]
		s.w = uint64(w[0]) | uint64(w[1])<<4 | uint64(w[2])<<8 | uint64(c.openWasabi(p))<<openShift
		if s.hand|s.tab != 0 {
			c.h ^= handKeyOf(s.hand, c.origin(p)) ^ c.tableKey(p)
		}
	}
	h := c.handSize()
	if end := len(ss) * h; int(c.dealt) < end {
		// Card d of a deal goes to player d mod np, but the cards are
		// exchangeable (each a uniform draw from the rest of the deck), so
		// filling the hands one after the other gives the same joint
		// distribution.
		if dk.n < 0 {
			dk.fill(packNib(&c.deck))
		}
		deck := packNib(&c.deck)
		for p := range ss {
			have := int(ss[p].hand * nibLow >> 44 & 15) // cards in hand (<= 10)
			hand := dk.draw(r, h-have)
			ss[p].hand += hand
			deck -= hand
		}
		unpackNib(deck, &c.deck)
		c.dealt = int8(end)
	}
	played := 0
	for played < n {
		// Legal actions of every player: the present types or, with
		// chopsticks on the table and two cards in hand, a full mask.
		canChop := h-int(c.turn) >= 2
		prod := uint64(1)
		for p := range ss {
			s := &ss[p]
			s.chop = s.tab>>(4*Chopsticks) != 0 && canChop
			if s.chop {
				s.m, s.m1 = chopLegal(s.hand, s.w>>openShift == 0)
				s.cnt = uint64(bits.OnesCount64(s.m) + bits.OnesCount64(s.m1))
			} else {
				s.m = nibNonzero(s.hand)
				s.m1 = s.m * nibLow     // prefix counts, see nibSelect
				s.cnt = s.m1 >> 44 & 15 // the count over all 12 fields
			}
			prod *= s.cnt
		}
		// One batch word for everybody's pick.
		x := r.batch(prod)
		for p := range ss {
			s := &ss[p]
			var k uint64
			k, x = digit(x, s.cnt)
			if !s.chop {
				sh := nibSelect(s.m, s.m1, k)
				s.hand -= 1 << sh
				s.place(sh)
				continue
			}
			a := randomBit(s.m, s.m1, int(k))
			f := 4 * uint(actFirst[a]) & 63
			s.hand -= 1 << f
			if actChop[a] {
				sec := 4 * uint(actSecond[a]) & 63
				s.hand -= 1 << sec
				s.tab -= 1 << (4 * Chopsticks)
				s.hand += 1 << (4 * Chopsticks)
				s.place(f)
				s.place(sec)
			} else {
				s.place(f)
			}
		}
		// Pass the hands: player i's hand goes to player i-1.
		first := ss[0].hand
		for p := 1; p < len(ss); p++ {
			ss[p-1].hand = ss[p].hand
		}
		ss[len(ss)-1].hand = first
		c.turn++
		played++
		if int(c.turn) == h {
			c.endRoundNib(ss)
			return played
		}
	}
	for p := range ss {
		s := &ss[p]
		unpackNib(s.hand, &c.hands[p])
		unpackNib(s.tab, &c.table[p])
		c.onWasabi[p] = [3]uint8{uint8(s.w & 15), uint8(s.w >> 4 & 15), uint8(s.w >> 8 & 15)}
		c.h ^= c.seatKey(p)
	}
	return played
}

// endRoundNib is endRound for the packed seats of playRound.
func (c *core) endRoundNib(ss []seat) {
	var pts, icons [MaxPlayers]int
	var pud [MaxPlayers]uint8
	played := uint64(0)
	for p := range ss {
		s := &ss[p]
		played += s.tab
		pts[p] = nibTableScore(s.tab, s.w)
		icons[p] = nibMaki(s.tab)
		pud[p] = uint8(nibField(s.tab, Pudding))
	}
	makiScores(icons[:len(ss)], &pts)
	c.closeRound(&pts, &pud, played)
}
