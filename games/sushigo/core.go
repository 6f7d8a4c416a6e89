package sushigo

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
)

// MaxPlayers is the largest supported player count.
const MaxPlayers = 5

const numRounds = 3

// core is the complete rules state shared by the simultaneous and the
// sequential view. It is a plain value (no pointers), so copying it with =
// is a full, allocation-free clone.
//
// Invariants:
//   - dealing phase: round < 3, turn == 0, dealt < np*h; card number d of
//     the round went to player d % np, so hand sizes follow that pattern,
//     tables are empty;
//   - choosing phase: round < 3, dealt == np*h, every hand holds h-turn > 0
//     cards and every table holds turn cards (puddings of this round
//     included: chopsticks returned to the hand are no longer on the table);
//   - over: round == 3, hands and tables empty;
//   - onWasabi[p][i] <= table[p][Egg+i] and sum(onWasabi[p]) <= table[p][Wasabi];
//   - pending[q] != NoAction exactly for q < next (sequential view only).
type core struct {
	np    int8
	round int8 // 0..2, 3 = game over
	turn  int8 // tricks completed in this round
	dealt int8 // cards dealt in this round

	next    int8 // sequential view: next player to choose
	pending [MaxPlayers]games.Action

	hands    [MaxPlayers]Counts // hands[p] is the hand p holds now
	table    [MaxPlayers]Counts // cards in front of p this round
	onWasabi [MaxPlayers][3]uint8
	pudding  [MaxPlayers]uint8 // puddings kept from completed rounds
	score    [MaxPlayers]int16 // points of completed rounds (+ puddings at the end)
	deck     Counts            // cards not dealt yet

	// h is the Zobrist hash of the fields above (see zobrist.go), kept
	// current by every change of them (playRound: see there).
	h uint64
}

func (c *core) handSize() int { return 12 - int(c.np) }

func (c *core) dealing() bool { return c.round < numRounds && int(c.dealt) < int(c.np)*c.handSize() }

func (c *core) over() bool { return c.round >= numRounds }

func (c *core) reset(np int) {
	*c = core{np: int8(np), deck: FullDeck}
	for i := range c.pending {
		c.pending[i] = games.NoAction
	}
	c.rehash()
}

// openWasabi is the number of p's wasabi without a nigiri on them.
func (c *core) openWasabi(p int) int {
	w := &c.onWasabi[p]
	return int(c.table[p][Wasabi]) - int(w[0]) - int(w[1]) - int(w[2])
}

// deal gives one card of type k to the next player in dealing order.
func (c *core) deal(k Card) {
	p := int(dealTo[c.np&7][c.dealt&63]) // c.dealt % c.np without a division
	c.deck[k]--
	c.addHand(p, k, 1)
	c.dealt++
}

// dealTo[np][d] = d % np: the player who gets card number d of a deal
// (d < np*HandSize(np) <= 40).
var dealTo [8][64]uint8

func init() {
	for np := 1; np < len(dealTo); np++ {
		for d := range dealTo[np] {
			dealTo[np][d] = uint8(d % np)
		}
	}
}

// sampleDeal draws a card type from the deck with probability proportional
// to its count: r uniform in [0, total), the type is the first whose
// running count exceeds r. The running counts are computed for all types
// at once as byte-wise prefix sums (at most 108, so no carries), and the
// types whose running count is <= r are counted without branches.
func (c *core) sampleDeal(rng *rand.Rand) Card {
	return c.deck.pick(rng.IntN(c.deck.Total()))
}

// pick returns the first type whose running count exceeds r (0 <= r <
// Total()).
func (k *Counts) pick(r int) Card {
	x := binary.LittleEndian.Uint64(k[0:8])
	y := uint64(binary.LittleEndian.Uint32(k[8:12]))
	px := x * 0x0101010101010101             // byte i: count of types 0..i
	py := y*0x01010101 + (px>>56)*0x01010101 // byte i: count of types 0..8+i
	// Bit 7 of byte i of px+bias is set iff its running count exceeds r
	// (r <= 107 and counts <= 108, so bytes stay below 256).
	bias := uint64(127-r) * 0x0101010101010101
	gx := (px + bias) & 0x8080808080808080
	gy := (py + bias&0xffffffff) & 0x80808080
	above := (gx>>7)*0x0101010101010101>>56 + (gy>>7)*0x01010101>>24&0xff
	return Card(NumCards - above)
}

