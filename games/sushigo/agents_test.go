package sushigo

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
)

// playGame plays one game with one agent per seat and returns the returns.
func playGame(t *testing.T, g games.Game, seats []agent.Agent, seed uint64) []float64 {
	t.Helper()
	rng := games.NewRand(seed)
	s := g.NewInitialState()
	joint := make([]games.Action, g.NumPlayers())
	ctx := context.Background()
	for !s.IsTerminal() {
		switch p := s.CurrentPlayer(); p {
		case games.ChancePlayer:
			s.Apply(s.(games.ChanceState).SampleChance(rng))
		case games.SimultaneousPlayer:
			for q, a := range seats {
				x, err := a.Act(ctx, s, q)
				if err != nil {
					t.Fatal(err)
				}
				joint[q] = x
			}
			s.(games.SimultaneousState).ApplyJoint(joint)
		default:
			a, err := seats[p].Act(ctx, s, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := games.ApplyChecked(s, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	ret := make([]float64, g.NumPlayers())
	s.Returns(ret)
	return ret
}

// TestAgentsBeatRandom: each agent in seat 0 against three random players
// must average a clearly positive return (random play averages 0).
func TestAgentsBeatRandom(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 20
	}
	for _, name := range []string{"sushigo-greedy", "sushigo-heuristic"} {
		for _, gname := range []string{"sushigo", "sushigo-seq"} {
			g := games.MustNew(gname)
			sum := 0.0
			for i := range n {
				seats := make([]agent.Agent, 4)
				var err error
				if seats[0], err = agent.New(g, name, agent.Env{Seed: uint64(i)}); err != nil {
					t.Fatal(err)
				}
				for q := 1; q < 4; q++ {
					seats[q] = agent.NewRandom(g, uint64(100*i+q))
				}
				sum += playGame(t, g, seats, uint64(i))[0]
			}
			t.Logf("%s on %s: average return %.3f over %d games vs 3 random", name, gname, sum/float64(n), n)
			if avg := sum / float64(n); avg < 0.4 {
				t.Errorf("%s on %s: average return %.2f against random, want >= 0.4", name, gname, avg)
			}
		}
	}
}

// TestHeuristicPreferences pins a few choices every sensible heuristic
// makes, worked out from the rules.
func TestHeuristicPreferences(t *testing.T) {
	g := New(2, false)
	parse := func(n string) *State {
		s, err := g.ParseState(n)
		if err != nil {
			t.Fatal(err)
		}
		return s.(*State)
	}
	// Player 0 holds SSS's third sashimi opportunity: sashimi (+10 at once)
	// beats a lone tempura.
	s := parse("round=1 hands=TS/TE table=SSDDDDDD/DDDDDDDD pudding=0,0 score=0,0 deck=" + deckMinus("TSTESSDDDDDDDDDDDDDD"))
	if hs, ht := s.HeuristicValue(0, PickAction(Sashimi)), s.HeuristicValue(0, PickAction(Tempura)); hs <= ht {
		t.Errorf("completing sashimi %.2f should beat a tempura %.2f", hs, ht)
	}
	// With an open wasabi, squid (9) beats egg (3).
	s = parse("round=1 hands=EQT/TTT table=WDDDDDD/DDDDDDD pudding=0,0 score=0,0 deck=" + deckMinus("EQTTTTWDDDDDDDDDDDDD"))
	if hq, he := s.HeuristicValue(0, PickAction(Squid)), s.HeuristicValue(0, PickAction(Egg)); hq <= he {
		t.Errorf("squid on wasabi %.2f should beat egg %.2f", hq, he)
	}
	// Early in the round a wasabi with salmon in view is worth more than a
	// plain egg.
	s = parse("round=1 hands=WETTTTTTTT/NNDDDDDDDD table=-/- pudding=0,0 score=0,0 deck=" + deckMinus("WETTTTTTTTNNDDDDDDDD"))
	if hw, he := s.HeuristicValue(0, PickAction(Wasabi)), s.HeuristicValue(0, PickAction(Egg)); hw <= he {
		t.Errorf("early wasabi %.2f should beat an egg %.2f", hw, he)
	}
	if s.HeuristicValue(0, PickAction(Squid)) != 0 {
		t.Error("illegal action should score 0")
	}
	// Greedy takes the immediate points: the second tempura of a pair.
	s = parse("round=1 hands=TE/DD table=TDDDDDDD/DDDDNNSS pudding=0,0 score=0,0 deck=" + deckMinus("TEDDTDDDDDDDDDDDNNSS"))
	a, _ := agent.New(g, "sushigo-greedy", agent.Env{Seed: 1})
	if x, err := a.Act(context.Background(), s, 0); err != nil || x != PickAction(Tempura) {
		t.Errorf("greedy chose %s (%v), want tempura", actionText(x), err)
	}
}

func TestHeuristicNoAllocAndErrors(t *testing.T) {
	s := midRound(false, 21, 2)
	m := games.NewMask(NumActions)
	s.LegalFor(1, m)
	a := m.First()
	if n := testing.AllocsPerRun(100, func() { _ = s.HeuristicValue(1, a) }); n != 0 {
		t.Errorf("Heuristic allocates %.1f times", n)
	}
	g := New(4, false)
	ag, err := agent.New(g, "sushigo-heuristic", agent.Env{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Act(context.Background(), g.NewInitialState(), 0); err == nil {
		t.Error("agent acted at a chance node")
	}
	if _, err := agent.New(games.MustNew("sushigo-seq"), "sushigo-greedy", agent.Env{Seed: 1}); err != nil {
		t.Errorf("greedy on sushigo-seq: %v", err)
	}
	seq := midRound(true, 22, 1)
	if _, err := ag.Act(context.Background(), seq, 2); err == nil {
		t.Error("agent answered for a player who is not to move in the sequential view")
	}
}

func BenchmarkHeuristic(b *testing.B) {
	s := midRound(false, 21, 2)
	m := games.NewMask(NumActions)
	s.LegalFor(1, m)
	acts := m.AppendTo(nil)
	b.ReportAllocs()
	for b.Loop() {
		for _, a := range acts {
			_ = s.HeuristicValue(1, a)
		}
	}
	b.ReportMetric(float64(b.N*len(acts))/b.Elapsed().Seconds(), "evals/s")
}
