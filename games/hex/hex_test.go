package hex

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

func mustGame(t testing.TB, spec string) *Game {
	t.Helper()
	g, err := games.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	return g.(*Game)
}

func mustParse(t testing.TB, g *Game, notation string) *State {
	t.Helper()
	s, err := g.ParseState(notation)
	if err != nil {
		t.Fatalf("ParseState(%q): %v", notation, err)
	}
	return s.(*State)
}

func TestConformance(t *testing.T) {
	for _, n := range []int{2, 3, 5, 7, 11, 13} {
		for _, sw := range []bool{false, true} {
			spec := fmt.Sprintf("hex:size=%d,swap=%t", n, sw)
			t.Run(spec, func(t *testing.T) {
				o := gametest.Options{}
				if n >= 11 && testing.Short() {
					o.Games = 5
				}
				gametest.Run(t, games.MustNew(spec), o)
			})
		}
	}
}

func FuzzNotation(f *testing.F) { gametest.FuzzNotation(f, games.MustNew("hex:size=5,swap=true")) }

func FuzzNotationNoSwap(f *testing.F) { gametest.FuzzNotation(f, games.MustNew("hex:size=13")) }

func TestSpec(t *testing.T) {
	for in, want := range map[string]string{
		"hex":                  "hex:size=11,swap=false",
		"hex:size=7":           "hex:size=7,swap=false",
		"hex:swap=true,size=2": "hex:size=2,swap=true",
		"hex:size=13,swap=on":  "hex:size=13,swap=true",
	} {
		g, err := games.New(in)
		if err != nil {
			t.Fatalf("New(%q): %v", in, err)
		}
		if g.Spec() != want {
			t.Errorf("New(%q).Spec() = %q, want %q", in, g.Spec(), want)
		}
	}
	for _, in := range []string{"hex:size=1", "hex:size=14", "hex:size=x", "hex:swap=maybe", "hex:sise=5"} {
		if _, err := games.New(in); err == nil {
			t.Errorf("New(%q) succeeded", in)
		}
	}
	g := mustGame(t, "hex:size=9,swap=true")
	if g.NumActions() != 82 || g.MaxGameLength() != 82 || !slices.Equal(g.ObservationShape(), []int{3, 9, 9}) {
		t.Errorf("sizes: actions %d maxlen %d shape %v", g.NumActions(), g.MaxGameLength(), g.ObservationShape())
	}
	if g := mustGame(t, "hex:size=9"); g.NumActions() != 81 {
		t.Errorf("NumActions without swap = %d", g.NumActions())
	}
}

func TestActionText(t *testing.T) {
	g := mustGame(t, "hex:size=13,swap=true")
	s := g.NewState()
	for _, c := range []struct {
		txt  string
		r, c int
	}{{"a1", 0, 0}, {"b1", 0, 1}, {"a2", 1, 0}, {"m13", 12, 12}, {"c10", 9, 2}, {"M1", 0, 12}} {
		a, err := s.ParseAction(c.txt)
		if err != nil || a != g.Cell(c.r, c.c) {
			t.Errorf("ParseAction(%q) = %d, %v; want cell (%d,%d) = %d", c.txt, a, err, c.r, c.c, g.Cell(c.r, c.c))
		}
	}
	if a, err := s.ParseAction("swap"); err != nil || a != 169 || s.ActionString(169) != "swap" {
		t.Errorf("swap: %d %v %q", a, err, s.ActionString(169))
	}
	for _, bad := range []string{"", "a", "a0", "a14", "n1", "a01", "1a", "a-1", "a+1", "swapx", "aa1", "a1 "} {
		if _, err := s.ParseAction(bad); err == nil {
			t.Errorf("ParseAction(%q) accepted", bad)
		}
	}
	if _, err := mustGame(t, "hex:size=5").NewState().ParseAction("swap"); err == nil || !strings.Contains(err.Error(), "swap=true") {
		t.Errorf("swap without the pie rule: %v", err)
	}
	if got := s.ActionString(-1); got != "invalid(-1)" {
		t.Errorf("ActionString(-1) = %q", got)
	}
}

