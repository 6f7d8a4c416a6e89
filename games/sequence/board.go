package sequence

import (
	"math/bits"
	"strings"
)

// Cards. A card kind is suit*13 + rank with rank 0=A, 1=2, ..., 9=10,
// 10=J, 11=Q, 12=K and suits in the order S, H, D, C. Two decks give two
// copies of each kind.
const (
	numKinds = 52
	numRanks = 13
	rankJack = 10
)

const (
	kindNormal  = iota // placed on one of the two squares showing its face
	kindTwoEyed        // JD, JC: a chip on any empty square
	kindOneEyed        // JS, JH: removes an unlocked opponent chip
)

var (
	rankNames = [numRanks]string{"A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"}
	suitNames = "SHDC"
)

func kindRank(k uint8) int { return int(k) % numRanks }

// kindClass returns kindNormal, kindTwoEyed or kindOneEyed.
func kindClass(k uint8) int { return int(classOf[k]) }

func computeClass(k uint8) int {
	if kindRank(k) != rankJack {
		return kindNormal
	}
	if s := k / numRanks; s == 0 || s == 1 {
		return kindOneEyed
	}
	return kindTwoEyed
}

func cardName(k uint8) string { return rankNames[kindRank(k)] + suitNames[k/numRanks:k/numRanks+1] }

// parseCard parses "AS", "10h", "th" (T for ten) into a kind.
func parseCard(s string) (uint8, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if len(s) < 2 || len(s) > 3 {
		return 0, false
	}
	suit := strings.IndexByte(suitNames, s[len(s)-1])
	if suit < 0 {
		return 0, false
	}
	r := s[:len(s)-1]
	if r == "T" {
		r = "10"
	}
	for i, n := range rankNames {
		if n == r {
			return uint8(suit*numRanks + i), true
		}
	}
	return 0, false
}

// layout is the board of board.txt (top row first); W is a wild corner.
// The tests check it against the reference file.
const layout = `W 2S 3S 4S 5S 6S 7S 8S 9S W
6C 5C 4C 3C 2C AH KH QH 10H 10S
7C AS 2D 3D 4D 5D 6D 7D 9H QS
8C KS 6C 5C 4C 3C 2C 8D 8H KS
9C QS 7C 6H 5H 4H AH 9D 7H AS
10C 10S 8C 7H 2H 3H KH 10D 6H 2D
QC 9S 9C 8H 9H 10H QH QD 5H 3D
KC 8S 10C QC KC AC AD KD 4H 4D
AC 7S 6S 5S 4S 3S 2S 2H 3H 5D
W AD KD QD 10D 9D 8D 7D 6D W`

// Squares are numbered 0..99 row-major from the top-left corner of
// board.txt. A square is named column letter a..j plus row number 1..10
// counted from the bottom, so square 0 is a10 and square 99 is j1.
const numSquares = 100

// bitboard holds one bit per square: square i is bit i%64 of word i/64
// (lo for 0..63, hi for 64..99). Bits 100..127 are always zero. It is a
// struct of two words rather than an array because the compiler keeps
// small structs in registers and arrays of two in memory.
type bitboard struct{ lo, hi uint64 }

// word returns word i (0 or 1) without a branch.
func (b bitboard) word(i int) uint64 { return b.lo ^ (b.lo^b.hi)&-uint64(i&1) }

// words returns the two words, for ranging over them.
func (b bitboard) words() [2]uint64 { return [2]uint64{b.lo, b.hi} }

func (b bitboard) has(sq int) bool { return b.word(sq>>6)>>(uint(sq)&63)&1 != 0 }
func (b *bitboard) set(sq int) {
	if sq < 64 {
		b.lo |= 1 << uint(sq)
	} else {
		b.hi |= 1 << (uint(sq) & 63)
	}
}
func (b *bitboard) unset(sq int) {
	if sq < 64 {
		b.lo &^= 1 << uint(sq)
	} else {
		b.hi &^= 1 << (uint(sq) & 63)
	}
}
func (b bitboard) and(c bitboard) bitboard    { return bitboard{b.lo & c.lo, b.hi & c.hi} }
func (b bitboard) or(c bitboard) bitboard     { return bitboard{b.lo | c.lo, b.hi | c.hi} }
func (b bitboard) andNot(c bitboard) bitboard { return bitboard{b.lo &^ c.lo, b.hi &^ c.hi} }
func (b bitboard) isEmpty() bool              { return b.lo|b.hi == 0 }
func (b bitboard) count() int                 { return bits.OnesCount64(b.lo) + bits.OnesCount64(b.hi) }

