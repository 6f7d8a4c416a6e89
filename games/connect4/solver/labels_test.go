package solver

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/internal/refdata"
)

// Every embedded label agrees with the outside truth: the position comes
// from Pons' test sets, and its best column score equals the position
// score published there. Legality of each column matches the board.
func TestLabelsAgreeWithPublishedScores(t *testing.T) {
	dir := refdata.Path(t, "connect4")
	published := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "solver_L*_R*.txt"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) == 2 {
				v, _ := strconv.Atoi(fs[1])
				published[fs[0]] = v
			}
		}
		fh.Close()
	}
	ls, err := Labels()
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 400 {
		t.Fatalf("%d labelled positions, want 400", len(ls))
	}
	for _, l := range ls {
		want, ok := published[l.Moves]
		if !ok {
			t.Fatalf("%s is not in the published test sets", l.Moves)
		}
		if got := l.Best(); got != want {
			t.Errorf("%s: best column score %d, published score %d", l.Moves, got, want)
		}
		p, _ := connect4.ParsePosition(l.Moves)
		n := len(l.Moves)
		if n < 8 || n > 30 {
			t.Errorf("%s: ply %d outside 8..30", l.Moves, n)
		}
		opt := 0
		for c := range connect4.Width {
			if (l.Scores[c] == Illegal) == p.CanPlay(c) {
				t.Errorf("%s column %d: score %d but CanPlay %v", l.Moves, c+1, l.Scores[c], p.CanPlay(c))
			}
			if l.Optimal(c) {
				opt++
			}
		}
		if opt == 0 {
			t.Errorf("%s: no optimal column", l.Moves)
		}
		if !l.Decisive() || l.RandomShare() >= 1 {
			t.Errorf("%s: every legal column keeps the value: the position tests nothing", l.Moves)
		}
	}
}

// A sample of the labels (the deepest positions, fast to solve) is
// recomputed column by column.
func TestLabelsRecomputed(t *testing.T) {
	ls, err := Labels()
	if err != nil {
		t.Fatal(err)
	}
	s := New()
	checked := 0
	for _, l := range ls {
		if len(l.Moves) < 28 || checked >= 20 {
			continue
		}
		p, _ := connect4.ParsePosition(l.Moves)
		if got := s.Analyze(p); got != l.Scores {
			t.Errorf("%s: solver %v, label %v", l.Moves, got, l.Scores)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no deep position to check")
	}
}

func TestParseLabelsErrors(t *testing.T) {
	for _, bad := range []string{"4444 1,2", "4 a,0,0,0,0,0,0", "8 0,0,0,0,0,0,0", "44 0,0,0"} {
		if _, err := ParseLabels(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
