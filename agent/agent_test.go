package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)

func act(t *testing.T, spec, notation string, seed uint64) games.Action {
	t.Helper()
	g := games.MustNew("tictactoe")
	s, err := g.ParseState(notation)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(g, spec, agent.Env{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	x, err := a.Act(context.Background(), s, s.CurrentPlayer())
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// Cells are numbered 1..9 row by row; action ids are 0..8.
func TestOneStepWinsAndBlocks(t *testing.T) {
	for seed := range uint64(20) {
		// X: 1,2 (ids 0,1); O: 4,5. X to move wins at 3 (id 2).
		if a := act(t, "onestep", "1425", seed); a != 2 {
			t.Fatalf("seed %d: onestep played %d, want the win at id 2", seed, a)
		}
		// X: 1,5; O: 3. O to move... X threatens 9 (id 8): O must block.
		if a := act(t, "onestep", "135", seed); a != 8 {
			t.Fatalf("seed %d: onestep played %d, want the block at id 8", seed, a)
		}
	}
}

func TestRandomIsLegalAndSeeded(t *testing.T) {
	seen := map[games.Action]bool{}
	for seed := range uint64(50) {
		a := act(t, "random", "5", seed)
		if a == 4 || a < 0 || a > 8 {
			t.Fatalf("illegal action %d", a)
		}
		if act(t, "random", "5", seed) != a {
			t.Fatal("same seed gave a different action")
		}
		seen[a] = true
	}
	if len(seen) < 5 {
		t.Errorf("random agent covered only %d of 8 moves in 50 seeds", len(seen))
	}
}

func TestNewErrors(t *testing.T) {
	g := games.MustNew("tictactoe")
	for spec, want := range map[string]string{
		"nosuch":     "unknown agent",
		"random:x=1": "unknown option",
		"":           "empty name",
		"onestep:":   "nothing after",
	} {
		if _, err := agent.New(g, spec, agent.Env{Seed: 1}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%q) = %v, want an error mentioning %q", spec, err, want)
		}
	}
}