// play checks that notation ends (or not) with the given winner.
func checkResult(t *testing.T, spec, notation string, winner int) {
	t.Helper()
	s := mustParse(t, mustGame(t, spec), notation)
	if s.Winner() != winner {
		t.Fatalf("%s %q: winner %d, want %d\n%s", spec, notation, s.Winner(), winner, s.Draw(-1))
	}
	if winner >= 0 {
		ret := make([]float64, 2)
		s.Returns(ret)
		if ret[winner] != 1 || ret[1-winner] != -1 || s.CurrentPlayer() != games.TerminalPlayer {
			t.Errorf("returns %v player %d", ret, s.CurrentPlayer())
		}
		// The game must have ended exactly at the last move.
		moves := strings.Fields(notation)
		prev := mustParse(t, mustGame(t, spec), strings.Join(moves[:len(moves)-1], " "))
		if prev.IsTerminal() {
			t.Errorf("%q was already over one move earlier", notation)
		}
	}
}

func TestHandBuiltResults(t *testing.T) {
	// 3x3 cells: a1=(0,0) b1=(0,1) c1=(0,2) / a2=(1,0) .. / a3=(2,0) ..
	checkResult(t, "hex:size=3", "a1 b1 a2 b2 a3", 0)        // Black straight down column a
	checkResult(t, "hex:size=3", "a2 a1 b2 b1 c3 c1", 1)     // White straight along row 1
	checkResult(t, "hex:size=3", "c1 a1 b2 c2 a3", 0)        // Black zig-zag (0,2)-(1,1)-(2,0): (r,c)-(r+1,c-1)
	checkResult(t, "hex:size=3", "a1 a3 c3 b2 c2 c1", 1)     // White zig-zag (2,0)-(1,1)-(0,2): (r,c)-(r-1,c+1)
	checkResult(t, "hex:size=3", "a1 c1 b2 a3 c3", -1)       // Black a1 b2 c3 uses the non-adjacent diagonal
	checkResult(t, "hex:size=4", "a1 d1 b2 a4 c3 b4 d4", -1) // same on 4x4
	// 5x5 Black zig-zag: e1 (0,4) d2 (1,3) d3 (2,3) c4 (3,2) c5 (4,2).
	checkResult(t, "hex:size=5", "e1 a1 d2 a2 d3 a3 c4 a4 c5", 0)
	// 5x5 White zig-zag: a5 (4,0) b4 (3,1) c4 (3,2) d3 (2,3) e2 (1,4).
	checkResult(t, "hex:size=5", "a1 a5 b1 b4 c1 c4 d1 d3 a2 e2", 1)
	// 2x2: the only Black wins use a column or the (0,1)-(1,0) diagonal.
	checkResult(t, "hex:size=2", "b1 a1 a2", 0)
	checkResult(t, "hex:size=2", "a1 b1 b2", -1) // (0,0)-(1,1) is not adjacent
	checkResult(t, "hex:size=2", "a1 b1 b2 a2", 1)
}