// shr moves square i+n to square i (0 < n < 64). The counts are masked to
// 6 bits, which changes nothing in that range and lets the compiler emit
// plain shifts (Go defines shifts by 64 or more, which costs a compare
// per shift by a variable count).
func (b bitboard) shr(n uint) bitboard {
	return bitboard{b.lo>>(n&63) | b.hi<<((64-n)&63), b.hi >> (n & 63)}
}

// nth returns the k-th (0-based) set square; k < b.count().
func (b bitboard) nth(k int) int {
	w, base := b.lo, 0
	if c := bits.OnesCount64(w); k >= c {
		k -= c
		w, base = b.hi, 64
	}
	for ; k > 0; k-- {
		w &= w - 1
	}
	return base + bits.TrailingZeros64(w)
}

// forEach calls f for every set square in increasing order.
func (b bitboard) forEach(f func(sq int)) {
	for i, w := range b.words() {
		for w != 0 {
			f(i<<6 + bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
}

// Static tables built once from layout.
var (
	squareKind  [numSquares]int8   // card kind shown on the square, -1 on a corner
	faceSquares [numKinds]bitboard // the squares showing each kind (none for jacks)
	corners     bitboard           // the four wild corners
	allSquares  bitboard           // squares 0..99
	classOf     [numKinds]uint8
	faceIndex   [numKinds]int8          // 0..47 over non-jack kinds in kind order, -1 for jacks
	jackIndex   [numKinds]int8          // 0..3 for JS, JH, JD, JC, -1 otherwise
	dirStep     = [4]uint{1, 10, 11, 9} // horizontal, vertical, diagonal, anti-diagonal
	startMask   [4]bitboard             // squares where a five-square window in that direction may start
	window      [4][numSquares]bitboard // the five squares of the window starting at sq
	windowsAt   [4][numSquares]bitboard // starts of the windows (in startMask) that contain sq
	lineAt      [4][numSquares]bitboard // union of the windows in direction d that contain sq
)

func init() {
	rows := strings.Split(layout, "\n")
	fi := int8(0)
	for k := range uint8(numKinds) {
		classOf[k] = uint8(computeClass(k))
	}
	for k := range uint8(numKinds) {
		faceIndex[k], jackIndex[k] = -1, -1
		if kindClass(k) == kindNormal {
			faceIndex[k] = fi
			fi++
		}
	}
	for i, k := range []uint8{10, 23, 36, 49} {
		jackIndex[k] = int8(i)
	}
	for r, row := range rows {
		for c, tok := range strings.Fields(row) {
			sq := r*10 + c
			allSquares.set(sq)
			if tok == "W" {
				squareKind[sq] = -1
				corners.set(sq)
				continue
			}
			k, ok := parseCard(tok)
			if !ok {
				panic("sequence: bad built-in layout token " + tok)
			}
			squareKind[sq] = int8(k)
			faceSquares[k].set(sq)
		}
	}
	for sq := range numSquares {
		r, c := sq/10, sq%10
		ok := [4]bool{c <= 5, r <= 5, r <= 5 && c <= 5, r <= 5 && c >= 4}
		for d := range 4 {
			if !ok[d] {
				continue
			}
			startMask[d].set(sq)
			for i := range 5 {
				t := sq + i*int(dirStep[d])
				window[d][sq].set(t)
				windowsAt[d][t].set(sq)
			}
			for i := range 5 {
				t := sq + i*int(dirStep[d])
				lineAt[d][t] = lineAt[d][t].or(window[d][sq])
			}
		}
	}
}

// fives returns the start squares of every five-in-a-row of b in direction
// d, by shift-and-mask: bit i survives when squares i, i+s, ..., i+4s are
// all set; startMask removes windows that would wrap around an edge.
func fives(b bitboard, d int) bitboard {
	s := dirStep[d]
	y := b.and(b.shr(s))
	z := y.and(y.shr(2 * s))
	return z.and(b.shr(4 * s)).and(startMask[d])
}

// squareName names sq as column letter plus row number from the bottom.
func squareName(sq int) string {
	r, c := sq/10, sq%10
	return string(rune('a'+c)) + itoa(10-r)
}

func itoa(n int) string {
	if n < 10 && n >= 0 {
		return string(rune('0' + n))
	}
	return string(rune('0'+n/10)) + string(rune('0'+n%10))
}

// parseSquare parses "a10".."j1" (case-insensitive).
func parseSquare(s string) (int, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) < 2 || len(s) > 3 || s[0] < 'a' || s[0] > 'j' {
		return 0, false
	}
	n := 0
	for _, ch := range s[1:] {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		n = n*10 + int(ch-'0')
	}
	if n < 1 || n > 10 || (len(s) == 3 && s[1] == '0') {
		return 0, false
	}
	return (10-n)*10 + int(s[0]-'a'), true
}
