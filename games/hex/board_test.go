package hex

import (
	"fmt"
	"math"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// refConnected is an independent breadth-first search over a plain grid:
// owner[r][c] is 0, 1 or -1 (empty). Player 0 joins row 0 to row n-1,
// player 1 column 0 to column n-1, through the six hex neighbours
// (r, c±1), (r±1, c), (r-1, c+1), (r+1, c-1).
func refConnected(owner [][]int, p int) bool {
	n := len(owner)
	seen := make([][]bool, n)
	for i := range seen {
		seen[i] = make([]bool, n)
	}
	var queue [][2]int
	for i := range n {
		r, c := 0, i
		if p == 1 {
			r, c = i, 0
		}
		if owner[r][c] == p {
			seen[r][c] = true
			queue = append(queue, [2]int{r, c})
		}
	}
	offsets := [][2]int{{0, -1}, {0, 1}, {-1, 0}, {1, 0}, {-1, 1}, {1, -1}}
	for len(queue) > 0 {
		r, c := queue[0][0], queue[0][1]
		queue = queue[1:]
		if (p == 0 && r == n-1) || (p == 1 && c == n-1) {
			return true
		}
		for _, o := range offsets {
			rr, cc := r+o[0], c+o[1]
			if rr >= 0 && rr < n && cc >= 0 && cc < n && !seen[rr][cc] && owner[rr][cc] == p {
				seen[rr][cc] = true
				queue = append(queue, [2]int{rr, cc})
			}
		}
	}
	return false
}

// winnerOf (test helper) returns the player whose stones connect their edges in
// stones, or -1. On a full board exactly one player connects.
func (g *Game) winnerOf(stones *[2]board) int {
	if g.connects(stones[0], g.row0, g.rowLast) {
		return 0
	}
	if g.connects(stones[1], g.col0, g.colLast) {
		return 1
	}
	return -1
}

// scratchHash recomputes the Zobrist hash from the board and side to move.
func scratchHash(s *State) uint64 {
	var h uint64
	for a := range s.g.nn {
		for p := range 2 {
			if s.stones[p].has(a) {
				h ^= zobrist[p*maxCells+a]
			}
		}
	}
	if s.moves&1 == 1 {
		h ^= zobrist[sideKey]
	}
	return h
}

func ownerGrid(s *State) [][]int {
	n := s.g.n
	g := make([][]int, n)
	for r := range n {
		g[r] = make([]int, n)
		for c := range n {
			g[r][c] = s.Stone(r, c)
		}
	}
	return g
}

// TestFullBoardOneWinner colours every cell at random (any colouring, not
// only balanced ones) and checks that exactly one player connects (the Hex
// theorem) and that the bit-parallel flood fill agrees with the BFS.
func TestFullBoardOneWinner(t *testing.T) {
	fills := 2000
	if testing.Short() {
		fills = 300
	}
	rng := games.NewRand(11)
	for _, n := range []int{2, 3, 5, 7, 11, 13} {
		g, _ := New(n, false)
		for range fills {
			s := g.NewState()
			for a := range n * n {
				s.stones[rng.IntN(2)].set(a)
			}
			grid := ownerGrid(s)
			b, w := refConnected(grid, 0), refConnected(grid, 1)
			if b == w {
				t.Fatalf("%dx%d full board: black connects %v, white connects %v\n%s", n, n, b, w, s.Draw(-1))
			}
			want := 1
			if b {
				want = 0
			}
			black := g.toRows(&s.stones[0])
			if got := connectsTopBottom(&black, n); got != b {
				t.Fatalf("%dx%d: row sweep says %v, BFS %v\n%s", n, n, got, b, s.Draw(-1))
			}
			if got := g.winnerOf(&s.stones); got != want {
				t.Fatalf("%dx%d: flood fill says %d, BFS %d\n%s", n, n, got, want, s.Draw(-1))
			}
		}
	}
}

// TestIncrementalWinMatchesBFS plays random games move by move and checks
// after every move that the union-find's verdict equals the BFS on the
// board so far (in particular the game ends at the first connection).
func TestIncrementalWinMatchesBFS(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 10
	}
	rng := games.NewRand(5)
	for _, size := range []int{2, 3, 5, 7, 11, 13} {
		for _, sw := range []bool{false, true} {
			g, _ := New(size, sw)
			m := games.NewMask(g.NumActions())
			for range n {
				s := g.NewState()
				for !s.IsTerminal() {
					s.Legal(m)
					s.Apply(m.Random(rng))
					grid := ownerGrid(s)
					b, w := refConnected(grid, 0), refConnected(grid, 1)
					want := -1
					switch {
					case b && w:
						t.Fatalf("both connect after %q", s.String())
					case b:
						want = 0
					case w:
						want = 1
					}
					if h := scratchHash(s); h != s.Hash() {
						t.Fatalf("%s after %q: incremental hash %x, from scratch %x", g.Spec(), s.String(), s.Hash(), h)
					}
					black := g.toRows(&s.stones[0])
					if connectsTopBottom(&black, size) != b {
						t.Fatalf("%s after %q: row sweep disagrees with BFS (%v)", g.Spec(), s.String(), b)
					}
					if s.Winner() != want || g.winnerOf(&s.stones) != want {
						t.Fatalf("%s after %q: union-find winner %d, flood %d, BFS %d\n%s",
							g.Spec(), s.String(), s.Winner(), g.winnerOf(&s.stones), want, s.Draw(-1))
					}
				}
			}
		}
	}
}

