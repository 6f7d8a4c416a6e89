package connect4d

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

func TestConformance(t *testing.T) {
	for _, d := range []int{2, 3, 5} {
		t.Run(fmt.Sprint("d=", d), func(t *testing.T) {
			gametest.Run(t, games.MustNew(fmt.Sprintf("connect4d:d=%d", d)), gametest.Options{})
		})
	}
}

func FuzzNotation(f *testing.F) { gametest.FuzzNotation(f, games.MustNew("connect4d:d=3")) }

func TestSpec(t *testing.T) {
	g := games.MustNew("connect4d")
	if g.Spec() != "connect4d:d=5" || g.NumActions() != 35 || g.MaxGameLength() != 210 {
		t.Fatalf("default game: %s, %d actions, max length %d", g.Spec(), g.NumActions(), g.MaxGameLength())
	}
	for _, bad := range []string{"connect4d:d=1", "connect4d:d=9", "connect4d:d=x", "connect4d:size=5"} {
		if _, err := games.New(bad); err == nil {
			t.Errorf("games.New(%q) accepted", bad)
		}
	}
}

// cell is a (board, row, column) coordinate, row 0 at the bottom.
type cell struct{ b, r, c int }

// setup returns a d-board state whose stones are exactly own (player p)
// plus filler stones of the other player under each of them and under
// last, with p to move on last's board. It bypasses the turn bookkeeping
// (stone counts are not those of a real game), so only Apply and the win
// logic are exercised on it.
func setup(t *testing.T, d, p int, own []cell, last cell) *State {
	t.Helper()
	g, _ := New(d)
	s := g.NewInitialState().(*State)
	put := func(pl int, x cell) {
		bit := uint64(1) << (x.c*colBits + x.r)
		if (s.stones[0][x.b]|s.stones[1][x.b])&bit != 0 {
			return
		}
		s.stones[pl][x.b] |= bit
		s.hash ^= g.key(pl, x.b, x.c*colBits+x.r)
	}
	for _, x := range append(own, last) {
		for r := 0; r < x.r; r++ {
			put(1-p, cell{x.b, r, x.c})
		}
	}
	for _, x := range own {
		s.stones[p][x.b] &^= 1 << (x.c*colBits + x.r)
		s.stones[1-p][x.b] &^= 1 << (x.c*colBits + x.r)
		put(p, x)
	}
	s.turn, s.step = p, last.b
	if s.height(last.b, last.c) != last.r {
		t.Fatalf("setup: column %c of board %d has height %d, want %d", 'a'+last.c, last.b, s.height(last.b, last.c), last.r)
	}
	return s
}

// line returns the four cells from start in direction (db, dr, dc).
func line(start cell, db, dr, dc int) []cell {
	out := make([]cell, 4)
	for i := range out {
		out[i] = cell{start.b + i*db, start.r + i*dr, start.c + i*dc}
	}
	return out
}

// playLast plays the k-th cell of l with the other three already placed
// and reports whether the mover won.
func playLast(t *testing.T, d, p int, l []cell, k int) *State {
	t.Helper()
	own := append(append([]cell{}, l[:k]...), l[k+1:]...)
	s := setup(t, d, p, own, l[k])
	s.Apply(games.Action(l[k].b*Cols + l[k].c))
	return s
}