// legalFor writes p's legal actions into m (cleared first). It works on
// bitmasks: single picks are the present card types themselves, chopsticks
// pairs of distinct types come from pairTable, doubles from the types held
// twice or more.
func (c *core) legalFor(p int, m games.Mask) {
	if c.over() || c.dealing() {
		m.Clear()
		return
	}
	m[0], m[1] = c.legalBits(p)
}

// legalBits returns p's legal actions as the two words of a mask
// (choosing phase only).
func (c *core) legalBits(p int) (w0, w1 uint64) {
	if c.table[p][Chopsticks] > 0 {
		if present, dup, n := handBits(&c.hands[p]); n >= 2 {
			return chopBits(present, dup, c.openWasabi(p) == 0)
		}
	}
	return uint64(handPresent(&c.hands[p])), 0
}

// pairTable[present] holds the chopsticks actions for two cards of distinct
// types, both present (bit k of present: the hand holds type k).
var pairTable [1 << NumCards][2]uint64

func init() {
	// Each set is the set without its highest type h plus the pairs of h
	// with the types below it (one pass instead of all pairs per set, a
	// tenth of the start-up work).
	for present := 1; present < 1<<NumCards; present++ {
		h := bits.Len(uint(present)) - 1
		rest := present &^ (1 << h)
		t := pairTable[rest]
		for a := range h {
			if rest&(1<<a) != 0 {
				id := pairAct[a][h]
				t[id>>6] |= 1 << (uint(id) & 63)
			}
		}
		pairTable[present] = t
	}
}

const (
	bytes7f = 0x7f7f7f7f7f7f7f7f
	bytes7e = 0x7e7e7e7e7e7e7e7e
	bytes80 = 0x8080808080808080
	gather  = 0x0102040810204080 // moves bit 8i to bit 56+i
)

// handBits returns the types present in k (bit k set when k[k] > 0), the
// types present at least twice, and the number of cards. Counts are at most
// 127, so the byte-wise additions never carry between bytes.
func handBits(k *Counts) (present, dup uint32, n int) {
	x := binary.LittleEndian.Uint64(k[0:8])
	y := uint64(binary.LittleEndian.Uint32(k[8:12]))
	px := ((x + bytes7f) & bytes80) >> 7
	py := ((y + bytes7f&0xffffffff) & bytes80 & 0xffffffff) >> 7
	dx := ((x + bytes7e) & bytes80) >> 7
	dy := ((y + bytes7e&0xffffffff) & bytes80 & 0xffffffff) >> 7
	present = uint32((px*gather)>>56) | uint32((py*gather)>>56)<<8
	dup = uint32((dx*gather)>>56) | uint32((dy*gather)>>56)<<8
	n = int((x*0x0101010101010101)>>56) + int((y*0x01010101)>>24&0xff)
	return present, dup, n
}

// handPresent is the first result of handBits alone.
func handPresent(k *Counts) uint32 {
	x := binary.LittleEndian.Uint64(k[0:8])
	y := uint64(binary.LittleEndian.Uint32(k[8:12]))
	px := ((x + bytes7f) & bytes80) >> 7
	py := ((y + bytes7f&0xffffffff) & bytes80 & 0xffffffff) >> 7
	return uint32((px*gather)>>56) | uint32((py*gather)>>56)<<8
}

// isLegal reports whether a is legal for p (choosing phase).
func (c *core) isLegal(p int, a games.Action) bool {
	if a < 0 || a >= NumActions || c.over() || c.dealing() {
		return false
	}
	h := &c.hands[p]
	f, s := actFirst[a], actSecond[a]
	if !actChop[a] {
		return h[f] > 0
	}
	if c.table[p][Chopsticks] == 0 || h[f] == 0 || h[s] == 0 || (f == s && h[f] < 2) {
		return false
	}
	if a >= firstRev {
		return c.openWasabi(p) == 0
	}
	return true
}

