package solver

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/connect4"
)

func TestAgentPlaysOptimally(t *testing.T) {
	g := games.MustNew("connect4")
	ag, err := agent.New(g, "solver", agent.Env{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	an, ok := ag.(agent.Analyzer)
	if !ok {
		t.Fatal("solver agent does not implement agent.Analyzer")
	}
	ctx := context.Background()
	s := sharedSolver()
	for _, l := range readLines(t, "solver_L3_R1.txt", 30) {
		st, err := g.ParseState(l.moves)
		if err != nil {
			t.Fatal(err)
		}
		a, err := ag.Act(ctx, st, st.CurrentPlayer())
		if err != nil {
			t.Fatal(err)
		}
		// The chosen move must keep the reference score.
		if got := s.ScoreMove(l.pos, int(a)); got != l.score {
			t.Errorf("%s: agent played %d scoring %d, best is %d", l.moves, a+1, got, l.score)
		}
		rows, err := an.Analyze(ctx, st, st.CurrentPlayer())
		if err != nil {
			t.Fatal(err)
		}
		best := -1000.0
		for _, r := range rows {
			best = max(best, r.Score)
		}
		if int(best) != l.score {
			t.Errorf("%s: Analyze best %v, want %d", l.moves, best, l.score)
		}
	}
}

func TestAgentErrors(t *testing.T) {
	g := connect4.New()
	ag := NewAgent(1)
	over, _ := g.ParseState("1212121")
	if _, err := ag.Act(context.Background(), over, 0); err == nil {
		t.Error("Act on a finished game: no error")
	}
	st, _ := g.ParseState("4")
	if _, err := ag.Act(context.Background(), st, 0); err == nil {
		t.Error("Act for the wrong player: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ag.Act(ctx, st, 1); err == nil {
		t.Error("Act with a cancelled context: no error")
	}
}

// Equal best moves are chosen at random: from a position where two columns
// both win at once, both must come up across seeds.
func TestAgentTieBreak(t *testing.T) {
	// X has b1 c1 d1 and is to move: columns 1 and 5 both win at once.
	st2, err := connect4.New().ParseState("223344")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[games.Action]bool{}
	for seed := range uint64(20) {
		a, err := NewAgent(seed).Act(context.Background(), st2, 0)
		if err != nil {
			t.Fatal(err)
		}
		seen[a] = true
	}
	if !seen[0] || !seen[4] || len(seen) != 2 {
		t.Errorf("winning moves chosen: %v, want columns 1 and 5 (ids 0 and 4)", seen)
	}
}

// With the built-in opening book the registered agent plays from the empty
// board, and as the first player it must win every game (Connect Four is a
// first-player win) against any opponent, here a random one.
func TestAgentWinsFromTheEmptyBoard(t *testing.T) {
	openingBook(t)
	g := games.MustNew("connect4")
	nGames := 3
	if testing.Short() {
		nGames = 1
	}
	for seed := range uint64(nGames) {
		ag, err := agent.New(g, "solver", agent.Env{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		opp, err := agent.New(g, "random", agent.Env{Seed: seed + 100})
		if err != nil {
			t.Fatal(err)
		}
		s := g.NewInitialState()
		for !s.IsTerminal() {
			mover := opp
			if s.CurrentPlayer() == 0 {
				mover = ag
			}
			a, err := mover.Act(context.Background(), s, s.CurrentPlayer())
			if err != nil {
				t.Fatal(err)
			}
			if err := games.ApplyChecked(s, a); err != nil {
				t.Fatal(err)
			}
		}
		ret := make([]float64, 2)
		s.Returns(ret)
		if ret[0] <= ret[1] {
			t.Fatalf("seed %d: the solver, moving first, did not win (returns %v)", seed, ret)
		}
	}
}
