package perft_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/games/perft"
	"github.com/canopy-go/canopy/internal/refdata"
)

// readTable reads whitespace-separated integer rows, skipping # comments.
func readTable(t testing.TB, path string) [][]uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		var row []uint64
		for _, fld := range strings.Fields(line) {
			v, err := strconv.ParseUint(fld, 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// noUndo hides connect4's Undo and PositionKey, so Count takes the
// CloneInto path and Distinct dedupes by String, which here is the drawn
// board (a full position notation, unlike connect4's move history).
type noUndoGame struct{ games.Game }

func (g noUndoGame) NewInitialState() games.State {
	return &noUndo{g.Game.NewInitialState().(*connect4.State)}
}

type noUndo struct{ s *connect4.State }

func (n *noUndo) Game() games.Game               { return noUndoGame{connect4.New()} }
func (n *noUndo) CurrentPlayer() int             { return n.s.CurrentPlayer() }
func (n *noUndo) IsTerminal() bool               { return n.s.IsTerminal() }
func (n *noUndo) Legal(m games.Mask)             { n.s.Legal(m) }
func (n *noUndo) Apply(a games.Action)           { n.s.Apply(a) }
func (n *noUndo) Clone() games.State             { return &noUndo{n.s.Clone().(*connect4.State)} }
func (n *noUndo) CloneInto(dst games.State)      { n.s.CloneInto(dst.(*noUndo).s) }
func (n *noUndo) Returns(dst []float64)          { n.s.Returns(dst) }
func (n *noUndo) Hash() uint64                   { return n.s.Hash() }
func (n *noUndo) Observation(p int, d []float32) { n.s.Observation(p, d) }
func (n *noUndo) MoveNumber() int                { return n.s.MoveNumber() }
func (n *noUndo) ActionString(a games.Action) string {
	return n.s.ActionString(a)
}
func (n *noUndo) ParseAction(s string) (games.Action, error) { return n.s.ParseAction(s) }
func (n *noUndo) String() string                             { return n.s.Draw(-1) }

func TestCountConnect4(t *testing.T) {
	rows := readTable(t, refdata.Path(t, "connect4/perft_paths.txt"))
	depth := 9
	if testing.Short() {
		depth = 7
	}
	if depth >= len(rows) {
		t.Fatalf("perft_paths.txt has only %d rows", len(rows))
	}
	g := connect4.New()
	check := func(name string, got []uint64) {
		t.Helper()
		for ply, c := range got {
			if rows[ply][0] != uint64(ply) || c != rows[ply][1] {
				t.Errorf("%s: ply %d: %d sequences, want %d", name, ply, c, rows[ply][1])
			}
		}
	}
	check("undo", perft.Count(g.NewInitialState(), depth))
	cloneDepth := depth - 1
	check("clone", perft.Count(noUndoGame{g}.NewInitialState(), cloneDepth))
}

func TestCountDoesNotModify(t *testing.T) {
	s, err := connect4.New().ParseState("4453")
	if err != nil {
		t.Fatal(err)
	}
	before, h := s.String(), s.Hash()
	perft.Count(s, 3)
	if s.String() != before || s.Hash() != h {
		t.Errorf("Count modified its argument")
	}
	if got := perft.Count(s, 0); len(got) != 1 || got[0] != 1 {
		t.Errorf("Count(depth 0) = %v", got)
	}
	if perft.Count(s, -1) != nil {
		t.Errorf("Count(depth -1) not nil")
	}
}

func TestCountFinishedGame(t *testing.T) {
	s, err := connect4.New().ParseState("1212121") // X won in column 1
	if err != nil {
		t.Fatal(err)
	}
	got := perft.Count(s, 3)
	if got[0] != 1 || got[1] != 0 || got[2] != 0 || got[3] != 0 {
		t.Errorf("finished game extended: %v", got)
	}
}

func TestDistinctConnect4(t *testing.T) {
	rows := readTable(t, refdata.Path(t, "connect4/positions_per_ply.txt"))
	depth, strDepth := 10, 8
	if testing.Short() {
		depth, strDepth = 8, 5
	}
	g := connect4.New()
	check := func(name string, sp perft.Split) {
		t.Helper()
		for ply := range sp.Total {
			r := rows[ply] // ply total won drawn lost terminal
			if r[0] != uint64(ply) || sp.Total[ply] != r[1] || sp.Terminal[ply] != r[5] {
				t.Errorf("%s: ply %d: %d positions (%d terminal), want %d (%d)", name, ply, sp.Total[ply], sp.Terminal[ply], r[1], r[5])
			}
		}
	}
	check("key", perft.DistinctSplit(g, g.NewInitialState(), depth))
	ng := noUndoGame{g}
	check("string", perft.DistinctSplit(ng, ng.NewInitialState(), strDepth))
	if got := perft.Distinct(g, g.NewInitialState(), 3); len(got) != 4 || got[3] != rows[3][1] {
		t.Errorf("Distinct(3) = %v", got)
	}
}

func TestCheck(t *testing.T) {
	if err := perft.Check(connect4.New()); err != nil {
		t.Errorf("Check(connect4): %v", err)
	}
}

func BenchmarkCountConnect4(b *testing.B) {
	g := connect4.New()
	s := g.NewInitialState()
	var n uint64
	for b.Loop() {
		c := perft.Count(s, 7)
		n += c[7]
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "leaves/s")
}
