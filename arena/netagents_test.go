package arena_test

import (
	"context"
	"github.com/canopy-go/canopy/agent"
	"reflect"
	"testing"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/tictactoe"
	"github.com/canopy-go/canopy/search/engine"
)

// A tournament of network agents gives the same games whatever the
// number of concurrent games: every search is lock-step and the CPU
// network's per-row outputs do not depend on the batch they ride in.
func TestNetworkArenaReproducible(t *testing.T) {
	g := games.MustNew("tictactoe")
	agents := []string{"az:net=init,backend=cpu,sims=24,tempplies=4", "policy:net=init,backend=cpu,temp=1", "mcts:sel=puct,eval=init,sims=24"}
	pool := engine.NewPool(engine.PoolOptions{})
	run := func(parallel int) *arena.TournamentResult {
		r, err := arena.Tournament(context.Background(), g, arena.TournamentConfig{Agents: agents, Env: agent.Env{}.With(pool), Games: 6, Seed: 3, Parallel: parallel, Bootstrap: -1})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run(1), run(6)
	if !reflect.DeepEqual(a.Pairwise, b.Pairwise) || !reflect.DeepEqual(a.Length, b.Length) {
		t.Errorf("results differ between 1 and 6 concurrent games:\n%+v\n%+v", a.Pairwise, b.Pairwise)
	}
	if n := pool.Open(); n != 0 {
		t.Errorf("%d shared engines still open after the tournaments", n)
	}
}
