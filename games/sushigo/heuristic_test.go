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
		case v != Heuristic(s, p, a):
			t.Fatalf("Heuristic and HeuristicValue differ")
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
