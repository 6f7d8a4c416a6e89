package search

import (
	"context"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
)

// Agent specs are outside input: any string gives an agent or an error,
// never a panic, and a built agent plays a legal move.
func FuzzAgentSpec(f *testing.F) {
	for _, s := range []string{"mcts", "mcts:sel=ucb1tuned,c=0.7,sims=20", "mcts:sel=poolrave,poolk=3",
		"mcts:sel=puct,eval=uniform,dir=0.3", "mcts:sims=-1", "mcts:sel=", "mcts:c=x", "mcts:tt=true,reuse=true",
		"mcts:threads=2,root=2", "mcts:time=1ms", "mcts:det=2"} {
		f.Add(s)
	}
	g := games.MustNew("tictactoe")
	f.Fuzz(func(t *testing.T, sp string) {
		if !strings.HasPrefix(sp, "mcts") || strings.Contains(sp, "nodes") {
			return
		}
		a, err := agent.New(g, sp, agent.Env{Seed: 1})
		if err != nil {
			return
		}
		m := a.(*Agent)
		if m.opt.Sims > 200 || m.opt.Sims == 0 || m.opt.Time > 0 {
			return // keep each input fast
		}
		s := g.NewInitialState()
		act, err := a.Act(context.Background(), s, 0)
		if err != nil {
			t.Fatalf("%q: %v", sp, err)
		}
		mask := games.NewMask(9)
		s.Legal(mask)
		if !mask.Has(act) {
			t.Fatalf("%q: illegal move %d", sp, act)
		}
	})
}
