package solver

import (
	"math/rand/v2"
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
