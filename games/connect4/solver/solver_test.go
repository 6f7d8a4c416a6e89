package solver

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/internal/refdata"
)

type line struct {
	moves string
	pos   connect4.Position
	score int
}

// readLines reads "<moves> <score>" lines from a solver benchmark file.
func readLines(t testing.TB, name string, limit int) []line {
	t.Helper()
	path := refdata.Path(t, "connect4/"+name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []line
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan() && (limit <= 0 || len(out) < limit); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			t.Fatalf("%s:%d: want <moves> <score>", path, n)
		}
		pos, err := connect4.ParsePosition(fields[0])
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		score, err := strconv.Atoi(fields[1])
		if err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		out = append(out, line{fields[0], pos, score})
	}
	return out
}

var shared *Solver

func sharedSolver() *Solver {
	if shared == nil {
		shared = New()
	}
	return shared
}

func checkFile(t *testing.T, name string, limit int) {
	s := sharedSolver()
	for i, l := range readLines(t, name, limit) {
		if got := s.Solve(l.pos); got != l.score {
			t.Errorf("%s line %d %s: score %d, want %d", name, i+1, l.moves, got, l.score)
		}
	}
}

func TestL3R1(t *testing.T) { checkFile(t, "solver_L3_R1.txt", 0) }
func TestL2R1(t *testing.T) { checkFile(t, "solver_L2_R1.txt", 0) }

func TestL2R2(t *testing.T) {
	limit := 0
	if testing.Short() {
		limit = 20
	}
	checkFile(t, "solver_L2_R2.txt", limit)
}

func TestL1(t *testing.T) {
	if testing.Short() {
		t.Skip("beginning-of-game positions take seconds each")
	}
	checkFile(t, "solver_L1_R1.txt", 20)
	checkFile(t, "solver_L1_R2.txt", 5)
}

// Analyze's best column must carry the position's score, and each
// column's score must be the negated score of the position after it.
func TestAnalyze(t *testing.T) {
	s := sharedSolver()
	for _, l := range readLines(t, "solver_L3_R1.txt", 100) {
		sc := s.Analyze(l.pos)
		best := Illegal
		for col, v := range sc {
			if !l.pos.CanPlay(col) {
				if v != Illegal {
					t.Errorf("%s: full column %d scored %d", l.moves, col+1, v)
				}
				continue
			}
			best = max(best, v)
		}
		if best != l.score {
			t.Errorf("%s: best analyzed score %d, want %d (%v)", l.moves, best, l.score, sc)
		}
	}
}

// Hand-computed scores: an immediate win for the player to move with k
// stones already played is 22-(k+1); a finished game scores the loss.
func TestSolveByHand(t *testing.T) {
	s := sharedSolver()
	for _, tc := range []struct {
		moves string
		want  int
	}{
		{"112233", 18},   // X has 3 stones, wins with the 4th: 22-4
		{"1122334", -18}, // X won with its 4th stone: O to move has lost
		{"22334", -18},   // X has b1 c1 d1, threatens a1 and e1: O loses to X's 4th stone
	} {
		p, err := connect4.ParsePosition(tc.moves)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Solve(p); got != tc.want {
			t.Errorf("%s: Solve = %d, want %d", tc.moves, got, tc.want)
		}
	}
}
