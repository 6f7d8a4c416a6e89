package tetrislink

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// refState is a deliberately naive model of the rules, written from
// RULES.md independently of the bitboard code: a cell grid of piece ids,
// drops simulated one row at a time from above the board, holes counted by
// walking down each column, groups found by flood fill over pieces from
// scratch. Only the orientation cell lists are shared (they are checked
// against rotations in TestOrientationsAreRotations).
type refState struct {
	np      int
	cell    [Height][Width]int // piece index + 1, 0 when empty
	owner   []int
	left    [MaxPlayers][NumShapes]int
	penalty [MaxPlayers]int
	toMove  int // -1 when over
}

func newRef(np int) *refState {
	r := &refState{np: np}
	for p := range np {
		for k := range NumShapes {
			r.left[p][k] = PiecesEach
		}
	}
	return r
}

// drop returns the bottom row where orientation oi dropped at column x
// comes to rest, and whether it stays inside the board.
func (r *refState) drop(oi, x int) (int, bool) {
	cells := orientCells(&orients[oi])
	for _, c := range cells {
		if x+c[0] >= Width {
			return 0, false
		}
	}
	free := func(y int) bool {
		for _, c := range cells {
			if row := y + c[1]; row < 0 || (row < Height && r.cell[row][x+c[0]] != 0) {
				return false
			}
		}
		return true
	}
	y := Height // entirely above the board
	for free(y - 1) {
		y--
	}
	for _, c := range cells {
		if y+c[1] >= Height {
			return y, false
		}
	}
	return y, true
}

func (r *refState) legal(p int) []games.Action {
	var out []games.Action
	for a := range NumActionIDs {
		oi, x := a/Width, a%Width
		if r.left[p][orients[oi].shape] == 0 {
			continue
		}
		if _, ok := r.drop(oi, x); ok {
			out = append(out, games.Action(a))
		}
	}
	return out
}

func (r *refState) apply(a games.Action) {
	p := r.toMove
	oi, x := int(a)/Width, int(a)%Width
	y, _ := r.drop(oi, x)
	id := len(r.owner) + 1
	r.owner = append(r.owner, p)
	cells := orientCells(&orients[oi])
	for _, c := range cells {
		r.cell[y+c[1]][x+c[0]] = id
	}
	holes := 0
	for _, c := range cells {
		cx, cy := x+c[0], y+c[1]
		if cy > 0 && r.cell[cy-1][cx] == id {
			continue // not the lowest cell of the piece in this column
		}
		for row := cy - 1; row >= 0 && r.cell[row][cx] == 0; row-- {
			holes++
		}
	}
	r.penalty[p] += min(holes, 2)
	r.left[p][orients[oi].shape]--
	r.toMove = -1
	for i := 1; i <= r.np; i++ {
		if q := (p + i) % r.np; len(r.legal(q)) > 0 {
			r.toMove = q
			break
		}
	}
}

func (r *refState) scores() []int {
	n := len(r.owner)
	adj := make([][]bool, n+1)
	for i := range adj {
		adj[i] = make([]bool, n+1)
	}
	for y := range Height {
		for x := range Width {
			a := r.cell[y][x]
			if a == 0 {
				continue
			}
			if x+1 < Width && r.cell[y][x+1] != 0 {
				adj[a][r.cell[y][x+1]], adj[r.cell[y][x+1]][a] = true, true
			}
			if y+1 < Height && r.cell[y+1][x] != 0 {
				adj[a][r.cell[y+1][x]], adj[r.cell[y+1][x]][a] = true, true
			}
		}
	}
	out := make([]int, r.np)
	seen := make([]bool, n+1)
	for start := 1; start <= n; start++ {
		if seen[start] {
			continue
		}
		p := r.owner[start-1]
		stack, size := []int{start}, 0
		seen[start] = true
		for len(stack) > 0 {
			a := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			size++
			for b := 1; b <= n; b++ {
				if adj[a][b] && !seen[b] && r.owner[b-1] == p {
					seen[b] = true
					stack = append(stack, b)
				}
			}
		}
		if size >= 3 {
			out[p] += size
		}
	}
	for p := range out {
		out[p] -= r.penalty[p]
	}
	return out
}

