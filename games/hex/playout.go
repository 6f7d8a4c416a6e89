package hex

import (
	"math/bits"
	"math/rand/v2"
)

// grow returns x together with every cell adjacent to a cell of x (bits
// outside the board may be set; callers mask with a stone set).
//
// With y = x ∪ east-shift(x) and z = x ∪ west-shift(x), shifting y up one
// row brings (r+1, c) and (r+1, c-1) to (r, c), and shifting z down one row
// brings (r-1, c) and (r-1, c+1): together with y and z these are exactly
// the six hex neighbours. The column masks stop row wrap-around.
func (g *Game) grow(x board) board {
	n := uint(g.n)
	y := x.or(x.shl(1).and(g.notCol0))
	z := x.or(x.shr(1).and(g.notColLast))
	return y.or(z).or(y.shr(n)).or(z.shl(n))
}

// connects reports whether the stones own join start to goal (both edge
// row/column masks), by a bit-parallel flood fill from start. It does not
// allocate.
func (g *Game) connects(own, start, goal board) bool {
	reach := own.and(start)
	if reach.empty() {
		return false
	}
	for {
		if !reach.and(goal).empty() {
			return true
		}
		next := g.grow(reach).and(own)
		if next == reach {
			return false
		}
		reach = next
	}
}

// rows holds a board row by row: bit c of rows[r] is cell (r, c).
type rows [MaxSize]uint16

// toRows converts the action-id bitset b to rows.
func (g *Game) toRows(b *board) rows {
	var out rows
	n := uint(g.n)
	mask := uint64(1)<<n - 1
	for r := range g.n {
		start := uint(r) * n
		w, off := start>>6, start&63
		v := b[w] >> off
		if off+n > 64 {
			v |= b[w+1] << (64 - off)
		}
		out[r] = uint16(v & mask)
	}
	return out
}

// spreadRow returns the cells of own that are joined to seeds (a subset
// of own) within one row.
func spreadRow(seeds, own uint16) uint16 {
	for {
		next := (seeds | seeds<<1 | seeds>>1) & own
		if next == seeds {
			return seeds
		}
		seeds = next
	}
}

// connectsTopBottom reports whether the stones in own (rows of one
// player's stones) join row 0 to row n-1. It sweeps down and up the board,
// one row at a time, spreading along each row, until a sweep adds nothing;
// a sweep follows any path that runs monotonically in its direction, so
// the number of sweeps is one plus the number of times a path must turn
// back. Cell (r, c) touches (r-1, c), (r-1, c+1), (r+1, c), (r+1, c-1).
func connectsTopBottom(own *rows, n int) bool {
	var reach rows
	reach[0] = own[0]
	if reach[0] == 0 {
		return false
	}
	for {
		changed := false
		// Down: (r, c) is reached from (r-1, c) and (r-1, c+1).
		for r := 1; r < n; r++ {
			up := reach[r-1]
			seeds := own[r] & (up | up>>1) &^ reach[r]
			if seeds != 0 {
				reach[r] = spreadRow(reach[r]|seeds, own[r])
				changed = true
			}
		}
		if reach[n-1] != 0 {
			return true
		}
		if !changed {
			return false
		}
		changed = false
		// Up: (r, c) is reached from (r+1, c) and (r+1, c-1).
		for r := n - 2; r >= 0; r-- {
			down := reach[r+1]
			seeds := own[r] & (down | down<<1) &^ reach[r]
			if seeds != 0 {
				reach[r] = spreadRow(reach[r]|seeds, own[r])
				changed = true
			}
		}
		if !changed {
			return false
		}
	}
}

// bitSource hands out 32-bit random numbers, two per 64-bit SplitMix64
// output. It is seeded with one rng.Uint64 per playout so the hot loop
// makes no interface calls; SplitMix64 passes BigCrush, ample for
// playouts.
type bitSource struct {
	x    uint64
	buf  uint64
	have bool
}

func newBitSource(rng *rand.Rand) bitSource { return bitSource{x: rng.Uint64()} }

func (b *bitSource) next() uint32 {
	if b.have {
		b.have = false
		return uint32(b.buf >> 32)
	}
	b.x += 0x9e3779b97f4a7c15
	z := b.x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	b.buf, b.have = z^(z>>31), true
	return uint32(b.buf)
}

// below returns a uniform integer in [0, n) for 0 < n < 2^32 (Lemire's
// multiply-shift with rejection, so exactly uniform).
func (b *bitSource) below(n uint32) uint32 {
	m := uint64(b.next()) * uint64(n)
	if uint32(m) < n {
		t := -n % n
		for uint32(m) < t {
			m = uint64(b.next()) * uint64(n)
		}
	}
	return uint32(m >> 32)
}

// RandomPlayoutWinner returns the winner of a uniformly random playout
// from s without modifying s. It has the same distribution as playing
// uniformly random legal actions until the end (games.RandomPlayout; the
// swap action included when it is legal): the empty cells are dealt at
// random, the player to move taking ceil(e/2) of the e empty cells, and
// the full board is decided with one flood fill, which is valid because the
// winner of a filled Hex board is the winner of the game. It does not
// allocate.
func (s *State) RandomPlayoutWinner(rng *rand.Rand) int {
	if s.winner >= 0 {
		return int(s.winner)
	}
	g := s.g
	stones := s.stones
	mover := int(s.moves & 1)
	free := g.full.andNot(stones[0].or(stones[1]))
	var cells [maxCells]uint8
	e := 0
	for i, w := range free {
		for w != 0 {
			cells[e] = uint8(i<<6 + bits.TrailingZeros64(w))
			e++
			w &= w - 1
		}
	}
	src := newBitSource(rng)
	if s.canSwap() && src.below(uint32(e+1)) == uint32(e) {
		// Swap: Black's stone becomes White's on the transposed cell and
		// Black moves again. The vacated cell is empty again.
		first := int(s.hist[0])
		t := int(g.transpose[first])
		stones[0].unset(first)
		stones[1].set(t)
		if t != first {
			for i := range e {
				if int(cells[i]) == t {
					cells[i] = uint8(first)
					break
				}
			}
		}
		mover = 0
	}
	// The mover takes ceil(e/2) cells, the other player the rest. Deal the
	// smaller share (the other player's) by a partial Fisher-Yates shuffle,
	// then decide the full board by Black's top-bottom connection.
	black := g.toRows(&stones[0])
	k := e / 2
	for i := range k {
		j := i + int(src.below(uint32(e-i)))
		cells[i], cells[j] = cells[j], cells[i]
	}
	blackCells := cells[:k]
	if mover == 0 {
		blackCells = cells[k:e]
	}
	for _, c := range blackCells {
		black[g.rowOf[c]] |= 1 << g.colOf[c]
	}
	if connectsTopBottom(&black, g.n) {
		return 0
	}
	return 1
}
