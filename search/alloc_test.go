package search

import (
	"context"
	"testing"
	"unsafe"

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
	if NodeBytes != 20 || EdgeBytes != 24 || EdgeExtBytes != 24 || unsafe.Sizeof(edgeStats{}) != 16 {
		t.Errorf("node %d bytes, edge %d bytes, extension %d bytes; doc.go says 20, 24 (16 of them hot) and 24", NodeBytes, EdgeBytes, EdgeExtBytes)
	}
}
