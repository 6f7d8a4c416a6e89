package search_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/hex"
	_ "github.com/canopy-go/canopy/games/sequence"
	_ "github.com/canopy-go/canopy/games/sushigo"
	_ "github.com/canopy-go/canopy/games/tetrislink"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/spec"
)

// The games whose states implement games.Heuristic.
var heuristicGames = []string{"tetrislink:players=3", "hex:size=5", "sequence", "sushigo", "sushigo-seq"}

// advance plays n random moves (chance included) from the initial state.
func advance(g games.Game, n int, seed uint64) games.State {
	s := g.NewInitialState()
	rng := games.NewRand(seed)
	m := games.NewMask(g.NumActions())
	joint := make([]games.Action, g.NumPlayers())
	for i := 0; i < n && !s.IsTerminal(); i++ {
		switch s.CurrentPlayer() {
		case games.ChancePlayer:
			s.Apply(s.(games.ChanceState).SampleChance(rng))
		case games.SimultaneousPlayer:
			ss := s.(games.SimultaneousState)
			for p := range joint {
				ss.LegalFor(p, m)
				joint[p] = m.Random(rng)
			}
			ss.ApplyJoint(joint)
		default:
			s.Legal(m)
			s.Apply(m.Random(rng))
		}
	}
	for s.CurrentPlayer() == games.ChancePlayer {
		s.Apply(s.(games.ChanceState).SampleChance(rng))
	}
	return s
}

// legalFor writes player's legal actions in s into m.
func legalFor(s games.State, player int, m games.Mask) {
	if ss, ok := s.(games.SimultaneousState); ok && s.CurrentPlayer() == games.SimultaneousPlayer {
		ss.LegalFor(player, m)
		return
	}
	s.Legal(m)
}

// With a dominant progressive bias, unvisited actions are tried in
// decreasing heuristic order: after one simulation the visited root
// action is one with the maximal heuristic value. At the joint nodes of
// simultaneous Sushi Go each player's segment carries that player's
// heuristic values (player 0 is checked here; TestProgressiveBiasSushiGo
// checks every player and the [0, 1] scaling).
func TestProgressiveBiasOrder(t *testing.T) {
	for _, gs := range heuristicGames {
		g := games.MustNew(gs)
		sp := "mcts:bias=1e6,sims=1"
		if g.Type().Information == games.ImperfectInformation {
			sp += ",det=1" // one deal: the mover's own hand decides its heuristic values
		}
		a, err := agent.New(g, sp, agent.Env{Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", gs, err)
		}
		s := advance(g, 6, 4) // a position with some structure
		p := max(s.CurrentPlayer(), 0)
		st, err := a.(*search.Agent).Stats(context.Background(), s, p)
		if err != nil {
			t.Fatalf("%s: %v", gs, err)
		}
		h := s.(games.Heuristic)
		m := games.NewMask(g.NumActions())
		legalFor(s, p, m)
		best := -1e300
		for act := range m.All() {
			best = max(best, h.HeuristicValue(p, act))
		}
		if got := h.HeuristicValue(p, st[0].Action); st[0].Visits != 1 || got != best {
			t.Errorf("%s: visited %s (h=%v, visits %d); best heuristic value %v",
				gs, s.ActionString(st[0].Action), got, st[0].Visits, best)
		}
	}
}

// Progressive bias and heuristic rollouts build through the agent spec for
// every game with the capability and play the first moves of a game
// (legal moves only); a game without it gets a clear error.
func TestHeuristicSpecs(t *testing.T) {
	for _, gs := range heuristicGames {
		g := games.MustNew(gs)
		for _, sp := range []string{
			"mcts:bias=1,sims=40",
			"mcts:rollout=heuristic,eps=0.2,sims=40,depth=30",
			"mcts:bias=0.5,sims=40,sel=ucb1tuned,rollout=heuristic,depth=30",
		} {
			var agents []agent.Agent
			for p := range g.NumPlayers() {
				a, err := agent.New(g, sp, agent.Env{Seed: uint64(p) + 1})
				if err != nil {
					t.Fatalf("%s %s: %v", gs, sp, err)
				}
				agents = append(agents, a)
			}
			playShort(t, g, agents, 8, gs+" "+sp)
		}
	}
	for _, gs := range []string{"connect4", "tictactoe"} {
		g, err := games.New(gs)
		if err != nil {
			continue // not linked into this test
		}
		for _, sp := range []string{"mcts:bias=1", "mcts:rollout=heuristic"} {
			_, err := agent.New(g, sp, agent.Env{Seed: 1})
			if err == nil || !strings.Contains(err.Error(), "no heuristic") {
				t.Errorf("%s %s: error %v, want one saying the game has no heuristic", gs, sp, err)
			}
		}
	}
}

// playShort plays up to moves decisions of a game between agents (one per
// player), checking that every move is legal.
func playShort(t *testing.T, g games.Game, agents []agent.Agent, moves int, name string) {
	t.Helper()
	ctx := context.Background()
	s := g.NewInitialState()
	rng := games.NewRand(9)
	m := games.NewMask(g.NumActions())
	joint := make([]games.Action, g.NumPlayers())
	for made := 0; made < moves && !s.IsTerminal(); {
		switch p := s.CurrentPlayer(); p {
		case games.ChancePlayer:
			s.Apply(s.(games.ChanceState).SampleChance(rng))
			continue
		case games.SimultaneousPlayer:
			for q := range joint {
				a, err := agents[q].Act(ctx, s, q)
				if err != nil {
					t.Fatalf("%s: player %d: %v", name, q, err)
				}
				legalFor(s, q, m)
				if !m.Has(a) {
					t.Fatalf("%s: player %d chose illegal %s", name, q, s.ActionString(a))
				}
				joint[q] = a
			}
			s.(games.SimultaneousState).ApplyJoint(joint)
		default:
			a, err := agents[p].Act(ctx, s, p)
			if err != nil {
				t.Fatalf("%s: player %d: %v", name, p, err)
			}
			if err := games.ApplyChecked(s, a); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		made++
	}
}

// A heuristic that can score all actions at once (games.HeuristicBatch,
// here Hex's) and the same heuristic asked one action at a time give the
// same search: progressive-bias priors and heuristic rollout moves alike,
// so the root statistics after a fixed-seed search are identical.
func TestHeuristicBatchSameSearch(t *testing.T) {
	g := games.MustNew("hex:size=6")
	s := advance(g, 7, 3)
	if _, ok := s.(games.HeuristicBatch); !ok {
		t.Fatal("hex states lack games.HeuristicBatch")
	}
	oneByOne := search.HeuristicFunc(func(s games.State, p int, a games.Action) float64 {
		return s.(games.Heuristic).HeuristicValue(p, a)
	})
	var stats [2][]search.ActionStat
	for i := range stats {
		sp, err := spec.Parse("mcts:sel=uct,bias=0.5,rollout=heuristic,eps=0.1,sims=400")
		if err != nil {
			t.Fatal(err)
		}
		o, err := search.ParseOptions(g, sp, agent.Env{})
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			o.Heuristic = oneByOne
			o.Eval.(*search.Rollout).Guide = oneByOne
		}
		tr, err := search.New(g, o, 5)
		if err != nil {
			t.Fatal(err)
		}
		tr.Search(context.Background(), s)
		stats[i] = tr.RootStats(s.CurrentPlayer(), nil)
	}
	if len(stats[0]) == 0 || !slices.Equal(stats[0], stats[1]) {
		t.Errorf("root statistics differ:\nbatch      %v\none by one %v", stats[0], stats[1])
	}
}
