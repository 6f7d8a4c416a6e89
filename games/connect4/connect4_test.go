package connect4

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

func TestConformance(t *testing.T) {
	gametest.Run(t, games.MustNew("connect4"), gametest.Options{})
}

func FuzzNotation(f *testing.F) { gametest.FuzzNotation(f, games.MustNew("connect4")) }

func mustParse(t *testing.T, moves string) *State {
	t.Helper()
	s, err := New().ParseMoves(moves)
	if err != nil {
		t.Fatalf("ParseMoves(%q): %v", moves, err)
	}
	return s
}

// Wins in every direction, worked out by hand on the board (columns 1..7).
func TestWins(t *testing.T) {
	for _, tc := range []struct {
		moves  string
		won    bool
		winner int
	}{
		{"1212121", true, 0},             // vertical in column 1
		{"121212", false, 0},             // three each
		{"1122334", true, 0},             // horizontal 1-4 on the bottom row
		{"71122334", true, 1},            // same for the second player
		{"1223343441", false, 0},         // diagonal not yet complete
		{"12233434414", true, 0},         // / diagonal a1 b2 c3 d4
		{"76655454474", true, 0},         // \ diagonal g1 f2 e3 d4 (mirror)
		{"1232435", false, 0},            // X b1 c2 d1 e1: no four
		{"4444445555556666667", true, 0}, // X d1 e1 f1 g1
		{"444444555555666666", false, 0},
	} {
		s := mustParse(t, tc.moves)
		if s.Won() != tc.won {
			t.Errorf("%q: won=%v, want %v\n%s", tc.moves, s.Won(), tc.won, s.Draw(-1))
			continue
		}
		if tc.won {
			ret := make([]float64, 2)
			s.Returns(ret)
			if ret[tc.winner] != 1 || ret[1-tc.winner] != -1 {
				t.Errorf("%q: returns %v, want player %d to win", tc.moves, ret, tc.winner)
			}
			if !s.IsTerminal() || s.CurrentPlayer() != games.TerminalPlayer {
				t.Errorf("%q: not terminal", tc.moves)
			}
		}
	}
}

// naiveWinner replays moves on a 2-D grid and scans every line of four
// cells; it shares no code with the bitboard win test.
func naiveFour(moves []int) bool {
	var grid [Width][Height]int // 0 empty, 1 X, 2 O
	var height [Width]int
	for i, c := range moves {
		grid[c][height[c]] = 1 + i%2
		height[c]++
	}
	for c := range Width {
		for r := range Height {
			v := grid[c][r]
			if v == 0 {
				continue
			}
			for _, d := range [][2]int{{1, 0}, {0, 1}, {1, 1}, {1, -1}} {
				k := 1
				for ; k < 4; k++ {
					cc, rr := c+k*d[0], r+k*d[1]
					if cc < 0 || cc >= Width || rr < 0 || rr >= Height || grid[cc][rr] != v {
						break
					}
				}
				if k == 4 {
					return true
				}
			}
		}
	}
	return false
}

// TestWinAgainstNaive also checks Legal against column heights.
func TestWinAgainstNaive(t *testing.T) {
	rng := games.NewRand(11)
	mask := games.NewMask(Width)
	n := 300
	if testing.Short() {
		n = 60
	}
	draws := 0
	for range n {
		s := New().NewState()
		var moves []int
		for !s.IsTerminal() {
			s.Legal(mask)
			var height [Width]int
			for _, c := range moves {
				height[c]++
			}
			for c := range Width {
				if mask.Has(games.Action(c)) != (height[c] < Height) {
					t.Fatalf("%q: Legal says column %d playable=%v with %d stones", s.String(), c+1, mask.Has(games.Action(c)), height[c])
				}
			}
			a := mask.Random(rng)
			s.Apply(a)
			moves = append(moves, int(a))
			if got, want := s.Won(), naiveFour(moves); got != want {
				t.Fatalf("%q: Won()=%v, naive scan says %v", s.String(), got, want)
			}
		}
		if !s.Won() {
			draws++
		}
	}
	t.Logf("%d random games, %d full-board draws", n, draws)
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"44a", "position 3"},
		{"0", "position 1"},
		{"8", "position 1"},
		{"4444444", "position 7"},
		{"12121212", "position 8"}, // column 1 four in a row after move 7
		{" 4", "position 1"},
	} {
		_, err := New().ParseState(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseState(%q) error %v, want one naming %q", tc.in, err, tc.want)
		}
	}
	if s, err := New().ParseState(""); err != nil || s.MoveNumber() != 0 {
		t.Errorf("empty notation: %v", err)
	}
}

func TestDrawAndObservation(t *testing.T) {
	s := mustParse(t, "4453")
	want := " 1 2 3 4 5 6 7\n" +
		"|. . . . . . .|\n" +
		"|. . . . . . .|\n" +
		"|. . . . . . .|\n" +
		"|. . . . . . .|\n" +
		"|. . . O . . .|\n" +
		"|. . O X X . .|\n" +
		"X to move\n"
	if got := s.Draw(-1); got != want {
		t.Errorf("Draw:\n%s\nwant\n%s", got, want)
	}
	obs := make([]float32, 2*Cells)
	s.Observation(1, obs) // O's view: plane 0 = O stones
	at := func(plane, row, col int) float32 { return obs[plane*Cells+row*Width+col] }
	if at(0, 0, 2) != 1 || at(0, 1, 3) != 1 || at(1, 0, 3) != 1 || at(1, 0, 4) != 1 || at(0, 0, 3) != 0 {
		t.Errorf("observation for O wrong: %v", obs)
	}
	sum := float32(0)
	for _, v := range obs {
		sum += v
	}
	if sum != 4 {
		t.Errorf("observation holds %v stones, want 4", sum)
	}
}

