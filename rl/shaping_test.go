package rl

import (
	"math"
	"strings"
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

// Study 000's rewards on a hand-made Sequence position (jacks=false). Row
// 6 of the board reads 9C QS 7C ...; player 0 holds a6 and b6, player 1
// holds b10, c10 and d10 next to the corner a10, an open four whose gap
// is e10 (5S). Player 0, to move: 7C@c6 lengthens its run from 2 to 3
// (+0.05), 5S@e10 blocks the four (+0.1), 3D@d8 does neither.
func TestShapingSequence(t *testing.T) {
	g := games.MustNew("sequence:jacks=false")
	board := "*bbb.....*/........../........../........../aa......../........../........../........../........../*........*"
	s, err := g.ParseState(board + " play:0 h=3D,7C,5S;KD d=- s=0,0 p=0 m=20")
	if err != nil {
		t.Fatal(err)
	}
	sh := StudyShaping(g)
	if sh != Study000Shaping() {
		t.Fatalf("StudyShaping(sequence) = %+v, want study 000's", sh)
	}
	sc := newShapeScratch(g)
	legal := games.NewMask(g.NumActions())
	s.Legal(legal)
	before := s.String()
	for _, c := range []struct {
		move string
		want float64
	}{{"7C@c6", 0.05}, {"5S@e10", 0.1}, {"3D@d8", 0}} {
		a, err := s.(interface {
			ParseAction(string) (games.Action, error)
		}).ParseAction(c.move)
		if err != nil {
			t.Fatal(err)
		}
		if !legal.Has(a) {
			t.Fatalf("%s is not legal in %s", c.move, s)
		}
		if r := sh.reward(&sc, s, 0, a, legal); math.Abs(r-c.want) > 1e-12 {
			t.Errorf("%s: shaped reward %g, want %g", c.move, r, c.want)
		}
		if allocs := testing.AllocsPerRun(20, func() { sh.reward(&sc, s, 0, a, legal) }); allocs != 0 {
			t.Errorf("%s: reward allocates %g times", c.move, allocs)
		}
	}
	if s.String() != before {
		t.Fatal("reward modified the state")
	}
	c4 := connect4Game(t)
	if StudyShaping(c4) != Study002Shaping() {
		t.Errorf("StudyShaping(connect4) = %+v, want study 002's", StudyShaping(c4))
	}
	if _, err := NewEnv(c4, EnvOptions{Shaping: Study000Shaping()}); err == nil || !strings.Contains(err.Error(), "measures lines") {
		t.Errorf("study 000's shaping on connect4: %v, want a refusal naming the missing line measure", err)
	}
}
