package solver

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/canopy-go/canopy/games/connect4"
)

// openingBook returns the built-in book, which must be complete.
func openingBook(t *testing.T) *Book {
	t.Helper()
	b, err := OpeningBook()
	if err != nil {
		t.Fatal(err)
	}
	if b.Solved() != b.Len() {
		t.Fatalf("the built-in book knows %d of %d outcomes; finish it with genbook", b.Solved(), b.Len())
	}
	return b
}

// positionsAfter returns every distinct position reachable in exactly n
// moves of legal play (play stops at four in a row).
func positionsAfter(n int) []connect4.Position {
	level := []connect4.Position{{}}
	for range n {
		seen := make(map[uint64]bool)
		var next []connect4.Position
		for _, p := range level {
			if p.LastMoverWon() {
				continue
			}
			for col := range connect4.Width {
				if !p.CanPlay(col) {
					continue
				}
				q := p
				q.Play(col)
				if !seen[q.Key()] {
					seen[q.Key()] = true
					next = append(next, q)
				}
			}
		}
		level = next
	}
	return level
}

// The book's outcomes, and its negamax below ply 8, reproduce the outside
// table of won/drawn/lost positions per ply (markus7800's strong solution,
// which matches OEIS A212693) at every ply from 0 to 8.
func TestOpeningBookMatchesTheStrongSolution(t *testing.T) {
	b := openingBook(t)
	for ply := 0; ply <= BookPly; ply++ {
		total, won, drawn, lost := plyCounts(t, ply)
		var got [3]int // first player's loss, draw, win
		ps := positionsAfter(ply)
		for _, p := range ps {
			v, ok := b.Outcome(p)
			if !ok {
				t.Fatalf("ply %d: no outcome for %s", ply, p)
			}
			if ply%2 == 1 { // the second player is to move
				v = -v
			}
			got[v+1]++
		}
		if len(ps) != total || got != [3]int{lost, drawn, won} {
			t.Errorf("ply %d: %d positions, first player wins %d, draws %d, loses %d; the table says %d: %d, %d, %d",
				ply, len(ps), got[2], got[1], got[0], total, won, drawn, lost)
		}
	}
}

// John Tromp's 8-ply database (UCI Machine Learning Repository,
// "Connect-4", 1995: connect-4.names) lists every legal position after 8
// plies in which neither player has won and the next move is not forced,
// one per mirror pair: 67,557 positions, 44,473 won, 6,449 drawn and
// 16,635 lost for the player to move. "Not forced" reads as: the player to
// move cannot win at once and need not block an immediate threat (that
// reading gives exactly 67,557).
func TestOpeningBookMatchesTrompsDatabase(t *testing.T) {
	b := openingBook(t)
	var n int
	var got [3]int
	for i, p := range BookIndex() {
		if p.LastMoverWon() || p.CanWinNext() || p.OpponentWinningPositions()&p.Possible() != 0 {
			continue
		}
		n++
		got[b.At(i)+1]++
	}
	if n != 67557 || got != [3]int{16635, 6449, 44473} {
		t.Fatalf("%d positions: %d won, %d drawn, %d lost; Tromp's database: 67557: 44473, 6449, 16635",
			n, got[2], got[1], got[0])
	}
}

// Allis (1988) and Tromp: the first player wins only by starting in the
// centre column; the two columns beside it draw, the others lose.
func TestOpeningBookFirstMove(t *testing.T) {
	b := openingBook(t)
	want := [connect4.Width]int{Loss, Loss, Draw, Win, Draw, Loss, Loss}
	for col, w := range want {
		var p connect4.Position
		p.Play(col)
		v, ok := b.Outcome(p)
		if !ok || -v != w {
			t.Errorf("first move in column %d: outcome %d (%v), want %d", col+1, -v, ok, w)
		}
	}
}

// Entries agree with the live solver on positions drawn at random.
func TestOpeningBookAgreesWithTheSolver(t *testing.T) {
	b := openingBook(t)
	n := 24
	if testing.Short() {
		n = 3
	}
	idx := BookIndex()
	r := rand.New(rand.NewPCG(11, 12))
	s := New()
	for range n {
		i := r.IntN(len(idx))
		if got, want := b.At(i), s.Outcome(idx[i]); got != want {
			t.Fatalf("book entry %d (%s): %d, solver says %d", i, idx[i], got, want)
		}
	}
}

// lazyChildEnv makes the test binary run TestBookIndexIsLazy's checks in a
// fresh process, where nothing has computed the book index yet.
const lazyChildEnv = "CANOPY_SOLVER_LAZY_INDEX_CHILD"

// Loading a book (built in or from a file) and asking about positions
// deeper than BookPly must not compute the book index; the first position
// with at most BookPly stones computes it, once, even when several
// goroutines ask at the same time. The index is package-wide and other
// tests compute it, so the checks run in a child process.
func TestBookIndexIsLazy(t *testing.T) {
	if os.Getenv(lazyChildEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestBookIndexIsLazy$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), lazyChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestBookIndexIsLazy") {
			t.Fatalf("child process: %v\n%s", err, out)
		}
		return
	}
	if n := indexBuilds.Load(); n != 0 {
		t.Fatalf("the index was computed %d times before any book was used", n)
	}
	builtIn, err := LoadBook("default")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "book.bin")
	if err := os.WriteFile(path, embeddedBook, 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := LoadBook(path)
	if err != nil {
		t.Fatal(err)
	}
	s := New()
	// Deeper than the book: 9 to 20 stones. A won game, a move that wins
	// at once and a draw are not asked of the book either way.
	for _, moves := range []string{"444444333", "4444443332", "12345671234567", "12345671234567123456"} {
		p, err := connect4.ParsePosition(moves)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []*Book{builtIn, fromFile} {
			if _, ok := b.Outcome(p); ok {
				t.Errorf("%s: the book answered a position with %d stones", moves, p.Moves())
			}
			if _, ok := b.Lookup(p); ok {
				t.Errorf("%s: Lookup answered a position with %d stones", moves, p.Moves())
			}
		}
		s.Outcome(p)
	}
	a := &Agent{Book: builtIn}
	p, err := connect4.ParsePosition("44444433")
	if err != nil {
		t.Fatal(err)
	}
	for col := range connect4.Width {
		if _, ok := a.bookScore(p, col); ok {
			t.Errorf("the agent used the book after 8 stones (column %d)", col+1)
		}
	}
	if n := indexBuilds.Load(); n != 0 {
		t.Fatalf("positions deeper than the book computed the index (%d times)", n)
	}
	// First-move outcomes from the first player's view are loss loss
	// draw win draw loss loss (Allis 1988): after the move, the player to
	// move wins, wins, draws, loses, draws, wins, wins.
	want := [connect4.Width]int{Win, Win, Draw, Loss, Draw, Win, Win}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			b := builtIn
			if g%2 == 1 {
				b = fromFile
			}
			for col := range connect4.Width {
				var p connect4.Position
				p.Play(col)
				if v, ok := b.Outcome(p); !ok || v != want[col] {
					t.Errorf("first move in column %d: outcome %d, %v; want %d", col+1, v, ok, want[col])
				}
			}
		})
	}
	wg.Wait()
	if n := indexBuilds.Load(); n != 1 {
		t.Fatalf("the index was computed %d times, want once", n)
	}
}
