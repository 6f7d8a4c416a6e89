package sushigo

import (
	"math/bits"

	"github.com/canopy-go/canopy/games"
)

// Zobrist hashing. The hash of a state is the XOR of keys drawn once from
// games.ZobristKeys with a fixed seed (stable across runs):
//
//   - for every multiset (hands, tables, removed cards) and every card
//     type, the key of its count; nigiri on wasabi, puddings and scores
//     likewise. The removed cards are those played in completed rounds
//     (FullDeck - deck - hands - tables): with hands and tables they fix
//     the deck, and unlike the deck they change only when a round ends, so
//     dealing and Resample (which redistributes deck and unknown hands)
//     need no key of the deck;
//   - the pending choice of every player (sequential view);
//   - round, tricks played, cards dealt and next chooser.
//
// Count keys are indexed by the count masked to the table size (no count
// of this package reaches it) and the key of count 0 is 0, so an empty
// multiset contributes nothing. A hand is keyed by its origin seat, the seat
// it was dealt to this round ((p+turn) mod np for the hand p holds now),
// not by its holder: passing the hands then leaves every key unchanged.
//
// Hands and removed cards share one family of count keys, zCards, told
// apart by a rotation per origin seat (handRot) and for the removed cards
// (removedRot): the key
// of hand p is rotl(cardsKey(hand), handRot[origin]). A rotation is
// XOR-linear, so per-card updates stay single XORs, and the key of a whole
// packed multiset is six loads from zCardPairs (keys of two types' counts
// at once), which Resample computes for every hand it redeals.
//
// core.h is updated by XOR wherever a field changes; core.rehash
// recomputes it from scratch (new and parsed states).
var (
	zCards     [NumCards][16]uint64             // type, count (hands and deck, see handRot)
	zCardPairs [6][256]uint64                   // byte j of a packed multiset: zCards[2j][lo] ^ zCards[2j+1][hi]
	zTable     [MaxPlayers][NumCards][16]uint64 // seat, type, count
	zWasabi    [MaxPlayers][3][16]uint64        // seat, nigiri, count on wasabi
	zPudding   [MaxPlayers][16]uint64           // seat, puddings kept
	zScore     [MaxPlayers][256]uint64          // seat, uint8(score): scores stay within -6..249
	zPending   [MaxPlayers][NumActions + 1]uint64
	zRound     [4]uint64
	zTurn      [16]uint64
	zDealt     [64]uint64
	zNext      [8]uint64
)

func init() {
	keys := games.ZobristKeys(0x5d5e9e7a54, 8192)
	next := func() uint64 { k := keys[0]; keys = keys[1:]; return k }
	counts := func(z *[NumCards][16]uint64) {
		for k := range z {
			for n := 1; n < len(z[k]); n++ {
				z[k][n] = next()
			}
		}
	}
	counts(&zCards)
	for j := range zCardPairs {
		for b := range zCardPairs[j] {
			zCardPairs[j][b] = zCards[2*j][b&15] ^ zCards[2*j+1][b>>4]
		}
	}
	for p := range MaxPlayers {
		counts(&zTable[p])
		for i := range zWasabi[p] {
			for n := 1; n < len(zWasabi[p][i]); n++ {
				zWasabi[p][i][n] = next()
			}
		}
		for n := 1; n < len(zPudding[p]); n++ {
			zPudding[p][n] = next()
		}
		for n := 1; n < len(zScore[p]); n++ { // score 0 has key 0
			zScore[p][n] = next()
		}
		for a := 1; a < len(zPending[p]); a++ { // NoAction has key 0
			zPending[p][a] = next()
		}
	}
	for _, z := range [][]uint64{zRound[:], zTurn[:], zDealt[:], zNext[:]} {
		for i := range z {
			z[i] = next()
		}
	}
}

// countsKey returns the key of multiset k under the count keys z.
func countsKey(k *Counts, z *[NumCards][16]uint64) uint64 { return nibKey(packNib(k), z) }

// handRot[o] is the rotation of the card keys of a hand dealt to seat o;
// removedRot that of the removed cards.
var handRot = [MaxPlayers]int{0, 13, 26, 39, 52}

const removedRot = 7

