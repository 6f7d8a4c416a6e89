package main

import (
	"testing"

	"github.com/canopy-go/canopy/games/connect4"

	"github.com/canopy-go/canopy/games/connect4/solver"
)

// TestTreeOrderIsPermutation checks that the solving order visits every
// book position exactly once: a position missing from it would never be
// solved, a repeated one solved twice.
func TestTreeOrderIsPermutation(t *testing.T) {
	idx := solver.BookIndex()
	order := treeOrder(idx)
	if len(order) != len(idx) {
		t.Fatalf("order has %d entries, book %d", len(order), len(idx))
	}
	seen := make([]bool, len(idx))
	for k, i := range order {
		if i < 0 || i >= len(idx) || seen[i] {
			t.Fatalf("order[%d] = %d: out of range or repeated", k, i)
		}
		seen[i] = true
	}
	// The walk plays centre columns first: the first position reached is
	// 3,3,3,3,3,3 (column 3 full) then 2,2.
	var first connect4.Position
	for _, col := range []int{3, 3, 3, 3, 3, 3, 2, 2} {
		first.Play(col)
	}
	if got := idx[order[0]].Key(); got != first.Key() && got != solver.MirrorKey(first.Key()) {
		t.Fatalf("first position in the order is not 3,3,3,3,3,3,2,2")
	}
}