func TestUndoRestores(t *testing.T) {
	rng := games.NewRand(3)
	mask := games.NewMask(Width)
	for range 50 {
		s := New().NewState()
		var seq []games.Action
		var snaps []State
		for !s.IsTerminal() {
			snaps = append(snaps, *s)
			s.Legal(mask)
			a := mask.Random(rng)
			seq = append(seq, a)
			s.Apply(a)
		}
		for i := len(seq) - 1; i >= 0; i-- {
			s.Undo(seq[i])
			if *s != snaps[i] {
				t.Fatalf("undo of move %d does not restore the state", i)
			}
		}
	}
}

func TestPositionKeyUnique(t *testing.T) {
	// Transpositions share a key; different positions do not.
	a, b := mustParse(t, "4453"), mustParse(t, "5344")
	if a.PositionKey() != b.PositionKey() || a.Hash() != b.Hash() {
		t.Errorf("transposition 4453/5344: keys %x %x hashes %x %x", a.PositionKey(), b.PositionKey(), a.Hash(), b.Hash())
	}
	c := mustParse(t, "3445") // same cells, other colours
	if c.PositionKey() == a.PositionKey() || c.Hash() == a.Hash() {
		t.Errorf("3445 and 4453 share a key or hash")
	}
}

func TestCanWinNextAndNonLosing(t *testing.T) {
	p, _ := ParsePosition("112233") // X threatens 4 on the bottom row
	if !p.CanWinNext() || !p.IsWinningMove(3) || p.IsWinningMove(4) {
		t.Errorf("112233: CanWinNext %v", p.CanWinNext())
	}
	p, _ = ParsePosition("1122334") // X won; O to move: no check needed
	if !p.LastMoverWon() {
		t.Error("1122334: LastMoverWon false")
	}
	p, _ = ParsePosition("223344") // X threatens 1 and 5 on row 1: O cannot block both
	p.Play(6)                      // X plays 7; X threatens at 1 and 5
	if got := p.PossibleNonLosingMoves(); got != 0 {
		// O to move faces two threats (columns 1 and 5 bottom): no safe move.
		t.Errorf("two threats: PossibleNonLosingMoves=%x, want 0", got)
	}
}

func TestRandomPlayoutMatchesRules(t *testing.T) {
	rng := games.NewRand(9)
	for range 200 {
		s := New().NewState()
		n := s.RandomPlayout(rng)
		if n != s.MoveNumber() || !s.IsTerminal() {
			t.Fatalf("playout played %d moves, state %q terminal=%v", n, s.String(), s.IsTerminal())
		}
		back, err := New().ParseMoves(s.String())
		if err != nil {
			t.Fatalf("playout produced an illegal game %q: %v", s.String(), err)
		}
		if *back != *s {
			t.Fatalf("playout state differs from its replay %q", s.String())
		}
	}
}

func TestRandomPlayoutNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := New().NewState()
	start := *s
	if n := testing.AllocsPerRun(100, func() { *s = start; s.RandomPlayout(rng) }); n != 0 {
		t.Errorf("RandomPlayout allocates %v times", n)
	}
}

// The bitboard playout draws uniformly among playable columns: first-move
// frequencies from the empty board and with column 4 full.
func TestRandomPlayoutUniform(t *testing.T) {
	rng := games.NewRand(21)
	for _, start := range []string{"", "444444"} {
		base := mustParse(t, start)
		var counts [Width]int
		const n = 7000
		for range n {
			s := *base
			s.RandomPlayout(rng)
			counts[s.hist[base.pos.moves]]++
		}
		playable := Width
		if start != "" {
			playable--
			if counts[3] != 0 {
				t.Errorf("%q: full column 4 played %d times", start, counts[3])
			}
		}
		want := float64(n) / float64(playable)
		for c, k := range counts {
			if c == 3 && start != "" {
				continue
			}
			if d := float64(k) - want; d > 5*40 || d < -5*40 { // sigma is about 30-40
				t.Errorf("%q: column %d first in %d of %d playouts, want about %.0f", start, c+1, k, n, want)
			}
		}
	}
}

// FuzzParsePosition: ParsePosition and ParseMoves accept the same strings
// and build the same position.
func FuzzParsePosition(f *testing.F) {
	for _, s := range []string{"", "4453", "1212121", "44444444", "x", "2252576253462244111563365343671351441"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, moves string) {
		p, err1 := ParsePosition(moves)
		s, err2 := New().ParseMoves(moves)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: ParsePosition error %v, ParseMoves error %v", moves, err1, err2)
		}
		if err1 == nil && (p != s.Position() || s.String() != moves) {
			t.Fatalf("%q: positions differ or notation %q", moves, s.String())
		}
	})
}
