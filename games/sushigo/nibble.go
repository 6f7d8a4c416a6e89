package sushigo

import (
	"encoding/binary"
	"math/bits"
)

// Packed card counts for the hot loops (RandomPlayout, Resample): a Counts
// multiset as twelve 4-bit fields of a uint64, type k in bits 4k..4k+3.
// Every multiset of this package is part of the 108-card deck, so no count
// exceeds 14 (the notation checks it) and a field never overflows; adding
// or removing one card of type k is one add of 1<<(4k).

// nibLow has bit 0 of each of the twelve fields set.
const nibLow = 0x111111111111

// packNib packs c into nibbles.
func packNib(c *Counts) uint64 {
	x := binary.LittleEndian.Uint64(c[0:8])
	y := uint64(binary.LittleEndian.Uint32(c[8:12]))
	x = (x | x>>4) & 0x00ff00ff00ff00ff
	x = (x | x>>8) & 0x0000ffff0000ffff
	x = (x | x>>16) & 0xffffffff
	y = (y | y>>4) & 0x00ff00ff
	y = (y | y>>8) & 0xffff
	return x | y<<32
}

// unpackNib writes the packed multiset v into c.
func unpackNib(v uint64, c *Counts) {
	x := v & 0xffffffff
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	x = (x | x<<4) & 0x0f0f0f0f0f0f0f0f
	y := v >> 32 & 0xffff
	y = (y | y<<8) & 0x00ff00ff
	y = (y | y<<4) & 0x0f0f0f0f
	binary.LittleEndian.PutUint64(c[0:8], x)
	binary.LittleEndian.PutUint32(c[8:12], uint32(y))
}

// nibNonzero has bit 4k set when field k of x is non-zero.
func nibNonzero(x uint64) uint64 { return (x | x>>1 | x>>2 | x>>3) & nibLow }

// nibAtLeast2 has bit 4k set when field k of x is 2 or more.
func nibAtLeast2(x uint64) uint64 { return (x>>1 | x>>2 | x>>3) & nibLow }

// nibCompact moves bit 4k of m (only those bits set) to bit k.
func nibCompact(m uint64) uint32 {
	m = (m | m>>3) & 0x030303030303
	m = (m | m>>6) & 0x000f000f000f
	m = (m | m>>12) & 0x0000ff000000ff
	m = (m | m>>24) & 0xfff
	return uint32(m)
}

// nibField returns field k of x.
func nibField(x uint64, k Card) int { return int(x >> (4 * uint(k) & 63) & 15) }

// chopLegal returns the legal actions, as the two words of a mask, of a
// player with chopsticks on its table holding hand (packed, two cards or
// more); noOpenWasabi tells whether all of its wasabi carry a nigiri. It
// is the packed twin of core.legalBits.
func chopLegal(hand uint64, noOpenWasabi bool) (w0, w1 uint64) {
	return chopBits(nibCompact(nibNonzero(hand)), nibCompact(nibAtLeast2(hand)), noOpenWasabi)
}

// chopBits returns the legal actions of a player with chopsticks on its
// table and two cards or more in hand: present has bit k set when the hand
// holds type k, dup when it holds it twice or more.
func chopBits(present, dup uint32, noOpenWasabi bool) (w0, w1 uint64) {
	pt := &pairTable[present&(1<<NumCards-1)]
	w0 = uint64(present) | pt[0]
	w1 = pt[1]
	for d := dup; d != 0; d &= d - 1 {
		id := uint(pairAct[bits.TrailingZeros32(d)&15][bits.TrailingZeros32(d)&15])
		if id < 64 {
			w0 |= 1 << id
		} else {
			w1 |= 1 << (id - 64)
		}
	}
	if noOpenWasabi && present&(1<<Wasabi) != 0 {
		w1 |= uint64(present>>Egg&7) << (firstRev - 64)
	}
	return w0, w1
}

// Score tables of the packed round scoring, indexed by a count (0..15).
var (
	tempuraPts  [16]int8 // 5 per pair
	sashimiPts  [16]int8 // 10 per set of three
	dumplingPts [16]int8 // 1, 3, 6, 10, 15 for 1..5, 15 beyond
)

func init() {
	for n := range 16 {
		tempuraPts[n] = int8(n / 2 * 5)
		sashimiPts[n] = int8(n / 3 * 10)
		dumplingPts[n] = int8(dumplingPoints[min(n, 5)])
	}
}

// nibTableScore is tableScore for a packed table t and packed
// nigiri-on-wasabi counts w (egg, salmon, squid in fields 0, 1, 2).
func nibTableScore(t, w uint64) int {
	s := int(tempuraPts[t&15]) + int(sashimiPts[t>>(4*Sashimi)&15]) + int(dumplingPts[t>>(4*Dumpling)&15])
	s += int(t>>(4*Egg)&15) + 2*int(t>>(4*Salmon)&15) + 3*int(t>>(4*Squid)&15)
	s += 2 * (int(w&15) + 2*int(w>>4&15) + 3*int(w>>8&15))
	return s
}

// nibMaki is the number of maki icons on a packed table.
func nibMaki(t uint64) int {
	return int(t>>(4*Maki1)&15) + 2*int(t>>(4*Maki2)&15) + 3*int(t>>(4*Maki3)&15)
}
