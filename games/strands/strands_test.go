package strands

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

func TestConformance(t *testing.T) {
	for _, side := range []int{4, 5, 6} {
		t.Run(fmt.Sprint("size=", side), func(t *testing.T) {
			gametest.Run(t, games.MustNew(fmt.Sprintf("strands:size=%d", side)), gametest.Options{})
		})
	}
}

func FuzzNotation(f *testing.F) { gametest.FuzzNotation(f, games.MustNew("strands:size=4")) }

func TestSpec(t *testing.T) {
	g := games.MustNew("strands")
	if g.Spec() != "strands:size=6" || g.NumActions() != 91 {
		t.Fatalf("default: %s with %d actions", g.Spec(), g.NumActions())
	}
	for _, bad := range []string{"strands:size=3", "strands:size=7", "strands:size=x", "strands:d=5"} {
		if _, err := games.New(bad); err == nil {
			t.Errorf("games.New(%q) accepted", bad)
		}
	}
}

func mustPlay(t *testing.T, s games.State, moves string) {
	t.Helper()
	for _, m := range strings.Fields(moves) {
		a, err := s.ParseAction(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := games.ApplyChecked(s, a); err != nil {
			t.Fatalf("%s: %v\n%s", m, err, s.(games.Drawer).Draw(-1))
		}
	}
}

// labelsOf returns the printed numbers of the cells in m.
func labelsOf(b *Board, m games.Mask) map[int]int {
	out := map[int]int{}
	for a := range m.All() {
		out[int(b.Label[a])]++
	}
	return out
}

func TestOpening(t *testing.T) {
	for side, twos := range map[int]int{4: 18, 5: 18, 6: 36} {
		g, _ := New(side)
		s := g.NewInitialState().(*State)
		m := games.NewMask(g.NumActions())
		s.Legal(m)
		if got := labelsOf(g.b, m); len(got) != 1 || got[2] != twos {
			t.Errorf("side %d opening: legal cells by label %v, want only the %d cells marked 2", side, got, twos)
		}
		if s.CurrentPlayer() != 0 || !s.EndsTurn() || s.TurnNumber() != 0 {
			t.Errorf("side %d opening: player %d, EndsTurn %v, turn %d", side, s.CurrentPlayer(), s.EndsTurn(), s.TurnNumber())
		}
		s.Apply(m.First())
		s.Legal(m)
		if s.CurrentPlayer() != 1 || s.TurnNumber() != 1 || s.StepInTurn() != 0 || m.Count() != g.b.N-1 {
			t.Errorf("side %d after the opening: player %d turn %d step %d, %d legal cells (want White, turn 1, step 0, %d)",
				side, s.CurrentPlayer(), s.TurnNumber(), s.StepInTurn(), m.Count(), g.b.N-1)
		}
	}
}

func TestTurnStructure(t *testing.T) {
	// Side 4 has six cells marked 4 (the corners a4 d1 g1 a7 d7 g4) and
	// the centre d4 marked 1.
	g, _ := New(4)
	s := g.NewInitialState().(*State)
	m := games.NewMask(g.NumActions())
	mustPlay(t, s, "d3") // Black's opening on a 2
	if s.EndsTurn() {
		t.Fatal("EndsTurn true before White's first pick although most picks take several stones")
	}
	// White picks a 4: four stones on cells marked 4.
	for i, c := range []string{"a4", "d1", "g1", "a7"} {
		if s.CurrentPlayer() != 1 || s.StepInTurn() != i || s.TurnNumber() != 1 {
			t.Fatalf("White's stone %d: player %d step %d turn %d", i, s.CurrentPlayer(), s.StepInTurn(), s.TurnNumber())
		}
		if i > 0 {
			s.Legal(m)
			if got := labelsOf(g.b, m); len(got) != 1 || got[4] != 6-i {
				t.Fatalf("White's stone %d: legal %v, want the %d free cells marked 4", i, got, 6-i)
			}
			if s.EndsTurn() != (i == 3) {
				t.Fatalf("White's stone %d: EndsTurn %v", i, s.EndsTurn())
			}
		}
		mustPlay(t, s, c)
	}
	// Black picks a 4 too, but only two cells marked 4 are left: the turn
	// has min(4, 2) = 2 stones.
	if s.CurrentPlayer() != 0 || s.TurnNumber() != 2 {
		t.Fatalf("after White's turn: player %d turn %d", s.CurrentPlayer(), s.TurnNumber())
	}
	mustPlay(t, s, "d7")
	s.Legal(m)
	if !s.EndsTurn() || m.Count() != 1 || s.ActionString(m.First()) != "g4" {
		t.Fatalf("Black's short turn: EndsTurn %v, legal %s; want true and only g4", s.EndsTurn(), games.FormatActions(s, m))
	}
	if want := "o..o/...../..x.../o....../....../...../o..x t=2 pick=4 placed=1"; s.String() != want {
		t.Fatalf("notation %q, want %q", s.String(), want)
	}
	mustPlay(t, s, "g4")
	if s.CurrentPlayer() != 1 || s.TurnNumber() != 3 || s.StepInTurn() != 0 {
		t.Fatalf("after Black's short turn: player %d turn %d step %d", s.CurrentPlayer(), s.TurnNumber(), s.StepInTurn())
	}
	// The centre (marked 1) makes a one-stone turn.
	mustPlay(t, s, "d4")
	if s.CurrentPlayer() != 0 || s.TurnNumber() != 4 {
		t.Fatalf("after the centre: player %d turn %d", s.CurrentPlayer(), s.TurnNumber())
	}
	// The doc's notation example.
	s2 := g.NewInitialState()
	mustPlay(t, s2, "d3 b7")
	if want := "..../...../..x.../......./....../...../.o.. t=1 pick=3 placed=1"; s2.String() != want {
		t.Fatalf("notation %q, want %q", s2.String(), want)
	}
}

func TestEndsTurnWhenEveryPickIsSingle(t *testing.T) {
	// Side 4 with one free cell marked 2, one marked 3 and the centre:
	// every choice makes a one-stone turn.
	g, _ := New(4)
	s := g.NewInitialState().(*State)
	m := games.NewMask(g.NumActions())
	rng := games.NewRand(3)
	for !(s.StepInTurn() == 0 && s.free[2] <= 1 && s.free[3] <= 1 && s.free[4] == 0) && !s.IsTerminal() {
		s.Legal(m)
		// Keep the centre free and play cells marked 4 first.
		var pick games.Action = games.NoAction
		for a := range m.All() {
			if g.b.Label[a] == 4 {
				pick = a
				break
			}
		}
		for pick == games.NoAction || (g.b.Label[pick] == 1 && m.Count() > 1) {
			pick = m.Random(rng)
		}
		s.Apply(pick)
	}
	if s.IsTerminal() || s.free[1] != 1 {
		t.Skipf("random filling did not reach the wanted position: %s", s.String())
	}
	if !s.EndsTurn() {
		t.Fatalf("EndsTurn false with free counts %v", s.free)
	}
}

// fullBoard builds a side-4 final position from rows of x/o.
func fullBoard(t *testing.T, rows string) *State {
	t.Helper()
	g, _ := New(4)
	s, err := g.ParseState(rows + " t=17")
	if err != nil {
		t.Fatal(err)
	}
	if !s.IsTerminal() {
		t.Fatal("full board not terminal")
	}
	return s.(*State)
}

func TestFinalComparison(t *testing.T) {
	cases := []struct{ a, b []uint8 }{
		{[]uint8{18, 1}, []uint8{18}}, // extra group wins
		{[]uint8{19}, []uint8{18}},    // larger largest group
		{[]uint8{6}, []uint8{5, 5}},   // first difference decides
		{[]uint8{3, 3, 1}, []uint8{3, 2, 2, 2}},
		{[]uint8{9, 4, 2, 1}, []uint8{9, 4, 2}},
	}
	for _, tc := range cases {
		if compareGroups(tc.a, tc.b) != 1 || compareGroups(tc.b, tc.a) != -1 {
			t.Errorf("%v vs %v: %d, reversed %d; want +1 and -1", tc.a, tc.b, compareGroups(tc.a, tc.b), compareGroups(tc.b, tc.a))
		}
	}
	for _, l := range [][]uint8{{}, {18}, {5, 5, 2}} {
		if compareGroups(l, l) != 0 {
			t.Errorf("identical lists %v do not draw", l)
		}
	}

	// Whole boards (side 4, rows of 4,5,6,7,6,5,4 cells). Black holds the
	// top three rows and the left three cells of the middle row (18
	// connected cells) and one cell (5,2) inside White's region; White
	// holds the rest (18 connected cells). Black [18 1] beats White [18].
	black := "xxxx/xxxxx/xxxxxx/xxxoooo/oooooo/ooxoo/oooo"
	s := fullBoard(t, black)
	var gs [MaxCells]uint8
	if n := s.Groups(0, &gs); fmt.Sprint(gs[:n]) != "[18 1]" {
		t.Fatalf("Black groups %v, want [18 1]", gs[:n])
	}
	if n := s.Groups(1, &gs); fmt.Sprint(gs[:n]) != "[18]" {
		t.Fatalf("White groups %v, want [18]", gs[:n])
	}
	ret := make([]float64, 2)
	s.Returns(ret)
	if ret[0] != 1 || ret[1] != -1 {
		t.Fatalf("Black [18 1] vs White [18]: returns %v, want [1 -1]", ret)
	}
	// The same with colours swapped: White wins.
	swapped := strings.NewReplacer("x", "o", "o", "x").Replace(black)
	fullBoard(t, swapped).Returns(ret)
	if ret[0] != -1 || ret[1] != 1 {
		t.Fatalf("White [18 1] vs Black [18]: returns %v, want [-1 1]", ret)
	}
	// Largest group first: Black holds rows 1-3 and three cells of row 4
	// (one group of 18), White the other 19 cells (one group of 19).
	fullBoard(t, "xxxx/xxxxx/xxxxxx/xxxoooo/oooooo/ooooo/oooo").Returns(ret)
	if ret[0] != -1 || ret[1] != 1 {
		t.Fatalf("Black [18] vs White [19]: returns %v", ret)
	}
}

func TestRandomGames(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 40
	}
	for _, side := range []int{4, 5, 6} {
		g, _ := New(side)
		m := games.NewMask(g.NumActions())
		for i := range n {
			rng := games.NewRand(uint64(i))
			s := g.NewInitialState().(*State)
			for !s.IsTerminal() {
				s.Legal(m)
				s.Apply(m.Random(rng))
			}
			ret := make([]float64, 2)
			s.Returns(ret)
			// Every cell is covered and the cell count is odd, so the
			// group lists can never be identical: no draws.
			if s.MoveNumber() != g.b.N || s.TurnNumber() != g.b.Turns() || ret[0] == 0 {
				t.Fatalf("side %d game %d: %d moves, %d turns, returns %v; want %d, %d, a winner", side, i, s.MoveNumber(), s.TurnNumber(), ret, g.b.N, g.b.Turns())
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	g, _ := New(4)
	empty := "..../...../....../......./....../...../...."
	bad := []string{
		"",
		empty,          // no turn
		empty + " t=1", // turn 1 without the opening
		empty + " t=x", // bad number
		"..../...../....../......./....../.... t=0",                       // too few rows
		"..../...../....../......../....../...../.... t=0",                // long row
		"..../...../....../...x.../....../...../.... t=1",                 // opening on the centre (marked 1)
		"..../...../..x.../......./....../...../.... t=2",                 // wrong turn
		"..../...../..x.../......./....../...../.o.. t=1 pick=3 placed=3", // turn over
		"..../...../..x.../......./....../...../.o.. t=1 pick=2 placed=1", // White has no stone on a 2
		"..../...../..x.../......./....../...../.o.. t=1 pick=3",          // missing placed
		"..../...../..y.../......./....../...../.... t=1",                 // bad character
	}
	for _, n := range bad {
		if _, err := g.ParseState(n); err == nil {
			t.Errorf("ParseState(%q) accepted", n)
		}
	}
	if _, err := g.ParseState(empty + " t=0"); err != nil {
		t.Errorf("initial notation rejected: %v", err)
	}
}

// otherGame is a stand-in for a game that is not Strands.
type otherGame struct{ games.Game }

func (otherGame) Type() games.Type { return games.Type{Name: "other"} }

func TestGreedy(t *testing.T) {
	g := games.MustNew("strands:size=4")
	if _, err := agent.New(otherGame{}, "strands-greedy", agent.Env{Seed: 1}); err == nil {
		t.Fatal("strands-greedy accepted another game")
	}
	// Opening: every cell marked 2 scores 1-0; ties are random by seed.
	seen := map[games.Action]bool{}
	for seed := range uint64(20) {
		a, err := agent.New(g, "strands-greedy", agent.Env{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		s := g.NewInitialState()
		act, err := a.Act(context.Background(), s, 0)
		if err != nil || g.(*Game).b.Label[act] != 2 {
			t.Fatalf("seed %d: %v %v; want a cell marked 2", seed, act, err)
		}
		seen[act] = true
		a2, _ := agent.New(g, "strands-greedy", agent.Env{Seed: seed})
		if act2, _ := a2.Act(context.Background(), s, 0); act2 != act {
			t.Fatalf("seed %d: same seed chose %s and %s", seed, s.ActionString(act), s.ActionString(act2))
		}
	}
	if len(seen) < 3 {
		t.Fatalf("ties not broken at random: %d distinct openings in 20 seeds", len(seen))
	}
	// Black opened at c3; White took b7 (a 3), then c7 and e1 are... set
	// up by hand: White to place two more cells marked 3. Joining its
	// stone b7 (cell (6,1)) with c7 (6,2) makes a group of 2; any other 3
	// leaves it at 1. Black's largest is 1, so c7 scores 2-1 = 1 and is
	// the unique best.
	s := g.NewInitialState()
	mustPlay(t, s, "c3 b7")
	for seed := range uint64(10) {
		a, _ := agent.New(g, "strands-greedy", agent.Env{Seed: seed})
		act, err := a.Act(context.Background(), s, 1)
		if err != nil || s.ActionString(act) != "c7" {
			t.Fatalf("seed %d: greedy played %s (%v), want c7", seed, s.ActionString(act), err)
		}
	}
}

// naiveGroups finds group sizes with a plain BFS over array coordinates
// and the board files' neighbour formula.
func naiveGroups(b *Board, stones [2]uint64) []int {
	has := func(c int) bool { return c >= 0 && stones[c>>6]>>(c&63)&1 != 0 }
	seen := map[int]bool{}
	var out []int
	for c := range b.N {
		if !has(c) || seen[c] {
			continue
		}
		queue := []int{c}
		seen[c] = true
		for i := 0; i < len(queue); i++ {
			x, y := int(b.X[queue[i]]), int(b.Y[queue[i]])
			for _, d := range [6][2]int{{-1, 0}, {1, -1}, {1, 0}, {-1, 1}, {0, -1}, {0, 1}} {
				if n := b.At(x+d[0], y+d[1]); has(n) && !seen[n] {
					seen[n] = true
					queue = append(queue, n)
				}
			}
		}
		out = append(out, len(queue))
	}
	slices.SortFunc(out, func(a, b int) int { return b - a })
	return out
}

func TestGroupsAgreeWithNaiveBFS(t *testing.T) {
	for _, side := range []int{4, 5, 6} {
		g, _ := New(side)
		m := games.NewMask(g.NumActions())
		for i := range 30 {
			rng := games.NewRand(uint64(100 + i))
			s := g.NewInitialState().(*State)
			for !s.IsTerminal() {
				s.Legal(m)
				s.Apply(m.Random(rng))
				for p := range 2 {
					var gs [MaxCells]uint8
					n := s.Groups(p, &gs)
					want := naiveGroups(g.b, s.stones[p])
					if fmt.Sprint(gs[:n]) != fmt.Sprint(want) {
						t.Fatalf("side %d player %d: groups %v, naive %v at %s", side, p, gs[:n], want, s.String())
					}
				}
			}
		}
	}
}