// cardsKey returns the (unrotated) key of the packed multiset v under
// zCards: six loads, one per byte.
func cardsKey(v uint64) uint64 {
	p := &zCardPairs
	return (p[0][uint8(v)] ^ p[1][uint8(v>>8)]) ^ (p[2][uint8(v>>16)] ^ p[3][uint8(v>>24)]) ^
		(p[4][uint8(v>>32)] ^ p[5][uint8(v>>40)])
}

// handKeyOf returns the key of the packed hand v dealt to seat o.
func handKeyOf(v uint64, o int) uint64 { return bits.RotateLeft64(cardsKey(v), handRot[o]) }

// removedKeyOf returns the key of the packed multiset v of removed cards.
func removedKeyOf(v uint64) uint64 { return bits.RotateLeft64(cardsKey(v), removedRot) }

// nibKey returns the key of the packed multiset v (nibble.go) under the
// count keys z: twelve independent loads combined as a tree (the loop
// form is several times slower; Resample and playRound call it per hand).
func nibKey(v uint64, z *[NumCards][16]uint64) uint64 {
	a := (z[0][v&15] ^ z[1][v>>4&15]) ^ (z[2][v>>8&15] ^ z[3][v>>12&15])
	b := (z[4][v>>16&15] ^ z[5][v>>20&15]) ^ (z[6][v>>24&15] ^ z[7][v>>28&15])
	c := (z[8][v>>32&15] ^ z[9][v>>36&15]) ^ (z[10][v>>40&15] ^ z[11][v>>44&15])
	return a ^ b ^ c
}

// origin returns the seat that hand p was dealt to this round.
func (c *core) origin(p int) int { return int(dealTo[c.np&7][(p+int(c.turn))&63]) }

// tableKey returns the key of table[p] and onWasabi[p].
func (c *core) tableKey(p int) uint64 {
	w := &c.onWasabi[p]
	return countsKey(&c.table[p], &zTable[p]) ^ zWasabi[p][0][w[0]&15] ^ zWasabi[p][1][w[1]&15] ^ zWasabi[p][2][w[2]&15]
}

// scalarKey returns the key of round, turn, dealt and next. The State
// methods that change them take it out of h before and put it back after.
func (c *core) scalarKey() uint64 {
	return zRound[c.round&3] ^ zTurn[c.turn&15] ^ zDealt[c.dealt&63] ^ zNext[c.next&7]
}

// pendingKey returns the key of p's pending choice (0 for NoAction).
func pendingKey(p int, a games.Action) uint64 { return zPending[p][uint(a+1)%(NumActions+1)] }

// seatKey returns the key of p's hand, table and nigiri on wasabi; 0 at
// once when all are empty (the common case at the start of a round).
func (c *core) seatKey(p int) uint64 {
	hand, tab := packNib(&c.hands[p]), packNib(&c.table[p])
	if hand|tab == 0 {
		return 0
	}
	return handKeyOf(hand, c.origin(p)) ^ c.tableKey(p)
}

// rehash sets the hash from scratch.
func (c *core) rehash() {
	c.h = c.scalarKey()
	removed := fullDeckNib - packNib(&c.deck) // the notation keeps every count within FullDeck
	for p := range int(c.np) {
		removed -= packNib(&c.hands[p]) + packNib(&c.table[p])
		c.h ^= c.seatKey(p)
		c.h ^= zPudding[p][c.pudding[p]&15] ^ zScore[p][uint8(c.score[p])] ^ pendingKey(p, c.pending[p])
	}
	c.h ^= removedKeyOf(removed)
}

// addHand adds d (1 or 255 for -1) cards of type k to hands[p].
func (c *core) addHand(p int, k Card, d uint8) {
	z := &zCards[k]
	n := c.hands[p][k]
	c.hands[p][k] = n + d
	c.h ^= bits.RotateLeft64(z[n&15]^z[(n+d)&15], handRot[c.origin(p)])
}

// addTable adds d (1 or 255 for -1) cards of type k to table[p].
func (c *core) addTable(p int, k Card, d uint8) {
	z := &zTable[p][k]
	n := c.table[p][k]
	c.table[p][k] = n + d
	c.h ^= z[n&15] ^ z[(n+d)&15]
}

// setPending records a as p's pending choice.
func (c *core) setPending(p int, a games.Action) {
	c.h ^= pendingKey(p, c.pending[p]) ^ pendingKey(p, a)
	c.pending[p] = a
}

// clearPending resets every pending choice to NoAction.
func (c *core) clearPending() {
	for i := range c.pending {
		c.setPending(i, games.NoAction)
	}
}
