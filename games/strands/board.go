package strands

import (
	"fmt"
	"math/bits"
)

// MaxCells is the number of cells of the largest board (side 6).
const MaxCells = 91

// Board is the static geometry of one Strands board: the cells of a hexagon
// of side Side inside a W x W array (W = 2*Side-1), as in MegaZero's
// rules_set.py. Cell (x, y) (row x, column y) is on the board iff
// |x+y-(W-1)| <= Side-1. Cells are numbered 0..N-1 in row-major order of
// (x, y); these numbers are the action ids. Boards are immutable.
type Board struct {
	Side, W, N int
	X, Y       [MaxCells]int8    // array coordinates of each cell
	Label      [MaxCells]uint8   // printed number 1..6
	Nbr        [MaxCells][6]int8 // neighbouring cells, -1 padded
	NbrCount   [MaxCells]uint8
	nbrMask    [MaxCells][2]uint64 // Nbr as a cell bitset
	index      []int8              // x*W+y -> cell, or -1 off the board
	labelMask  [7][2]uint64
	LabelCount [7]int // cells per printed number
	all        [2]uint64
}

// ringLabels gives, per side, the printed number of each ring (0 = centre)
// inside the outer ring, and the outer ring's numbers for edge cells and
// for the six corners ("Labels per ring" of the MegaZero board files).
var ringLabels = map[int]struct {
	inner                []uint8
	outerEdge, outerCorn uint8
}{
	4: {[]uint8{1, 2, 2}, 3, 4},
	5: {[]uint8{1, 2, 2, 3}, 4, 6},
	6: {[]uint8{1, 2, 2, 2, 3}, 5, 6},
}

// cubeDirs are the six unit steps in cube coordinates (q, r, s).
var cubeDirs = [6][3]int{{1, -1, 0}, {1, 0, -1}, {0, 1, -1}, {-1, 1, 0}, {-1, 0, 1}, {0, -1, 1}}

var boards = map[int]*Board{}

func init() {
	for side := range ringLabels {
		boards[side] = newBoard(side)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// newBoard generates the board of the given side from cube coordinates:
// q = y-(Side-1), r = x-(Side-1), s = -q-r, ring = max(|q|, |r|, |s|);
// neighbours are the cells at cube distance 1.
func newBoard(side int) *Board {
	rl := ringLabels[side]
	b := &Board{Side: side, W: 2*side - 1}
	b.index = make([]int8, b.W*b.W)
	for i := range b.index {
		b.index[i] = -1
	}
	for x := range b.W {
		for y := range b.W {
			q, r := y-(side-1), x-(side-1)
			s := -q - r
			ring := max(abs(q), abs(r), abs(s))
			if ring >= side {
				continue
			}
			var lab uint8
			switch {
			case ring < side-1:
				lab = rl.inner[ring]
			case countEq(abs(q), abs(r), abs(s), ring) >= 2:
				lab = rl.outerCorn
			default:
				lab = rl.outerEdge
			}
			c := b.N
			b.N++
			b.X[c], b.Y[c], b.Label[c] = int8(x), int8(y), lab
			b.index[x*b.W+y] = int8(c)
			b.LabelCount[lab]++
			b.labelMask[lab][c>>6] |= 1 << (c & 63)
			b.all[c>>6] |= 1 << (c & 63)
		}
	}
	for c := range b.N {
		k := 0
		for i := range b.Nbr[c] {
			b.Nbr[c][i] = -1
		}
		for _, d := range cubeDirs {
			if n := b.At(int(b.X[c])+d[1], int(b.Y[c])+d[0]); n >= 0 {
				b.Nbr[c][k] = int8(n)
				b.nbrMask[c][n>>6] |= 1 << (n & 63)
				k++
			}
		}
		b.NbrCount[c] = uint8(k)
	}
	return b
}

func countEq(a, b, c, v int) int {
	n := 0
	for _, x := range []int{a, b, c} {
		if x == v {
			n++
		}
	}
	return n
}

// At returns the cell at array coordinates (x, y), or -1 off the board.
func (b *Board) At(x, y int) int {
	if x < 0 || y < 0 || x >= b.W || y >= b.W {
		return -1
	}
	return int(b.index[x*b.W+y])
}

// BoardOf returns the board of the given side (4, 5 or 6).
func BoardOf(side int) (*Board, error) {
	b, ok := boards[side]
	if !ok {
		return nil, fmt.Errorf("strands: no board of side %d (sides 4, 5, 6)", side)
	}
	return b, nil
}

// Turns returns the number of turns of a complete game: the opening plus,
// for every number X, ceil(cells marked X / X) turns (the opening stone
// taken from the 2s first). Every game lasts exactly this many turns.
func (b *Board) Turns() int {
	t := 1
	for x := 1; x <= 6; x++ {
		n := b.LabelCount[x]
		if x == 2 {
			n--
		}
		t += (n + x - 1) / x
	}
	return t
}

// groups writes the sizes of the connected groups of stones (a cell
// bitset) into sizes, largest first, and returns how many there are. Each
// cell is taken off the frontier once and adds its unseen neighbouring
// stones with two word operations. It allocates nothing.
func (b *Board) groups(stones [2]uint64, sizes *[MaxCells]uint8) int {
	var seen [2]uint64
	n := 0
	for w := range 2 {
		for {
			rest := stones[w] &^ seen[w]
			if rest == 0 {
				break
			}
			c0 := w<<6 + bits.TrailingZeros64(rest)
			var comp, front [2]uint64
			comp[c0>>6] = 1 << (c0 & 63)
			front = comp
			for {
				fw := 0
				if front[0] == 0 {
					if front[1] == 0 {
						break
					}
					fw = 1
				}
				c := fw<<6 + bits.TrailingZeros64(front[fw])
				front[fw] &= front[fw] - 1
				nm := &b.nbrMask[c]
				n0 := nm[0] & stones[0] &^ comp[0]
				n1 := nm[1] & stones[1] &^ comp[1]
				comp[0] |= n0
				comp[1] |= n1
				front[0] |= n0
				front[1] |= n1
			}
			seen[0] |= comp[0]
			seen[1] |= comp[1]
			size := uint8(bits.OnesCount64(comp[0]) + bits.OnesCount64(comp[1]))
			// Insertion into the descending list.
			j := n
			for j > 0 && sizes[j-1] < size {
				sizes[j] = sizes[j-1]
				j--
			}
			sizes[j] = size
			n++
		}
	}
	return n
}

// largest returns the size of the largest connected group of stones.
func (b *Board) largest(stones [2]uint64) int {
	var sizes [MaxCells]uint8
	if b.groups(stones, &sizes) == 0 {
		return 0
	}
	return int(sizes[0])
}

// compare compares the sorted group lists of players 0 and 1: +1 when
// player 0 wins (larger at the first difference, or an extra group when
// all compared sizes tie), -1 when player 1 wins, 0 for identical lists.
func compareGroups(a []uint8, b []uint8) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] > b[i] {
				return 1
			}
			return -1
		}
	}
	switch {
	case len(a) > len(b):
		return 1
	case len(a) < len(b):
		return -1
	}
	return 0
}
