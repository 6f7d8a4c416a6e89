package rl

import (
	"math"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// Study 002's dense rewards on hand-made Connect Four positions. After
// 0 1 0 2 6 3 the first player (to move) holds a0, a1 (column 0) and g0;
// the second holds b0 c0 d0 and wins next at e0 (column 4). Playing 4
// blocks it (+0.1); playing 0 makes three in column 0, a new threat at a3
// (+0.05), but does not block; playing 5 does neither.
func TestShapingConnect4(t *testing.T) {
	g := connect4Game(t)
	s := g.NewInitialState()
	for _, a := range []games.Action{0, 1, 0, 2, 6, 3} {
		s.Apply(a)
	}
	sh := Study002Shaping()
	sc := newShapeScratch(g)
	legal := games.NewMask(7)
	s.Legal(legal)
	before := s.String()
	for _, c := range []struct {
		a    games.Action
		want float64
	}{{4, 0.1}, {0, 0.05}, {5, 0}, {1, 0}} {
		if r := sh.reward(&sc, s, 0, c.a, legal); math.Abs(r-c.want) > 1e-12 {
			t.Errorf("column %d: shaped reward %g, want %g", c.a, r, c.want)
		}
	}
	if s.String() != before {
		t.Fatal("reward modified the state")
	}
	// A threat that existed before the move is not a new one: after
	// 0 1 0 2 0 (three in column 0 for the first player) and 6, the
	// first player's move elsewhere creates nothing.
	s = g.NewInitialState()
	for _, a := range []games.Action{0, 1, 0, 2, 0, 6} {
		s.Apply(a)
	}
	s.Legal(legal)
	if r := (Shaping{Threat: 1}).reward(&sc, s, 0, 5, legal); r != 0 {
		t.Errorf("existing threat rewarded %g", r)
	}
}

// Shaped rewards reach the environment's rewards; without shaping every
// non-final step's reward is 0.
func TestEnvShaping(t *testing.T) {
	g := connect4Game(t)
	for _, sh := range []Shaping{{}, Study002Shaping()} {
		e, err := NewEnv(g, EnvOptions{N: 8, Seat: SeatAlternate, Seed: 2, Shaping: sh})
		if err != nil {
			t.Fatal(err)
		}
		acts := make([]games.Action, e.N())
		shaped := 0
		for k := range 400 {
			randomActions(e, acts, k)
			if err := e.Step(acts); err != nil {
				t.Fatal(err)
			}
			for i, r := range e.Rewards() {
				if !e.Dones()[i] && r != 0 {
					shaped++
					if r != 0.1 && r != 0.05 && math.Abs(float64(r)-0.15) > 1e-6 {
						t.Fatalf("non-final reward %g", r)
					}
				}
			}
		}
		if (sh == Shaping{}) != (shaped == 0) {
			t.Errorf("shaping %+v: %d shaped rewards", sh, shaped)
		}
	}
	if _, err := NewEnv(g, EnvOptions{Shaping: Shaping{Block: math.Inf(1)}}); err == nil {
		t.Error("infinite shaping accepted")
	}
}