func TestObservation(t *testing.T) {
	g := mustGame(t, "hex:size=3")
	s := mustParse(t, g, "a1 b2 c1") // Black a1 (0), c1 (2); White b2 (4)
	obs := make([]float32, 27)
	s.Observation(0, obs)
	want0 := []float32{1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	if !slices.Equal(obs, want0) {
		t.Errorf("player 0 view %v", obs)
	}
	s.Observation(1, obs)
	want1 := []float32{0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if !slices.Equal(obs, want1) {
		t.Errorf("player 1 view %v", obs)
	}
}

func TestDraw(t *testing.T) {
	s := mustParse(t, mustGame(t, "hex:size=3"), "a1 b2")
	want := "" +
		"hex:size=3,swap=false (2 moves)\n" +
		"   a b c\n" +
		" 1 X . . 1\n" +
		"  2 . O . 2\n" +
		"   3 . . . 3\n" +
		"      a b c\n" +
		"Black (X, top-bottom) to move (move 3)\n"
	if got := s.Draw(-1); got != want {
		t.Errorf("Draw:\n%s\nwant:\n%s", got, want)
	}
}

func TestParseStateErrors(t *testing.T) {
	g := mustGame(t, "hex:size=3,swap=true")
	for notation, wantErr := range map[string]string{
		"a1 z9":                 "bad move",
		"a1 a1":                 "occupied",
		"b1 swap b1 c1 c2 swap": "second move",
		"swap":                  "second move",
		"a1 b1 swap":            "second move",
		"a1 b1 a2 b2 a3 b3":     "already over",
		"a1\tb1 a4":             "move 3",
	} {
		_, err := g.ParseState(notation)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseState(%q) error %v, want one containing %q", notation, err, wantErr)
		}
	}
	if _, err := mustGame(t, "hex:size=3").ParseState("a1 swap"); err == nil || !strings.Contains(err.Error(), "pie rule is off") {
		t.Errorf("swap with swap=false: %v", err)
	}
	s := mustParse(t, g, " a1\n b1  ")
	if s.String() != "a1 b1" {
		t.Errorf("whitespace: %q", s.String())
	}
}

func TestSwap(t *testing.T) {
	g := mustGame(t, "hex:size=5,swap=true")
	s := g.NewState()
	m := games.NewMask(g.NumActions())
	s.Legal(m)
	if m.Has(g.SwapAction()) || m.Count() != 25 {
		t.Fatalf("swap legal at move 1 or wrong count %d", m.Count())
	}
	s.Apply(g.Cell(0, 1)) // b1
	s.Legal(m)
	if !m.Has(g.SwapAction()) || m.Count() != 25 {
		t.Fatalf("at move 2: swap legal %v, count %d (want 24 cells + swap)", m.Has(g.SwapAction()), m.Count())
	}
	s.Apply(g.SwapAction())
	// The stone on b1 = (0,1) is now White's on the transposed cell (1,0) = a2.
	if s.Stone(0, 1) != -1 || s.Stone(1, 0) != 1 || s.CurrentPlayer() != 0 || s.MoveNumber() != 2 {
		t.Fatalf("after swap:\n%s", s.Draw(-1))
	}
	s.Legal(m)
	if m.Has(g.SwapAction()) || m.Count() != 24 || !m.Has(g.Cell(0, 1)) || m.Has(g.Cell(1, 0)) {
		t.Fatalf("legal after swap: %s", games.FormatActions(s, m))
	}
	if s.String() != "b1 swap" {
		t.Errorf("notation %q", s.String())
	}
	// A first move on the diagonal stays where it is and changes colour.
	d := mustParse(t, g, "c3 swap")
	if d.Stone(2, 2) != 1 {
		t.Errorf("c3 swap:\n%s", d.Draw(-1))
	}
	// The swapped stone counts for White: 2x2, White a1 (swapped) + b1 connect.
	checkResult(t, "hex:size=2,swap=true", "a1 swap b2 b1", 1)
	// 3x3: b1 becomes White a2; White a2 b2 c2 wins, Black's old cell is free.
	checkResult(t, "hex:size=3,swap=true", "b1 swap a1 b2 b3 c2", 1)
	checkResult(t, "hex:size=3,swap=true", "b1 swap b1 a1 b2 c1", -1)
}

func TestSwapPlayable(t *testing.T) {
	// After "b1 swap" Black may take b1 again, and the hash differs from
	// positions without a swap.
	g := mustGame(t, "hex:size=3,swap=true")
	a := mustParse(t, g, "b1 swap b1")
	if a.Stone(0, 1) != 0 || a.Stone(1, 0) != 1 || a.CurrentPlayer() != 1 {
		t.Errorf("b1 swap b1:\n%s", a.Draw(-1))
	}
	b := mustParse(t, g, "b1 a2")
	if a.Hash() == b.Hash() {
		t.Error("b1 swap b1 and b1 a2 hash alike (different side to move)")
	}
}

func TestHashTranspositions(t *testing.T) {
	g := mustGame(t, "hex:size=5")
	x, y := mustParse(t, g, "a1 b1 a2 c3"), mustParse(t, g, "a2 c3 a1 b1")
	if x.Hash() != y.Hash() {
		t.Error("transposed move orders hash differently")
	}
	if z := mustParse(t, g, "a1 c3 b1 a2"); z.Hash() == x.Hash() {
		t.Error("different positions hash alike")
	}
	if mustParse(t, g, "a1").Hash() == mustParse(t, g, "").Hash() {
		t.Error("hash ignores a move")
	}
}
