package hex

import (
	"context"
	"slices"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
)

const F = Far

// Hand-worked two-distances on 3x3 boards, indexed by action id
// (row-major: a1 b1 c1 / a2 b2 c2 / a3 b3 c3); -1 marks a stone.
//
// Empty board, Black from the top: row 1 touches the edge (1). a2 sees a1,
// b1 (second best 1 -> 2); b2 sees b1, c1 (-> 2); c2 sees only c1 at 1,
// then b2 at 2 (-> 3). a3 sees a2, b2 (-> 3); b3 sees b2 = 2, then c2 and
// a3 at 3 (-> 4); c3 sees c2 = 3 and b3 = 4 (-> 5). From the bottom it is
// the same rotated by 180 degrees. Sums: 6 5 4 / 5 4 5 / 4 5 6, so the
// potential is 4 (the short diagonal c1 b2 a3). White's values are
// Black's transposed, (r, c) -> (c, r), since transposition maps the
// top-bottom goal onto the left-right goal and keeps adjacency.
//
// Black stone on b2: its empty neighbours (b1 c1 a2 c2 a3 b3) become
// mutually adjacent. From the top: row 1 is 1; a2, c2, a3, b3 see b1 and
// c1 through the stone (-> 2); c3 is not adjacent to b2 ((r+1, c+1) is not
// a hex neighbour) and sees c2, b3 at 2 (-> 3). Bottom by the 180-degree
// rotation. Potential min(a1: 1+3, b1: 1+2, ...) = 3.
// White with Black on b2: from the left column a is 1, b1 sees a1 and a2
// (-> 2); nothing else has two settled neighbours (b3 sees only a3, c1
// only b1), so the rest is Far. From the right symmetrically only b3 gets
// 2. No cell has both distances finite: potential Far.
func TestTwoDistancesHandWorked(t *testing.T) {
	g := mustGame(t, "hex:size=3")
	for _, c := range []struct {
		notation     string
		player       int
		fromA, fromB []int
		potential    int
	}{
		{"", 0, []int{1, 1, 1, 2, 2, 3, 3, 4, 5}, []int{5, 4, 3, 3, 2, 2, 1, 1, 1}, 4},
		{"", 1, []int{1, 2, 3, 1, 2, 4, 1, 3, 5}, []int{5, 3, 1, 4, 2, 1, 3, 2, 1}, 4},
		{"b2", 0, []int{1, 1, 1, 2, -1, 2, 2, 2, 3}, []int{3, 2, 2, 2, -1, 2, 1, 1, 1}, 3},
		{"b2", 1, []int{1, 2, F, 1, -1, F, 1, F, F}, []int{F, F, 1, F, -1, 1, F, 2, 1}, F},
	} {
		s := mustParse(t, g, c.notation)
		a, b, pot := TwoDistances(s, c.player)
		if !slices.Equal(a, c.fromA) || !slices.Equal(b, c.fromB) || pot != c.potential {
			t.Errorf("%q player %d: got %v %v potential %d, want %v %v %d", c.notation, c.player, a, b, pot, c.fromA, c.fromB, c.potential)
		}
	}
}

// 2x2 with Black on b2 and White on a1. From the top: b1 touches the edge
// (1); a2's neighbours are a1 (White, removed), b1, and b2 (Black), whose
// empty neighbours are b1 and a2, so a2 sees only b1 and stays Far. From
// the bottom: a2 touches the edge and b1 touches the Black stone b2 on the
// bottom row, so both are 1. Potential: b1 = 1 + 1 = 2 (b1 wins at once).
func TestTwoDistancesThroughStones(t *testing.T) {
	g := mustGame(t, "hex:size=2")
	s := mustParse(t, g, "b2 a1")
	a, b, pot := TwoDistances(s, 0)
	if !slices.Equal(a, []int{-1, 1, F, -1}) || !slices.Equal(b, []int{-1, 1, 1, -1}) || pot != 2 {
		t.Errorf("got %v %v %d", a, b, pot)
	}
	// A player who has connected has potential 0.
	if _, _, pot := TwoDistances(mustParse(t, g, "b2 a1 b1"), 0); pot != 0 {
		t.Errorf("connected Black: potential %d, want 0", pot)
	}
}

func TestHexDistTakesWin(t *testing.T) {
	g := mustGame(t, "hex:size=3")
	s := mustParse(t, g, "a1 b1 a2 b2") // a3 completes column a
	for seed := range uint64(5) {
		a, err := NewHexDist(g, seed).Act(context.Background(), s, 0)
		if err != nil || s.ActionString(a) != "a3" {
			t.Errorf("seed %d: %s %v, want a3", seed, s.ActionString(a), err)
		}
	}
}

