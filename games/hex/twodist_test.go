package hex

import "math/bits"

// The two-distance by its definition, for the tests of the evaluator's
// walkers and of HexDist's potentials (hexdist_test.go).

// distances writes into d the two-distance of every empty cell in the
// reduced graph adj from the edge whose adjacent empty cells are near
// (Far where unreachable; cells that are not empty are left alone): 1 next
// to the edge, else 1 + the second-smallest distance among the cell's
// reduced-graph neighbours. Cells are settled level by level: at level k
// every still unsettled cell with at least two neighbours at distance
// <= k gets k+1. This is the definition, cell by cell, which the scorers'
// walkers (walk64, walk3) compute as sets (TestLevelsMatchDistances).
func distances(adj *[maxCells]board, empty, near board, d *[maxCells]int32) {
	for i, w := range empty {
		for w != 0 {
			c := i<<6 + bits.TrailingZeros64(w)
			w &= w - 1
			d[c] = Far
		}
	}
	settled := near
	for i, w := range near {
		for w != 0 {
			d[i<<6+bits.TrailingZeros64(w)] = 1
			w &= w - 1
		}
	}
	open := empty.andNot(near)
	for k := int32(1); !open.empty(); k++ {
		var newly board
		for i, w := range open {
			for w != 0 {
				c := i<<6 + bits.TrailingZeros64(w)
				w &= w - 1
				if adj[c].and(settled).count() >= 2 {
					newly.set(c)
					d[c] = k + 1
				}
			}
		}
		if newly.empty() {
			break
		}
		settled = settled.or(newly)
		open = open.andNot(newly)
	}
}

// TwoDistances returns player p's two-distances in s from p's first edge
// (top for player 0, left for player 1) and from the second edge (bottom,
// right), indexed by action id, with -1 for occupied cells and Far for
// cells that cannot reach the edge, and p's potential (see HexDist), by
// the definition (distances), for tests.
func TwoDistances(s *State, p int) (fromA, fromB []int, potential int) {
	e := &evaluator{g: s.g}
	var lvA, lvB levelSets
	var dA, dB [maxCells]int32
	potential = e.potential(&s.stones, p, &lvA, &lvB)
	if potential != 0 {
		empty := s.g.full.andNot(s.stones[0].or(s.stones[1]))
		nearA, nearB := e.reduce(&s.stones, p)
		distances(&e.adj, empty, nearA, &dA)
		distances(&e.adj, empty, nearB, &dB)
	}
	fromA, fromB = make([]int, s.g.nn), make([]int, s.g.nn)
	for c := range s.g.nn {
		fromA[c], fromB[c] = -1, -1
		if !s.stones[0].has(c) && !s.stones[1].has(c) {
			fromA[c], fromB[c] = int(dA[c]), int(dB[c])
		}
	}
	return fromA, fromB, potential
}

// count is the number of cells in b.
func (b board) count() int {
	return bits.OnesCount64(b[0]) + bits.OnesCount64(b[1]) + bits.OnesCount64(b[2])
}