// place puts card k in front of p, on an open wasabi if k is a nigiri.
func (c *core) place(p int, k Card) {
	c.addTable(p, k, 1)
	if nigiriValue(k) > 0 && c.openWasabi(p) > 0 {
		// table[p][k] already counts k, so openWasabi is unchanged by it.
		z := &zWasabi[p][k-Egg]
		n := c.onWasabi[p][k-Egg]
		c.onWasabi[p][k-Egg] = n + 1
		c.h ^= z[n&15] ^ z[(n+1)&15]
	}
}

// pick applies p's choice a to p's hand and table (no passing yet).
func (c *core) pick(p int, a games.Action) {
	f := actFirst[a]
	c.addHand(p, f, 255)
	if actChop[a] {
		s := actSecond[a]
		c.addHand(p, s, 255)
		c.addTable(p, Chopsticks, 255)
		c.addHand(p, Chopsticks, 1)
		c.place(p, f)
		c.place(p, s)
		return
	}
	c.place(p, f)
}

// resolve applies one choice per player, passes the hands (player i's hand
// goes to player i-1) and scores the round when the hands are empty.
// Passing changes no key (a hand's key depends on its origin seat, which
// passing keeps); the caller updates the scalar key.
func (c *core) resolve(joint []games.Action) {
	np := int(c.np)
	for p := range np {
		c.pick(p, joint[p])
	}
	first := c.hands[0]
	for p := 1; p < np; p++ {
		c.hands[p-1] = c.hands[p]
	}
	c.hands[np-1] = first
	c.turn++
	if int(c.turn) == c.handSize() {
		c.endRound()
	}
}

// endRound scores the round, clears the tables and moves on.
func (c *core) endRound() {
	var pts [MaxPlayers]int
	var pud [MaxPlayers]uint8
	roundScores(c, &pts)
	played := uint64(0)
	for p := range int(c.np) {
		pud[p] = c.table[p][Pudding]
		c.h ^= c.seatKey(p) // closeRound empties hands and tables
		played += packNib(&c.table[p])
	}
	c.closeRound(&pts, &pud, played)
}

// closeRound adds the round's points pts and puddings pud to the players'
// totals, empties hands and tables, moves to the next round and adds the
// pudding points when the game is over. played is the packed sum of the
// tables (nibble.go), which join the removed cards. The caller has taken
// the keys of hands and tables out of the hash (seatKey) and updates the
// scalar key.
func (c *core) closeRound(pts *[MaxPlayers]int, pud *[MaxPlayers]uint8, played uint64) {
	np := int(c.np)
	// The hands are empty: removed = FullDeck - deck - tables before, and
	// FullDeck - deck after.
	rest := fullDeckNib - packNib(&c.deck)
	c.h ^= removedKeyOf(rest-played) ^ removedKeyOf(rest)
	for p := range np {
		c.h ^= zScore[p][uint8(c.score[p])] ^ zPudding[p][c.pudding[p]&15]
		c.score[p] += int16(pts[p])
		c.pudding[p] += pud[p]
		c.h ^= zScore[p][uint8(c.score[p])] ^ zPudding[p][c.pudding[p]&15]
		c.table[p] = Counts{}
		c.onWasabi[p] = [3]uint8{}
		c.hands[p] = Counts{}
	}
	c.turn, c.dealt = 0, 0
	c.round++
	if c.over() {
		var pp [MaxPlayers]int
		puddingScores(c.pudding[:np], &pp)
		for p := range np {
			c.h ^= zScore[p][uint8(c.score[p])]
			c.score[p] += int16(pp[p])
			c.h ^= zScore[p][uint8(c.score[p])]
		}
	}
}

// dumplingPoints[n] is the score of n dumplings (5 or more score 15).
var dumplingPoints = [6]int{0, 1, 3, 6, 10, 15}

// tableScore is the score of p's table without maki (tempura, sashimi,
// dumplings, nigiri with wasabi).
func tableScore(t *Counts, w *[3]uint8) int {
	s := int(t[Tempura]/2)*5 + int(t[Sashimi]/3)*10
	s += dumplingPoints[min(int(t[Dumpling]), 5)]
	s += int(t[Egg]) + 2*int(t[Salmon]) + 3*int(t[Squid])
	s += 2 * (int(w[0]) + 2*int(w[1]) + 3*int(w[2]))
	return s
}

