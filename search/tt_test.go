package search

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// With tt=true transpositions share one node: in tictactoe after a full
// search, every distinct position (by Zobrist hash plus move number)
// reachable in the tree has exactly one node; without it duplicates exist.
func TestTranspositionTable(t *testing.T) {
	g := games.MustNew("tictactoe")
	count := func(tt bool) (nodes, positions int, allocs float64) {
		o := DefaultOptions()
		o.Sims, o.TT = 20000, tt
		tr, err := New(g, o, 1)
		if err != nil {
			t.Fatal(err)
		}
		root := g.NewInitialState()
		tr.Search(context.Background(), root)
		seen := map[int32]bool{}
		pos := map[[2]uint64]map[int32]bool{}
		var walk func(ni int32, s games.State)
		walk = func(ni int32, s games.State) {
			k := [2]uint64{s.Hash(), uint64(s.MoveNumber())}
			if pos[k] == nil {
				pos[k] = map[int32]bool{}
			}
			pos[k][ni] = true
			if seen[ni] {
				return
			}
			seen[ni] = true
			nd := &tr.a.nodes[ni]
			if nd.state != expanded {
				return
			}
			for i := nd.firstEdge; i < nd.firstEdge+nd.numEdges; i++ {
				if c := tr.a.edges[i].child; c != NilNode {
					cs := s.Clone()
					cs.Apply(tr.a.edges[i].action)
					walk(c, cs)
				}
			}
		}
		walk(tr.root, root)
		dup := 0
		for _, ns := range pos {
			if len(ns) > 1 {
				dup++
			}
		}
		w := tr.walkers[0]
		return dup, len(pos), testing.AllocsPerRun(50, func() { tr.simulate(w) })
	}
	dupTT, posTT, allocs := count(true)
	dupNo, _, _ := count(false)
	if dupTT != 0 {
		t.Errorf("tt=true: %d positions with several nodes (of %d)", dupTT, posTT)
	}
	if dupNo == 0 {
		t.Errorf("tt=false: no duplicated positions; the test does not exercise transpositions")
	}
	if allocs != 0 {
		t.Errorf("tt=true: %v allocs per simulation", allocs)
	}
}
