package tetrislink

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

func newGame(t testing.TB, players int) *Game {
	t.Helper()
	g, err := New(players)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// play parses a notation or fails the test.
func play(t *testing.T, g *Game, moves string) *State {
	t.Helper()
	s, err := g.Parse(fmt.Sprintf("players=%d;%s", g.players, moves))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func scores(s *State) []int {
	out := make([]int, s.g.players)
	for p := range out {
		out[p] = s.Score(p)
	}
	return out
}

func TestConformance(t *testing.T) {
	for np := 2; np <= 4; np++ {
		t.Run(fmt.Sprintf("players=%d", np), func(t *testing.T) {
			gametest.Run(t, games.MustNew(fmt.Sprintf("tetrislink:players=%d", np)), gametest.Options{})
		})
	}
}

func FuzzNotation(f *testing.F) { gametest.FuzzNotation(f, newGame(f, 3)) }

func TestRegistry(t *testing.T) {
	g := games.MustNew("tetrislink")
	if g.NumPlayers() != 2 || g.Spec() != "tetrislink:players=2" || g.NumActions() != 190 {
		t.Errorf("default game: %s, %d players, %d actions", g.Spec(), g.NumPlayers(), g.NumActions())
	}
	if g := games.MustNew("tetrislink:players=3"); g.NumPlayers() != 3 || g.MaxGameLength() != 75 {
		t.Errorf("players=3: %d players, max length %d", g.NumPlayers(), g.MaxGameLength())
	}
	for _, bad := range []string{"tetrislink:players=1", "tetrislink:players=5", "tetrislink:players=x", "tetrislink:size=3"} {
		if _, err := games.New(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// The rules: 19 orientations (I 2, O 1, T 4, S 4, L 8), 190 action ids of
// which 28 never fit, so 162 legal moves on the empty board.
func TestEmptyBoardBranching(t *testing.T) {
	perShape := map[byte]int{}
	for _, o := range orients {
		perShape[shapeLetters[o.shape]]++
	}
	want := map[byte]int{'I': 2, 'O': 1, 'T': 4, 'S': 4, 'L': 8}
	for k, v := range want {
		if perShape[k] != v {
			t.Errorf("shape %c: %d orientations, want %d", k, perShape[k], v)
		}
	}
	for np := 2; np <= 4; np++ {
		s := newGame(t, np).NewState()
		m := games.NewMask(NumActionIDs)
		s.Legal(m)
		if m.Count() != 162 {
			t.Errorf("%d players: %d legal moves on the empty board, want 162", np, m.Count())
		}
	}
}

// Each shape's orientations must be exactly its distinct rotations (and
// reflections for S and L, which stand for S/Z and L/J), computed here
// independently from the base pictures by rotating cell lists.
func TestOrientationsAreRotations(t *testing.T) {
	base := map[byte]string{'I': "####", 'O': "##/##", 'T': ".#./###", 'S': ".##/##.", 'L': "#./#./##"}
	mirror := map[byte]bool{'S': true, 'L': true}
	for sh := range NumShapes {
		letter := shapeLetters[sh]
		want := map[string]bool{}
		cells := pictureCells(base[letter])
		for m := 0; m < 2; m++ {
			if m == 1 && !mirror[letter] {
				break
			}
			c := slices.Clone(cells)
			if m == 1 {
				for i := range c {
					c[i][0] = -c[i][0]
				}
			}
			for range 4 {
				want[cellsPicture(c)] = true
				for i := range c { // rotate 90 degrees
					c[i][0], c[i][1] = c[i][1], -c[i][0]
				}
			}
		}
		got := map[string]bool{}
		for _, o := range orients {
			if int(o.shape) == sh {
				got[cellsPicture(orientCells(&o))] = true
			}
		}
		if len(got) != len(want) {
			t.Errorf("shape %c: %d distinct orientations, want %d", letter, len(got), len(want))
		}
		for k := range want {
			if !got[k] {
				t.Errorf("shape %c: missing orientation %s", letter, k)
			}
		}
	}
}

// pictureCells returns (column, row) cells of a "top/.../bottom" picture.
func pictureCells(pic string) [][2]int {
	var out [][2]int
	lines := strings.Split(pic, "/")
	for li, line := range lines {
		for c, ch := range line {
			if ch == '#' {
				out = append(out, [2]int{c, len(lines) - 1 - li})
			}
		}
	}
	return out
}

func orientCells(o *orient) [][2]int {
	var out [][2]int
	for r := range 4 {
		for c := range 4 {
			if o.rows[r]>>c&1 != 0 {
				out = append(out, [2]int{c, r})
			}
		}
	}
	return out
}

// cellsPicture normalises cells to the origin and prints them sorted.
func cellsPicture(c [][2]int) string {
	mx, my := 99, 99
	for _, p := range c {
		mx, my = min(mx, p[0]), min(my, p[1])
	}
	n := make([]string, len(c))
	for i, p := range c {
		n[i] = fmt.Sprintf("%d,%d", p[0]-mx, p[1]-my)
	}
	slices.Sort(n)
	return strings.Join(n, " ")
}

func TestActionText(t *testing.T) {
	for _, tc := range []struct {
		text string
		id   games.Action
	}{{"I0@1", 0}, {"I1@10", 19}, {"O0@1", 20}, {"T2@5", 54}, {"S0@1", 70}, {"L7@8", 187}} {
		a, err := ParseActionText(tc.text)
		if err != nil || a != tc.id {
			t.Errorf("ParseActionText(%q) = %d, %v; want %d", tc.text, a, err, tc.id)
		}
		if got := ActionText(tc.id); got != tc.text {
			t.Errorf("ActionText(%d) = %q, want %q", tc.id, got, tc.text)
		}
	}
	if a, err := ParseActionText(" t2@5 "); err != nil || a != 54 {
		t.Errorf("lower case: %d %v", a, err)
	}
	for _, bad := range []string{"", "T@5", "T4@5", "O1@1", "X0@1", "T2@0", "T2@11", "T2-5", "T2@+5", "T+2@5", "I0@1x"} {
		if _, err := ParseActionText(bad); err == nil {
			t.Errorf("ParseActionText(%q) accepted", bad)
		}
	}
}

// Scoring positions built by hand from the rules (comments give the board,
// columns 1-10 left to right, row 1 at the bottom).
func TestScoringRules(t *testing.T) {
	g := newGame(t, 2)
	for _, tc := range []struct {
		name  string
		moves string
		want  []int
	}{
		// P1: L at columns 1-2 (column 1 rows 1-3, foot at column 2 row 1),
		// then J at columns 3-4 (foot at column 3 row 1, column 4 rows 1-3):
		// a U of two touching pieces, a group of 2: no points. P2: vertical
		// I in column 10.
		{"U of two pieces", "L0@1 I1@10 L4@3", []int{0, 0}},
		// P1: I over columns 1-4, I over 5-8, vertical I in column 9: a
		// chain of 3 whose ends do not touch = 3 points. P2: two vertical
		// I's stacked in column 10 (group of 2, 0 points).
		{"chain of three", "I0@1 I1@10 I0@5 I1@10 I1@9", []int{3, 0}},
		// ... P2 puts an O on columns 1-2 row 2 (touches only P1), P1 an O on
		// columns 3-4 row 2 touching its first I: a group of 4 = 4 points.
		{"joining adds one", "I0@1 I1@10 I0@5 I1@10 I1@9 O0@1 O0@3", []int{4, 0}},
		// S flat on the floor: its right column has one empty square below.
		{"one hole", "S0@1", []int{-1, 0}},
		// T pointing down on the floor: two holes, -2.
		{"two holes", "T2@1", []int{-2, 0}},
		// P1: L at column 1 (heights 3,1), P2: I in column 10, P1:
		// horizontal I over columns 2-5 lands on row 2 and covers three
		// empty squares (columns 3-5, row 1): capped at -2. The I touches
		// the L (group of 2, no points).
		{"three holes cost two", "L0@1 I1@10 I0@2", []int{-2, 0}},
		// Two separate flat S drops (columns 1-3, then 4-6, not touching)
		// each leave one hole: -1 per turn, -2 in total (the cap is per
		// turn, not per game).
		{"holes capped per turn, not per game", "S0@1 I1@10 S0@4", []int{-2, 0}},
	} {
		s := play(t, g, tc.moves)
		if got := scores(s); !slices.Equal(got, tc.want) {
			t.Errorf("%s (%s): scores %v, want %v\n%s", tc.name, tc.moves, got, tc.want, s.Draw(-1))
		}
	}
}