func TestWinningDirections(t *testing.T) {
	// The six 3-D directions of RULES.md, each placed so the line fits.
	dirs := []struct {
		dr, dc int
		start  cell
	}{
		{+1, 0, cell{1, 0, 3}},
		{-1, 0, cell{1, 5, 3}},
		{+1, +1, cell{0, 1, 0}},
		{+1, -1, cell{0, 2, 6}},
		{-1, +1, cell{1, 4, 2}},
		{-1, -1, cell{0, 3, 4}},
	}
	for _, dir := range dirs {
		for k := range 4 { // the completing stone at each position of the line
			for p := range 2 {
				l := line(dir.start, 1, dir.dr, dir.dc)
				s := playLast(t, 5, p, l, k)
				if !s.IsTerminal() || s.Winner() != p {
					t.Errorf("direction (1,%+d,%+d) from %v, last stone %d, player %d: terminal=%v winner=%d, want a win",
						dir.dr, dir.dc, dir.start, k, p, s.IsTerminal(), s.Winner())
				}
				ret := make([]float64, 2)
				s.Returns(ret)
				if ret[p] != 1 || ret[1-p] != -1 {
					t.Errorf("returns %v, want +1 for player %d", ret, p)
				}
				// Three of the four never win.
				s3 := setup(t, 5, p, l[:3], cell{4, 0, 0})
				s3.Apply(games.Action(4*Cols + 0))
				if s3.IsTerminal() {
					t.Errorf("direction (1,%+d,%+d): three stones won", dir.dr, dir.dc)
				}
			}
		}
	}
}

func TestNonWinningLines(t *testing.T) {
	cases := []struct {
		name       string
		db, dr, dc int
		start      cell
	}{
		{"horizontal inside one board", 0, 0, 1, cell{2, 0, 0}},
		{"vertical inside one board", 0, 1, 0, cell{2, 0, 3}},
		{"diagonal inside one board", 0, 1, 1, cell{2, 0, 0}},
		{"anti-diagonal inside one board", 0, 1, -1, cell{2, 0, 6}},
		{"constant height, column rising", 1, 0, 1, cell{0, 0, 0}},
		{"constant height, column falling", 1, 0, -1, cell{1, 2, 6}},
		{"pure depth", 1, 0, 0, cell{0, 0, 3}},
		{"pure depth, upper row", 1, 0, 0, cell{1, 5, 6}},
	}
	for _, tc := range cases {
		l := line(tc.start, tc.db, tc.dr, tc.dc)
		for k := range 4 {
			if tc.db == 0 && tc.dc == 0 && k != 3 {
				continue // a column's top stone must be played last
			}
			s := playLast(t, 5, 0, l, k)
			if s.IsTerminal() {
				t.Errorf("%s %v, last stone %d: the game ended (winner %d); only 3-D lines win", tc.name, l, k, s.Winner())
			}
		}
	}
}