// hashFromScratch recomputes the Zobrist hash from the position.
func hashFromScratch(s *State) uint64 {
	var h uint64
	for p := range s.g.players {
		for r := range Height {
			for c := range Width {
				if s.own[p][r]>>c&1 != 0 {
					h ^= cellKey[p][r*Width+c]
				}
			}
		}
		for k := range NumShapes {
			if n := s.left[p][k]; n < PiecesEach {
				h ^= leftKey[p][k][n]
			}
		}
	}
	if s.toMove >= 0 {
		h ^= moveKey[s.toMove]
	}
	return h
}

// Random games checked move by move against the naive model: legal moves,
// player to move (skips), scores, the end of the game, the hash, and Undo
// back to the start.
func TestAgainstReference(t *testing.T) {
	nGames := 60
	if testing.Short() {
		nGames = 12
	}
	rng := games.NewRand(11)
	mask := games.NewMask(NumActionIDs)
	skips, endedStuck := 0, 0
	for gi := range nGames {
		np := 2 + gi%3
		g := newGame(t, np)
		s := g.NewState()
		ref := newRef(np)
		var hist []games.Action
		var strs []string
		var hashes []uint64
		for {
			where := fmt.Sprintf("game %d (%d players) at %q", gi, np, s.String())
			if s.CurrentPlayer() != max(ref.toMove, games.TerminalPlayer) && !(ref.toMove < 0 && s.IsTerminal()) {
				t.Fatalf("%s: player to move %d, reference %d", where, s.CurrentPlayer(), ref.toMove)
			}
			if got, want := scores(s), ref.scores(); !slices.Equal(got, want) {
				t.Fatalf("%s: scores %v, reference %v\n%s", where, got, want, s.Draw(-1))
			}
			if h := hashFromScratch(s); h != s.Hash() {
				t.Fatalf("%s: incremental hash %x, from scratch %x", where, s.Hash(), h)
			}
			s.Legal(mask)
			if ref.toMove < 0 {
				if !s.IsTerminal() || !mask.Empty() {
					t.Fatalf("%s: reference says the game is over", where)
				}
				for p := range np {
					if len(ref.legal(p)) > 0 {
						t.Fatalf("%s: game over but player %d can still move", where, p)
					}
				}
				if slices.ContainsFunc(ref.left[:np], func(l [NumShapes]int) bool { return l != [NumShapes]int{} }) {
					endedStuck++
				}
				break
			}
			if got, want := mask.AppendTo(nil), ref.legal(ref.toMove); !slices.Equal(got, want) {
				t.Fatalf("%s: legal moves\n%v\nreference\n%v", where, got, want)
			}
			a := mask.Random(rng)
			prev := s.CurrentPlayer()
			hist, strs, hashes = append(hist, a), append(strs, s.String()), append(hashes, s.Hash())
			s.Apply(a)
			ref.apply(a)
			if ref.toMove >= 0 && ref.toMove != (prev+1)%np {
				skips++
			}
		}
		for i := len(hist) - 1; i >= 0; i-- {
			s.Undo(hist[i])
			if s.String() != strs[i] || s.Hash() != hashes[i] {
				t.Fatalf("game %d: undo of move %d gives %q (hash %x), want %q (%x)", gi, i+1, s.String(), s.Hash(), strs[i], hashes[i])
			}
		}
		if *s != *g.NewState() {
			t.Fatalf("game %d: undoing every move does not restore the initial state exactly", gi)
		}
	}
	if skips == 0 || endedStuck == 0 {
		t.Errorf("random games never exercised skips (%d) or a stuck ending (%d)", skips, endedStuck)
	}
}

