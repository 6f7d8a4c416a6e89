package search

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// Tree reuse: after searching P, preparing a position two plies below P
// keeps that subtree (same visit counts, compacted into the other arena),
// and a position that does not descend from P starts afresh.
func TestTreeReuse(t *testing.T) {
	g := games.MustNew("connect4")
	o := DefaultOptions()
	o.Sims, o.Reuse = 5000, true
	tr, err := New(g, o, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := g.ParseState("44")
	tr.Search(context.Background(), p)
	// The most visited grandchild of the root.
	var best struct {
		node int32
		n    int32
		a, b games.Action
	}
	rn := &tr.a.nodes[tr.root]
	for i := rn.firstEdge; i < rn.firstEdge+rn.numEdges; i++ {
		c := tr.a.edges[i].child
		if c == NilNode || tr.a.nodes[c].state != expanded {
			continue
		}
		cn := &tr.a.nodes[c]
		for j := cn.firstEdge; j < cn.firstEdge+cn.numEdges; j++ {
			if gc := tr.a.edges[j].child; gc != NilNode && tr.a.nodes[gc].n > best.n {
				best.node, best.n, best.a, best.b = gc, tr.a.nodes[gc].n, tr.a.edges[i].action, tr.a.edges[j].action
			}
		}
	}
	if best.n < 10 {
		t.Fatalf("no well-visited grandchild (best %d)", best.n)
	}
	before := tr.Stats().Nodes
	next := p.Clone()
	next.Apply(best.a)
	next.Apply(best.b)
	tr.Prepare(next)
	if got := tr.a.nodes[tr.root].n; got != best.n {
		t.Errorf("reused root has %d visits, want %d", got, best.n)
	}
	if after := tr.Stats().Nodes; after >= before || after < int(best.n)/2 {
		t.Errorf("compaction kept %d of %d nodes (subtree root had %d visits)", after, before, best.n)
	}
	// The reused tree keeps searching correctly.
	if n := tr.Search(context.Background(), next); n != 5000 {
		t.Errorf("search after reuse ran %d simulations", n)
	}
	// An unrelated position: fresh tree.
	other, _ := g.ParseState("1")
	tr.Prepare(other)
	if got := tr.a.nodes[tr.root].n; got != 0 {
		t.Errorf("unrelated position reused a tree with %d visits", got)
	}
}