// play applies actions given as text, failing on illegal ones.
func play(t *testing.T, s games.State, moves string) {
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

// midTurnGame: x builds the 3-D line (0,0,a) (1,1,a) (2,2,a) (3,3,a) in
// direction (1,+1,0) and completes it with the fourth stone of turn 5.
const midTurnGame = "0a 1g 2a 3g 4d  0g 1a 2a 3a 4c  0g 1a 2a 3a 4d  0f 1g 2g 3a 4c  0f 1f 2f"

func TestMidTurnWinEndsGame(t *testing.T) {
	g := games.MustNew("connect4d:d=5")
	s := g.NewInitialState()
	play(t, s, midTurnGame)
	ms := s.(games.MultiActionState)
	if s.IsTerminal() || s.CurrentPlayer() != 0 || ms.TurnNumber() != 4 || ms.StepInTurn() != 3 || ms.EndsTurn() {
		t.Fatalf("before the win: terminal=%v player=%d turn=%d step=%d", s.IsTerminal(), s.CurrentPlayer(), ms.TurnNumber(), ms.StepInTurn())
	}
	play(t, s, "3a")
	if !s.IsTerminal() || s.CurrentPlayer() != games.TerminalPlayer || s.(*State).Winner() != 0 {
		t.Fatalf("after 3a: terminal=%v winner=%d\n%s", s.IsTerminal(), s.(*State).Winner(), s.(games.Drawer).Draw(-1))
	}
	m := games.NewMask(g.NumActions())
	s.Legal(m)
	if !m.Empty() || s.MoveNumber() != 24 {
		t.Fatalf("game over mid-turn but %d legal actions, move %d", m.Count(), s.MoveNumber())
	}
	// The notation of the finished game parses back as a win for x.
	back, err := g.ParseState(s.String())
	if err != nil || !back.IsTerminal() || back.(*State).Winner() != 0 {
		t.Fatalf("ParseState(%q): %v", s.String(), err)
	}
}

func TestDraw(t *testing.T) {
	// Fill all boards identically, column by column: cell (r, c) of every
	// board gets colour r%2 (x on even rows). Then every pure-depth line,
	// every constant-height line and every row inside a board is one
	// colour, while each 3-D line alternates colours, so the game must run
	// to the full boards and be drawn.
	const d = 4
	g := games.MustNew(fmt.Sprintf("connect4d:d=%d", d))
	s := g.NewInitialState()
	for turn := range Cells {
		col := turn / Rows
		for b := range d {
			if s.IsTerminal() {
				t.Fatalf("game ended at turn %d board %d (winner %d)", turn, b, s.(*State).Winner())
			}
			if err := games.ApplyChecked(s, games.Action(b*Cols+col)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !s.IsTerminal() || s.(*State).Winner() != -1 || s.MoveNumber() != Cells*d {
		t.Fatalf("full boards: terminal=%v winner=%d", s.IsTerminal(), s.(*State).Winner())
	}
	ret := []float64{9, 9}
	s.Returns(ret)
	if ret[0] != 0 || ret[1] != 0 {
		t.Fatalf("draw returns %v", ret)
	}
	// Row r is colour r%2 on every board: o on top.
	board := "ooooooo/xxxxxxx/ooooooo/xxxxxxx/ooooooo/xxxxxxx"
	if want := strings.TrimSpace(strings.Repeat(board+" ", d)); s.String() != want {
		t.Fatalf("full boards %q, want %q", s.String(), want)
	}
}

// naiveLine looks for a 3-D line of player p with plain coordinates.
func naiveLine(s *State, p int) bool {
	has := func(b, r, c int) bool {
		if b < 0 || b >= s.g.d || r < 0 || r >= Rows || c < 0 || c >= Cols {
			return false
		}
		return s.stones[p][b]>>(c*colBits+r)&1 != 0
	}
	for b := range s.g.d {
		for r := range Rows {
			for c := range Cols {
				for _, dr := range []int{-1, 1} {
					for _, dc := range []int{-1, 0, 1} {
						if has(b, r, c) && has(b+1, r+dr, c+dc) && has(b+2, r+2*dr, c+2*dc) && has(b+3, r+3*dr, c+3*dc) {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// TestWinsAgreeWithNaiveScan also checks the legal columns against the
// column heights.
func TestWinsAgreeWithNaiveScan(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	wins := 0
	for _, d := range []int{2, 4, 8} {
		g, _ := New(d)
		m := games.NewMask(g.NumActions())
		for i := range n {
			rng := games.NewRand(uint64(i))
			s := g.NewInitialState().(*State)
			for !s.IsTerminal() {
				p := s.CurrentPlayer()
				s.Legal(m)
				for c := range Cols {
					if m.Has(games.Action(s.step*Cols+c)) != (s.height(s.step, c) < Rows) {
						t.Fatalf("d=%d: column %c of board %d legal=%v with height %d", d, 'a'+c, s.step, m.Has(games.Action(s.step*Cols+c)), s.height(s.step, c))
					}
				}
				s.Apply(m.Random(rng))
				if got, want := s.Winner() == p, naiveLine(s, p); got != want {
					t.Fatalf("d=%d: Apply says win=%v, naive scan %v at %q", d, got, want, s.String())
				}
				if naiveLine(s, 1-p) {
					t.Fatalf("d=%d: the player not moving has a line at %q", d, s.String())
				}
			}
			if s.Winner() >= 0 {
				wins++
			}
		}
	}
	if wins == 0 {
		t.Fatal("no random game was won; the test exercises nothing")
	}
}

func TestParseErrors(t *testing.T) {
	g := games.MustNew("connect4d:d=2")
	bad := []string{
		"",
		"7/7/7/7/7/7",                 // one board
		"7/7/7/7/7 7/7/7/7/7/7",       // five rows
		"7/7/7/7/7/7 7/7/7/7/7/8",     // digit 8
		"7/7/7/7/7/6 7/7/7/7/7/7",     // short row
		"7/7/7/7/7/x7 7/7/7/7/7/7",    // long row
		"7/7/7/7/x6/7 7/7/7/7/7/7",    // floating stone
		"7/7/7/7/7/o6 7/7/7/7/7/x6",   // o on board 0 in x's turn
		"7/7/7/7/7/7 7/7/7/7/7/x6",    // board 1 before board 0
		"7/7/7/7/7/y6 7/7/7/7/7/7",    // bad character
		"7/7/7/7/7/7 7/7/7/7/7/7 7/7", // three boards
	}
	for _, n := range bad {
		if _, err := g.ParseState(n); err == nil {
			t.Errorf("ParseState(%q) accepted", n)
		}
	}
	good := []struct {
		n                  string
		player, turn, step int
	}{
		{"7/7/7/7/7/x6 7/7/7/7/7/7", 0, 0, 1},
		{"7/7/7/7/7/xo5 7/7/7/7/7/x6", 1, 1, 1},
		{"7/7/7/7/7/x..o... 7/7/7/7/7/6x", 1, 1, 1},
	}
	for _, tc := range good {
		s, err := g.ParseState(tc.n)
		if err != nil {
			t.Errorf("ParseState(%q): %v", tc.n, err)
			continue
		}
		ms := s.(games.MultiActionState)
		if s.CurrentPlayer() != tc.player || ms.TurnNumber() != tc.turn || ms.StepInTurn() != tc.step {
			t.Errorf("%q: player %d turn %d step %d, want %d %d %d", tc.n, s.CurrentPlayer(), ms.TurnNumber(), ms.StepInTurn(), tc.player, tc.turn, tc.step)
		}
	}
}

func TestOneStepTakesWin(t *testing.T) {
	g := games.MustNew("connect4d:d=5")
	s := g.NewInitialState()
	play(t, s, midTurnGame)
	want, _ := s.ParseAction("3a")
	for seed := range uint64(30) {
		a, err := agent.New(g, "onestep", agent.Env{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.Act(context.Background(), s, s.CurrentPlayer())
		if err != nil || got != want {
			t.Fatalf("seed %d: onestep played %s (%v), want the win 3a", seed, s.ActionString(got), err)
		}
	}
	// Mid-turn without a win it still plays a legal move on the right board.
	s2 := g.NewInitialState()
	play(t, s2, "0a 1a")
	a, _ := agent.New(g, "onestep", agent.Env{Seed: 1})
	got, err := a.Act(context.Background(), s2, 0)
	if err != nil || int(got)/Cols != 2 {
		t.Fatalf("onestep mid-turn: %s, %v; want a move on board 2", s2.ActionString(got), err)
	}
}

// The study's baseline blocks an immediate opponent win. Hand-built, d = 4:
// O holds (board 0, row 0, d), (1, 1, d), (2, 2, d) on the (1,+1,0) line and
// needs (3, 3, d); column d of board 3 holds three stones, so X's stone on
// board 3 (its 4th of turn 4) must go to d. X has no win of its own (its
// stones never climb a row from board to board), and no O line is complete.
func TestOneStepBlocks(t *testing.T) {
	g := games.MustNew("connect4d:d=4")
	s := g.NewInitialState()
	play(t, s, "0a 1d 2d 3d  0d 1d 2d 3a  0b 1a 2a 3d  0c 1b 2d 3d  0e 1e 2e")
	if s.CurrentPlayer() != 0 || s.(games.MultiActionState).StepInTurn() != 3 || s.IsTerminal() {
		t.Fatalf("setup: player %d step %d terminal %v", s.CurrentPlayer(), s.(games.MultiActionState).StepInTurn(), s.IsTerminal())
	}
	want, _ := s.ParseAction("3d")
	for seed := range uint64(20) {
		a, _ := agent.New(g, "onestep", agent.Env{Seed: seed})
		got, err := a.Act(context.Background(), s, 0)
		if err != nil || got != want {
			t.Fatalf("seed %d: onestep played %s (%v), want the block 3d", seed, s.ActionString(got), err)
		}
	}
}
