package search

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/tetrislink"
)

// A simulation on a warmed tree allocates nothing, for every selection
// rule and for evaluator-driven (expand at evaluation) search.
func TestZeroAllocsPerSimulation(t *testing.T) {
	for _, gs := range []string{"connect4", "tictactoe", "tetrislink:players=3"} {
		g := games.MustNew(gs)
		for _, rule := range []Rule{UCT, UCB1Tuned, PUCT, RAVE, PoolRAVE, AlphaAMAF} {
			o := DefaultOptions()
			o.Rule, o.Sims, o.MaxNodes = rule, 200, 100000
			if rule == PUCT {
				o.Eval = Uniform{}
			}
			tr, err := New(g, o, 1)
			if err != nil {
				t.Fatal(err)
			}
			tr.Search(context.Background(), g.NewInitialState())
			w := tr.walkers[0]
			if n := testing.AllocsPerRun(200, func() { tr.simulate(w) }); n != 0 {
				t.Errorf("%s %v: %v allocations per simulation", gs, rule, n)
			}
		}
	}
}

// The record sizes the package documents (doc.go, Memory layout).
func TestRecordSizes(t *testing.T) {
	if NodeBytes != 20 || EdgeBytes != 24 || EdgeExtBytes != 24 {
		t.Errorf("node %d bytes, edge %d bytes, extension %d bytes; doc.go says 20, 24 and 24", NodeBytes, EdgeBytes, EdgeExtBytes)
	}
}

// TestVirtualLossesOnlyWithWalkers: a tree keeps virtual-loss counts (4
// bytes per edge) from its second walker on, and not before; Stats counts
// them.
func TestVirtualLossesOnlyWithWalkers(t *testing.T) {
	g := games.MustNew("connect4")
	o := DefaultOptions()
	o.Rule, o.Sims, o.Eval = PUCT, 200, Uniform{}
	tr, err := New(g, o, 1)
	if err != nil {
		t.Fatal(err)
	}
	tr.Search(context.Background(), g.NewInitialState())
	st := tr.Stats()
	if tr.virtual || len(tr.a.vl) != 0 || st.Bytes != st.Nodes*NodeBytes+st.Edges*EdgeBytes+4*st.Priors {
		t.Fatalf("one walker: virtual=%v, %d counts, %d bytes for %+v", tr.virtual, len(tr.a.vl), st.Bytes, st)
	}
	ws := tr.Walkers(2)
	if !tr.virtual || len(tr.a.vl) != len(tr.a.edges) {
		t.Fatalf("two walkers: virtual=%v, %d counts for %d edges", tr.virtual, len(tr.a.vl), len(tr.a.edges))
	}
	if st := tr.Stats(); st.Bytes != st.Nodes*NodeBytes+st.Edges*(EdgeBytes+4)+4*st.Priors {
		t.Errorf("two walkers: %d bytes for %+v", st.Bytes, st)
	}
	// Two leaves in flight: the second sees the first's virtual loss.
	tr.SelectLeaf(ws[0])
	tr.SelectLeaf(ws[1])
	if e := ws[0].path[0].edge; tr.a.vl[e] < 1 {
		t.Errorf("edge %d taken by a leaf in flight has %d virtual losses", e, tr.a.vl[e])
	}
	tr.Backup(ws[0], ws[0].Value, nil)
	tr.Backup(ws[1], ws[1].Value, nil)
	for i := range tr.a.numEdges {
		if tr.a.vl[i] != 0 {
			t.Fatalf("edge %d keeps %d virtual losses after the backups", i, tr.a.vl[i])
		}
	}
}
