package multi

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4d"
)

// chainPosition is winPosition of multi_test.go: x wins by playing column
// a on boards 2 and 3 (actions 14 and 21).
func chainPosition(t *testing.T) games.State {
	t.Helper()
	s := games.MustNew("connect4d").NewInitialState()
	for _, turn := range [][5]int{{0, 3, 0, 0, 6}, {6, 0, 0, 0, 6}, {5, 0, 5, 0, 5}, {6, 6, 6, 6, 4}} {
		for b, c := range turn {
			if err := games.ApplyChecked(s, games.Action(b*7+c)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}

// wonBy reports whether node ni's sequence ends the game with a win for
// player 0.
func (e *EMCTS) wonBy(ni int32) bool {
	c := e.root0.Clone()
	for _, a := range e.genome(ni) {
		if c.IsTerminal() {
			break
		}
		c.Apply(a)
	}
	r := make([]float64, 2)
	c.Returns(r)
	return c.IsTerminal() && r[0] > 0
}

// TestEMCTSChain pins why a fixed walk of len(L0) phases missed the win
// (see EMCTS, Phases): the search reaches the winning sequence far below
// the root on its most visited path, values it +1 from x's side, and only
// the walk to the end of that path reads it.
func TestEMCTSChain(t *testing.T) {
	s := chainPosition(t)
	e, err := NewEMCTS(s.Game(), nil, Budget{Sims: 2000}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.PlanTurn(context.Background(), s, nil); err != nil {
		t.Fatal(err)
	}
	// Follow the most visited path from the root (node 0).
	ni, depth, firstWin, keeps := int32(0), 0, -1, 0
	for {
		if firstWin < 0 && e.wonBy(ni) {
			firstWin = depth
		}
		nd := e.nodes[ni]
		best := int32(-1)
		for k := nd.first; k < nd.first+nd.cnt; k++ {
			if e.edges[k].child >= 0 && (best < 0 || e.edges[k].n > e.edges[best].n) {
				best = k
			}
		}
		if best < 0 {
			break
		}
		ed := e.edges[best]
		if firstWin < 0 && ed.pos < 0 {
			keeps++
		}
		if e.wonBy(ed.child) {
			if q := ed.w / float64(ed.n); q != 1 || ed.player != 0 {
				t.Fatalf("winning edge at depth %d: Q %v for player %d, want 1 for x", depth+1, q, ed.player)
			}
		}
		ni = ed.child
		depth++
	}
	t.Logf("most visited path: %d deep (%d nodes), first win at depth %d after %d keeps", depth, len(e.nodes), firstWin, keeps)
	if firstWin <= len(e.genome(0)) || depth < 1000 {
		t.Errorf("first win at depth %d on a path %d deep: not the chain the Phases doc describes", firstWin, depth)
	}
	if !e.wonBy(e.walk(0, -1)) || e.wonBy(e.walk(0, len(e.genome(0)))) {
		t.Errorf("walk to the end: win %v; walk of len(L0) steps: win %v; want true, false",
			e.wonBy(e.walk(0, -1)), e.wonBy(e.walk(0, len(e.genome(0)))))
	}
}
