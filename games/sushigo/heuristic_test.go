package sushigo

import (
	"testing"

	"github.com/canopy-go/canopy/games"
)

// HeuristicValue is the sushigo-heuristic agent's gain (the function
// Heuristic agrees), for every player at joint nodes and for the mover in
// the sequential view; 0 for illegal actions and players out of range. It
// leaves the state alone and does not allocate.
func TestHeuristicValue(t *testing.T) {
	for _, gs := range []string{"sushigo", "sushigo-seq"} {
		g := games.MustNew(gs)
		rng := games.NewRand(11)
		m := games.NewMask(g.NumActions())
		s := g.NewInitialState().(*State)
		joint := make([]games.Action, g.NumPlayers())
		for !s.IsTerminal() {
			switch p := s.CurrentPlayer(); p {
			case games.ChancePlayer:
				s.Apply(s.SampleChance(rng))
				continue
			case games.SimultaneousPlayer:
				for q := range joint {
					s.LegalFor(q, m)
					check(t, s, q, m)
					joint[q] = m.Random(rng)
				}
				s.ApplyJoint(joint)
			default:
				s.Legal(m)
				check(t, s, p, m)
				s.Apply(m.Random(rng))
			}
		}
	}
}

func check(t *testing.T, s *State, p int, legal games.Mask) {
	t.Helper()
	h := s.Hash()
	for a := range games.Action(NumActions) {
		v := s.HeuristicValue(p, a)
		switch {
		case !legal.Has(a) && v != 0:
			t.Fatalf("illegal %s for player %d: HeuristicValue %v, want 0", s.ActionString(a), p, v)
		case legal.Has(a) && v != gain(&s.c, p, a, true):
			t.Fatalf("%s for player %d: HeuristicValue %v, agent gain %v", s.ActionString(a), p, v, gain(&s.c, p, a, true))
		}
	}
	if s.HeuristicValue(-1, 0) != 0 || s.HeuristicValue(int(s.c.np), 0) != 0 {
		t.Fatal("players out of range score non-zero")
	}
	if s.Hash() != h {
		t.Fatal("HeuristicValue modified the state")
	}
	if n := testing.AllocsPerRun(10, func() { s.HeuristicValue(p, 0) }); n != 0 {
		t.Fatalf("HeuristicValue allocates %v times", n)
	}
}

// StateValue: zero outside the players, the final score once the game is
// over, and without allocation; during the game it adds this round's
// position to the running score, so it never equals the bare running
// score while a player holds a completed set of the round (checked on
// every position of random games where one holds a sashimi triple).
func TestStateValue(t *testing.T) {
	g := games.MustNew("sushigo:players=2")
	rng := games.NewRand(5)
	m := games.NewMask(g.NumActions())
	final := make([]float64, 2)
	joint := make([]games.Action, 2)
	checked := 0
	for range 20 {
		s := g.NewInitialState().(*State)
		for !s.IsTerminal() {
			for p := range 2 {
				if s.c.table[p][Sashimi] < 3 {
					continue
				}
				checked++
				if s.StateValue(p) <= float64(s.c.score[p]) {
					t.Fatalf("player %d holds %d sashimi: StateValue %v, running score %d", p, s.c.table[p][Sashimi], s.StateValue(p), s.c.score[p])
				}
			}
			games.RandomStep(s, rng, m, joint)
		}
		s.Scores(final)
		for p := range 2 {
			if v := s.StateValue(p); v != final[p] {
				t.Errorf("game over: StateValue(%d) = %v, final score %v", p, v, final[p])
			}
		}
		if s.StateValue(-1) != 0 || s.StateValue(2) != 0 {
			t.Error("StateValue of a player out of range is not 0")
		}
	}
	if checked == 0 {
		t.Fatal("no position with a sashimi triple in 20 random games: the check never ran")
	}
	s := g.NewInitialState().(*State)
	if n := testing.AllocsPerRun(10, func() { _ = s.StateValue(1) }); n != 0 {
		t.Errorf("StateValue allocates %v times", n)
	}
}