// A hand-built ending: every column is full except a well in column 1
// that is 8 rows deep. P1 has two I pieces and nothing else, P2 only an O,
// which cannot fit in a 1-wide well: P1 drops a vertical I (well now 4
// deep), P2 is skipped, P1 drops its last I (column full), nobody can move:
// the game is over. P2 had 5 points, P1's two I's touch (a group of 2): P2
// wins.
func TestSkipAndEnd(t *testing.T) {
	g := newGame(t, 2)
	s := g.NewState()
	for r := range Height {
		row := uint16(fullRow &^ 1)
		if r < 12 {
			row = fullRow
		}
		s.rows[r], s.own[1][r] = row, row
	}
	for c := range Width {
		s.height[c] = Height
	}
	s.height[0] = 12
	s.left = [MaxPlayers][NumShapes]uint8{{2, 0, 0, 0, 0}, {0, 1, 0, 0, 0}}
	s.avail = [MaxPlayers][3]uint64{shapeActions[0], shapeActions[1]}
	s.score[1] = 5
	s.computeFit()
	s.hash = hashFromScratch(s)

	mask := games.NewMask(NumActionIDs)
	s.Legal(mask)
	if got := games.FormatActions(s, mask); got != "I1@1" {
		t.Fatalf("legal moves %q, want only I1@1", got)
	}
	s.Apply(10) // I1@1
	if s.CurrentPlayer() != 0 {
		t.Fatalf("after P1's first I: player %d to move, want 0 (P2 skipped)\n%s", s.CurrentPlayer(), s.Draw(-1))
	}
	s.Legal(mask)
	if got := games.FormatActions(s, mask); got != "I1@1" {
		t.Fatalf("second turn: legal moves %q, want only I1@1", got)
	}
	s.Apply(10) // I1@1
	if !s.IsTerminal() || s.CurrentPlayer() != games.TerminalPlayer {
		t.Fatalf("column full: game not over\n%s", s.Draw(-1))
	}
	ret := make([]float64, 2)
	s.Returns(ret)
	if !slices.Equal(ret, []float64{-1, 1}) || s.Score(0) != 0 || s.Score(1) != 5 {
		t.Errorf("returns %v scores %v, want [-1 1] and [0 5]", ret, scores(s))
	}
	if !strings.Contains(s.Draw(-1), "game over") {
		t.Errorf("Draw does not say the game is over:\n%s", s.Draw(-1))
	}
}

// Returns are rank-based: (lower - higher) / (players - 1).
func TestReturns(t *testing.T) {
	for _, tc := range []struct {
		score []int16
		want  []float64
	}{
		{[]int16{3, 1}, []float64{1, -1}},
		{[]int16{2, 2}, []float64{0, 0}},
		{[]int16{5, 3, 1}, []float64{1, 0, -1}},
		{[]int16{5, 5, 1}, []float64{0.5, 0.5, -1}},
		{[]int16{0, 4, 4, 4}, []float64{-1, 1.0 / 3, 1.0 / 3, 1.0 / 3}},
		{[]int16{1, 2, 3, 4}, []float64{-1, -1.0 / 3, 1.0 / 3, 1}},
	} {
		s := newGame(t, len(tc.score)).NewState()
		copy(s.score[:], tc.score)
		got := make([]float64, len(tc.score))
		s.Returns(got)
		if !slices.Equal(got, make([]float64, len(got))) {
			t.Errorf("non-terminal returns %v, want zeros", got)
		}
		s.toMove = -1
		s.Returns(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("scores %v: returns %v, want %v", tc.score, got, tc.want)
		}
	}
}

func TestParseStateErrors(t *testing.T) {
	g := newGame(t, 2)
	s := g.NewState()
	s.PlayRandom(games.NewRand(3))
	for _, bad := range []string{
		"", "players=2", "players=3;", "players=x;", "I0@1", "players=2;I0@1 Q0@1",
		"players=2;I0@8",                          // sticks out
		s.String() + " I1@1",                      // after the end
		"players=2;" + strings.Repeat("I1@1 ", 6), // a column holds five vertical I's
	} {
		if _, err := g.ParseState(bad); err == nil {
			t.Errorf("ParseState(%q) accepted", bad)
		}
	}
	if st, err := g.ParseState("players=2;I0@1,T2@5"); err != nil || st.MoveNumber() != 2 {
		t.Errorf("comma-separated notation: %v", err)
	}
}