// TestRandomPlayoutWinnerDistribution compares the fast playout's win rate
// with move-by-move uniform playouts from the same positions. With 4000
// samples each, the difference of two rates has a standard deviation of at
// most 0.0112; the test allows 4.5 of them.
func TestRandomPlayoutWinnerDistribution(t *testing.T) {
	samples := 4000
	if testing.Short() {
		samples = 1000
	}
	tol := 4.5 * math.Sqrt(2*0.25/float64(samples))
	for _, c := range []struct{ spec, notation string }{
		{"hex:size=5", ""},
		{"hex:size=5", "c3 b2 a1"},
		{"hex:size=5,swap=true", "a1"},      // the swap is worth a lot here
		{"hex:size=5,swap=true", "c3"},      // and here it keeps the centre
		{"hex:size=7,swap=true", "d4 swap"}, // Black to move after a swap
		{"hex:size=11", "f6"},
		{"hex:size=4", "a1 b1 a2 b2 a3 b3"}, // Black wins with a4, White with b4
	} {
		g := mustGame(t, c.spec)
		start := mustParse(t, g, c.notation)
		rng := games.NewRand(3)
		m := games.NewMask(g.NumActions())
		s := g.NewState()
		fast, slow := 0, 0
		for range samples {
			if start.RandomPlayoutWinner(rng) == 0 {
				fast++
			}
			*s = *start
			games.RandomPlayout(s, rng, m, nil)
			if s.Winner() == 0 {
				slow++
			}
		}
		if s := start.String(); s != c.notation {
			t.Fatalf("RandomPlayoutWinner changed the state to %q", s)
		}
		pf, ps := float64(fast)/float64(samples), float64(slow)/float64(samples)
		if math.Abs(pf-ps) > tol {
			t.Errorf("%s %q: Black wins %.3f of fast playouts, %.3f of move-by-move ones (tolerance %.3f)", c.spec, c.notation, pf, ps, tol)
		}
	}
}

func TestRandomPlayoutWinnerTerminal(t *testing.T) {
	s := mustParse(t, mustGame(t, "hex:size=3"), "a2 a1 b2 b1 c3 c1")
	if w := s.RandomPlayoutWinner(games.NewRand(1)); w != 1 {
		t.Errorf("terminal state: winner %d, want 1", w)
	}
}

func TestRandBelowUniform(t *testing.T) {
	src := newBitSource(games.NewRand(9))
	for _, n := range []uint32{1, 2, 3, 7, 169} {
		counts := make([]int, n)
		draws := 2000 * int(n)
		for range draws {
			v := src.below(n)
			if v >= n {
				t.Fatalf("below(%d) = %d", n, v)
			}
			counts[v]++
		}
		// Chi-square with n-1 degrees of freedom; 5 sigma above the mean.
		chi := 0.0
		for _, c := range counts {
			d := float64(c) - 2000
			chi += d * d / 2000
		}
		if limit := float64(n-1) + 5*math.Sqrt(2*float64(n-1)); chi > limit {
			t.Errorf("below(%d): chi-square %.1f > %.1f", n, chi, limit)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	g := mustGame(t, "hex:size=13,swap=true")
	s := mustParse(t, g, "a1")
	rng := games.NewRand(1)
	if n := testing.AllocsPerRun(20, func() { s.RandomPlayoutWinner(rng) }); n != 0 {
		t.Errorf("RandomPlayoutWinner allocates %v", n)
	}
	if n := testing.AllocsPerRun(20, func() { g.winnerOf(&s.stones) }); n != 0 {
		t.Errorf("winnerOf allocates %v", n)
	}
}

func ExampleState_Draw() {
	g, _ := games.New("hex:size=4")
	s, _ := g.ParseState("b2 c2 b3")
	fmt.Print(s.(games.Drawer).Draw(-1))
	// Output:
	// hex:size=4,swap=false (3 moves)
	//    a b c d
	//  1 . . . . 1
	//   2 . X O . 2
	//    3 . X . . 3
	//     4 . . . . 4
	//        a b c d
	// White (O, left-right) to move (move 4)
}