func TestHexDistErrors(t *testing.T) {
	g := mustGame(t, "hex:size=3")
	h := NewHexDist(g, 1)
	if _, err := h.Act(context.Background(), mustParse(t, g, "a1 b1 a2 b2 a3"), 1); err == nil {
		t.Error("Act at a terminal state succeeded")
	}
	if _, err := h.Act(context.Background(), g.NewState(), 1); err == nil {
		t.Error("Act for the wrong player succeeded")
	}
	if _, err := h.Act(context.Background(), mustGame(t, "hex:size=4").NewState(), 0); err == nil {
		t.Error("Act on another board size succeeded")
	}
	if _, err := agent.New(g, "hexdist:depth=2", agent.Env{Seed: 1}); err == nil {
		t.Error("unknown option accepted")
	}
}

func TestHexDistAnalyze(t *testing.T) {
	g := mustGame(t, "hex:size=3")
	rows, err := NewHexDist(g, 1).Analyze(context.Background(), g.NewState(), 0)
	if err != nil || len(rows) != 9 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	// After Black b2, White's potential is Far and Black's 3 (see above).
	if rows[4].Action != g.Cell(1, 1) || rows[4].Score != Far-3 {
		t.Errorf("b2 row %+v, want score %d", rows[4], Far-3)
	}
}

// play returns the winner of a game between two agents.
func play(t *testing.T, g games.Game, first, second agent.Agent) int {
	s := g.NewInitialState()
	seats := [2]agent.Agent{first, second}
	for !s.IsTerminal() {
		p := s.CurrentPlayer()
		a, err := seats[p].Act(context.Background(), s, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := games.ApplyChecked(s, a); err != nil {
			t.Fatal(err)
		}
	}
	return s.(*State).Winner()
}

func TestHexDistBeatsRandom(t *testing.T) {
	g := games.MustNew("hex:size=5")
	wins := 0
	for seed := range uint64(20) {
		h, err := agent.New(g, "hexdist", agent.Env{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if play(t, g, h, agent.NewRandom(g, 100+seed)) == 0 {
			wins++
		}
	}
	if wins < 17 {
		t.Errorf("hexdist won %d of 20 games against random as first player on 5x5, want at least 17", wins)
	}
	t.Logf("hexdist won %d/20 as first player", wins)
}

func TestHexDistSwapGame(t *testing.T) {
	// Both seats hexdist with the pie rule on: the games end and every
	// move is legal (ApplyChecked).
	g := games.MustNew("hex:size=5,swap=true")
	for seed := range uint64(3) {
		a, _ := agent.New(g, "hexdist", agent.Env{Seed: seed})
		b, _ := agent.New(g, "hexdist", agent.Env{Seed: seed + 50})
		play(t, g, a, b)
	}
}

// walkLevels returns every level of the walkers (walk64 on boards of at
// most 64 cells, else walk3) in lv and their number.
func walkLevels(adj *[maxCells]board, empty, near board, lv *levelSets) int {
	n := 0
	if empty[1]|empty[2] == 0 {
		var w walk64
		w.start(empty[0], near[0])
		for l, ok := w.step(adj); ok; l, ok = w.step(adj) {
			lv[n] = board{l}
			n++
		}
		return n
	}
	var w walk3
	w.start(words(empty), words(near))
	for l, ok := w.step(adj); ok; l, ok = w.step(adj) {
		lv[n] = board{l.a, l.b, l.c}
		n++
	}
	return n
}

// The walkers (neighbourhoods pushed once per settled cell, as sets)
// compute the same two-distances as distances (settled neighbours counted
// per open cell and level), and potentialIn the minimum of their sums, on
// positions along random games of every size, for both players.
func TestLevelsMatchDistances(t *testing.T) {
	for n := MinSize; n <= MaxSize; n++ {
		g, err := New(n, false)
		if err != nil {
			t.Fatal(err)
		}
		rng := games.NewRand(uint64(100 + n))
		m := games.NewMask(g.NumActions())
		e := &evaluator{g: g}
		var lvA, lvB levelSets
		var dA, dB [maxCells]int32
		for range 3 {
			s := g.NewState()
			for !s.IsTerminal() {
				empty := g.full.andNot(s.stones[0].or(s.stones[1]))
				for p := range 2 {
					nearA, nearB := e.reduce(&s.stones, p)
					distances(&e.adj, empty, nearA, &dA)
					distances(&e.adj, empty, nearB, &dB)
					want := int32(Far)
					for c := range g.nn {
						if empty.has(c) {
							want = min(want, dA[c]+dB[c])
						}
					}
					got := potentialIn(&e.adj, empty, nearA, nearB, &lvA, &lvB)
					if got != int(want) {
						t.Fatalf("%s %q player %d: potential %d from levels, %d from distances", g.Spec(), s.String(), p, got, want)
					}
					nA := walkLevels(&e.adj, empty, nearA, &lvA)
					for c := range g.nn {
						if !empty.has(c) {
							continue
						}
						k := 0
						for k < nA && !lvA[k].has(c) {
							k++
						}
						if d := int32(k + 1); (k == nA && dA[c] != Far) || (k < nA && d != dA[c]) {
							t.Fatalf("%s %q player %d cell %s: level %d of %d, distance %d", g.Spec(), s.String(), p, s.ActionString(games.Action(c)), k, nA, dA[c])
						}
					}
				}
				s.Legal(m)
				s.Apply(m.Random(rng))
			}
		}
	}
}
