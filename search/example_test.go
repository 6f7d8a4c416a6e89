package search_test

import (
	"context"
	"fmt"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/tictactoe"
	"github.com/canopy-go/canopy/search"
)

// A UCT search from a tictactoe position where X (cells 1, 2) wins at 3.
func Example() {
	g := games.MustNew("tictactoe")
	s, _ := g.ParseState("1425")
	o := search.DefaultOptions()
	o.Sims = 2000
	tr, err := search.New(g, o, 1)
	if err != nil {
		panic(err)
	}
	tr.Search(context.Background(), s)
	best := tr.RootStats(s.CurrentPlayer(), nil)[0]
	fmt.Println("play", s.ActionString(best.Action), "Q > 0.9:", best.Q > 0.9)
	// Output: play 3 Q > 0.9: true
}

// A driver that runs the pipeline itself, as a batched network evaluator
// would: select a leaf, evaluate it elsewhere, back it up.
func ExampleTree_SelectLeaf() {
	g := games.MustNew("tictactoe")
	o := search.DefaultOptions()
	o.Rule, o.Eval = search.PUCT, search.Uniform{}
	tr, _ := search.New(g, o, 1)
	tr.Prepare(g.NewInitialState())
	w := tr.NewWalker(7)
	for range 100 {
		var priors []float32
		if tr.SelectLeaf(w) { // (1)
			if o.Eval.Evaluate(w.Ctx, w.State, w.Value, w.Priors) { // (2)
				priors = w.Priors
			}
		}
		tr.Backup(w, w.Value, priors) // (3)
	}
	total := 0
	for _, st := range tr.RootStats(0, nil) {
		total += st.Visits
	}
	fmt.Println(total)
	// Output: 100
}
