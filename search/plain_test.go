package search

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)

// The unshared plain-UCT descent (descendPlain, selectUCTPlain, the
// uniform-prior expansion) must build exactly the tree of the general
// loop, which a shared tree takes: same seed, same simulations, same edge
// statistics everywhere.
func TestPlainUCTMatchesGeneralLoop(t *testing.T) {
	for _, gs := range []string{"tictactoe", "connect4"} {
		g := games.MustNew(gs)
		o := DefaultOptions()
		o.Sims = 3000
		plain, err := New(g, o, 7)
		if err != nil {
			t.Fatal(err)
		}
		s := g.NewInitialState()
		if n := plain.Search(context.Background(), s); n != o.Sims {
			t.Fatalf("%s: %d simulations, want %d", gs, n, o.Sims)
		}

		general, err := New(g, o, 7)
		if err != nil {
			t.Fatal(err)
		}
		general.Prepare(s)
		general.SetShared(true) // atomic statistics: the general loop and selectUCT
		w := general.walkers[0]
		for range o.Sims {
			general.simulate(w)
		}
		general.SetShared(false)

		pa, ga := plain.a, general.a
		if pa.numNodes != ga.numNodes || pa.numEdges != ga.numEdges {
			t.Fatalf("%s: plain tree has %d nodes, %d edges; general %d, %d", gs, pa.numNodes, pa.numEdges, ga.numNodes, ga.numEdges)
		}
		for i := range pa.numEdges {
			if pa.hot[i] != ga.hot[i] || pa.edges[i] != ga.edges[i] {
				t.Fatalf("%s: edge %d differs: plain %+v %+v, general %+v %+v", gs, i, pa.hot[i], pa.edges[i], ga.hot[i], ga.edges[i])
			}
		}
		for i := range pa.numNodes {
			if pa.nodes[i] != ga.nodes[i] {
				t.Fatalf("%s: node %d differs: plain %+v, general %+v", gs, i, pa.nodes[i], ga.nodes[i])
			}
		}
	}
}
