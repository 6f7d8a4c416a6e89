package search

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// hashPriors is a static evaluator with distinct, position-dependent
// priors (a hash of the state and the action) and value 0: a stand-in for
// a network whose PUCT scores never tie.
type hashPriors struct{}

func (hashPriors) Evaluate(c *EvalContext, s games.State, value []float64, priors []float32) bool {
	if s.IsTerminal() {
		c.Terminal(s, value)
		return false
	}
	clear(value)
	if priors == nil {
		return false
	}
	h := s.Hash()
	for a := range priors {
		x := (h ^ uint64(a+1)*0x9e3779b97f4a7c15) * 0xbf58476d1ce4e5b9
		priors[a] = float32(x>>40) + 1
	}
	return true
}

// priorsByPath maps each expanded node of t, by the actions leading to
// it, to its edges' priors by action, and counts the deferred nodes.
func priorsByPath(t *Tree) (map[string]map[games.Action]float32, int) {
	out := map[string]map[games.Action]float32{}
	deferredNodes := 0
	var walk func(ni int32, path string)
	walk = func(ni int32, path string) {
		nd := &t.a.nodes[ni]
		if nd.state == deferred {
			deferredNodes++
		}
		if nd.state != expanded {
			return
		}
		m := map[games.Action]float32{}
		for i := nd.firstEdge; i < nd.firstEdge+nd.numEdges; i++ {
			e := t.a.edges[i]
			m[e.action] = t.a.hot[i].prior
			if e.child != NilNode {
				walk(e.child, path+t.rootState.ActionString(e.action)+" ")
			}
		}
		out[path] = m
	}
	walk(t.root, "")
	return out, deferredNodes
}

// A deferring PUCT tree (leaves keep their priors and get their edges at
// their next visit) builds the same search as one that expands every leaf
// at once: with priors that never tie, the same visits at the root, the
// same priors on the edges of every node both expanded, and nodes left
// deferred where the eager tree has edges nobody visited; and fewer
// bytes. The second search reuses the first one's tree.
func TestDeferredExpansionMatchesEager(t *testing.T) {
	g := games.MustNew("connect4")
	o := DefaultOptions()
	o.Rule, o.Eval, o.ExpandVisits, o.Sims, o.Reuse = PUCT, hashPriors{}, 0, 3000, true
	o.MaxNodes = 4 * o.Sims
	var stats [2][]ActionStat
	var priors [2]map[string]map[games.Action]float32
	var deferredNodes [2]int
	var bytes [2]int
	for i := range 2 {
		tr, err := New(g, o, 7)
		if err != nil {
			t.Fatal(err)
		}
		if !tr.deferring {
			t.Fatal("a PUCT tree expanding at evaluation does not defer")
		}
		tr.deferring = i == 1
		// Two searches, the second from the tree kept for the position
		// two plies on (tree reuse copies deferred nodes with their
		// priors).
		s := g.NewInitialState()
		tr.Search(context.Background(), s)
		for range 2 {
			s.Apply(tr.RootStats(s.CurrentPlayer(), nil)[0].Action)
		}
		tr.Search(context.Background(), s)
		if tr.Stats().Priors == 0 && i == 1 {
			t.Error("no deferred priors after the reused search")
		}
		stats[i] = tr.RootStats(s.CurrentPlayer(), nil)
		priors[i], deferredNodes[i] = priorsByPath(tr)
		bytes[i] = tr.Stats().Bytes
	}
	if len(stats[0]) != len(stats[1]) {
		t.Fatalf("root statistics: eager %v, deferring %v", stats[0], stats[1])
	}
	for i := range stats[0] {
		if stats[0][i].Action != stats[1][i].Action || stats[0][i].Visits != stats[1][i].Visits {
			t.Fatalf("root statistics: eager %v, deferring %v", stats[0], stats[1])
		}
	}
	if deferredNodes[0] != 0 || deferredNodes[1] == 0 {
		t.Errorf("deferred nodes: %d eager, %d deferring", deferredNodes[0], deferredNodes[1])
	}
	both := 0
	for path, want := range priors[0] {
		got, ok := priors[1][path]
		if !ok {
			continue
		}
		both++
		if len(got) != len(want) {
			t.Fatalf("node %q: %d edges deferring, %d eager", path, len(got), len(want))
		}
		for a, p := range want {
			if got[a] != p {
				t.Fatalf("node %q action %d: prior %v deferring, %v eager", path, a, got[a], p)
			}
		}
	}
	if both != len(priors[1]) || both+deferredNodes[1] > len(priors[0]) {
		t.Errorf("%d nodes expanded by both trees, %d by the deferring one, %d (+ %d deferred) by the eager one", both, len(priors[1]), len(priors[0]), deferredNodes[1])
	}
	if bytes[1] >= bytes[0] {
		t.Errorf("deferring tree %d bytes, eager %d", bytes[1], bytes[0])
	}
}