// makiCount is the number of maki icons on a table.
func makiCount(t *Counts) int { return int(t[Maki1]) + 2*int(t[Maki2]) + 3*int(t[Maki3]) }

// div6[n] and div3[n] are 6/n and 3/n for n players sharing a place (the
// remainder is ignored); 0 for n = 0.
var (
	div6 = [MaxPlayers + 1]int{0, 6, 3, 2, 1, 1}
	div3 = [MaxPlayers + 1]int{0, 3, 1, 1, 0, 0}
)

// makiScores adds the maki points for icon counts icons[:n] to pts: most
// icons 6 split among ties (remainder ignored); if one player alone has the
// most, second most 3 split among ties; players with no icon score nothing.
// The loops avoid data-dependent branches (b2i compiles to a flag set;
// random playouts call this at the end of every round).
func makiScores(icons []int, pts *[MaxPlayers]int) {
	best, second := 0, 0
	for _, m := range icons {
		best = max(best, m)
	}
	for _, m := range icons {
		s := max(second, m)
		if m < best {
			second = s
		}
	}
	nb, ns := 0, 0
	for _, m := range icons {
		nb += b2i(m == best)
		ns += b2i(m == second)
	}
	// Nobody scores without icons; second place counts only behind a
	// single leader and with icons of its own (second < best when best > 0).
	first := div6[nb] * b2i(best > 0)
	next := div3[ns] * b2i(nb == 1 && second > 0)
	for p, m := range icons {
		pts[p] += first*b2i(m == best) + next*b2i(m == second)
	}
}

// puddingScores writes the end-of-game pudding points into pts: most 6,
// fewest -6, each split among ties with the remainder ignored; no negative
// points with 2 players; nothing when everyone has the same number.
func puddingScores(pud []uint8, pts *[MaxPlayers]int) {
	hi, lo := pud[0], pud[0]
	for _, x := range pud {
		hi, lo = max(hi, x), min(lo, x)
	}
	if hi == lo {
		return
	}
	nh, nl := 0, 0
	for _, x := range pud {
		nh += b2i(x == hi)
		nl += b2i(x == lo)
	}
	most, fewest := div6[nh], div6[nl]*b2i(len(pud) > 2)
	for p, x := range pud {
		pts[p] += most*b2i(x == hi) - fewest*b2i(x == lo)
	}
}

// roundScores writes the points each player scores for the current tables.
func roundScores(c *core, pts *[MaxPlayers]int) {
	np := int(c.np)
	var icons [MaxPlayers]int
	for p := range np {
		pts[p] = tableScore(&c.table[p], &c.onWasabi[p])
		icons[p] = makiCount(&c.table[p])
	}
	makiScores(icons[:np], pts)
}

// returns writes the rank-based utility: each player scores +1 for every
// opponent it beats and -1 for every opponent that beats it, divided by
// np-1. A player beats another with more points, or equal points and more
// puddings; otherwise they tie. Returns are zero-sum and in [-1, 1]; the
// single winner of an untied game gets +1.
func (c *core) returns(dst []float64) {
	np := int(c.np)
	for p := range np {
		dst[p] = 0
	}
	if !c.over() {
		return
	}
	for p := range np {
		for q := p + 1; q < np; q++ {
			d := int(c.score[p]) - int(c.score[q])
			if d == 0 {
				d = int(c.pudding[p]) - int(c.pudding[q])
			}
			switch {
			case d > 0:
				dst[p]++
				dst[q]--
			case d < 0:
				dst[p]--
				dst[q]++
			}
		}
	}
	for p := range np {
		dst[p] /= float64(np - 1)
	}
}

// knows reports whether player p knows the hand q holds now: p has held
// that hand earlier in this round (hands move from i to i-1, so after turn
// t p has held the hands now at p, p-1, ..., p-t). During dealing only the
// own hand is known.
func (c *core) knows(p, q int) bool {
	if p == q {
		return true
	}
	if c.dealing() {
		return false
	}
	np := int(c.np)
	d := p - q // (p-q) mod np, p and q in [0, np)
	if d < 0 {
		d += np
	}
	return d <= int(c.turn)
}
