package solver

import (
	"bufio"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/internal/refdata"
)

// plyCounts reads one row of the outside table positions_per_ply.txt:
// distinct positions after ply moves, and how many are won, drawn and lost
// for the first player.
func plyCounts(t *testing.T, ply int) (total, won, drawn, lost int) {
	t.Helper()
	path := refdata.Path(t, "connect4/positions_per_ply.txt")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || strings.HasPrefix(fields[0], "#") || fields[0] != strconv.Itoa(ply) {
			continue
		}
		var v [4]int
		for i := range v {
			if v[i], err = strconv.Atoi(fields[i+1]); err != nil {
				t.Fatalf("%s: ply %d: %v", path, ply, err)
			}
		}
		return v[0], v[1], v[2], v[3]
	}
	t.Fatalf("%s: no row for ply %d", path, ply)
	return
}

// images is how many distinct positions a canonical book entry stands for.
func images(p connect4.Position) int {
	if MirrorKey(p.Key()) == p.Key() {
		return 1
	}
	return 2
}

func TestBookIndexCoversEveryPosition(t *testing.T) {
	total, _, _, _ := plyCounts(t, BookPly)
	n, prev := 0, uint64(0)
	for i, p := range BookIndex() {
		if p.Moves() != BookPly {
			t.Fatalf("entry %d has %d stones", i, p.Moves())
		}
		k := canonicalKey(p.Key())
		if i > 0 && k <= prev {
			t.Fatalf("entry %d: keys not increasing", i)
		}
		prev = k
		n += images(p)
	}
	if n != total {
		t.Fatalf("book index stands for %d positions after %d plies; the reference table has %d", n, BookPly, total)
	}
	if len(BookIndex()) != bookPositions {
		t.Fatalf("book index has %d entries; bookPositions says %d", len(BookIndex()), bookPositions)
	}
}

func TestMirrorKeyIsTheMirroredGame(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		var p, m connect4.Position
		for p.Moves() < 30 && !p.LastMoverWon() {
			col := r.IntN(connect4.Width)
			if !p.CanPlay(col) {
				continue
			}
			p.Play(col)
			m.Play(connect4.Width - 1 - col)
			if MirrorKey(p.Key()) != m.Key() || MirrorKey(m.Key()) != p.Key() {
				t.Fatalf("after %d moves: MirrorKey(%#x) = %#x, mirrored game has key %#x", p.Moves(), p.Key(), MirrorKey(p.Key()), m.Key())
			}
		}
	}
}

func TestOutcomeMatchesReferenceScores(t *testing.T) {
	s := sharedSolver()
	for _, name := range []string{"solver_L3_R1.txt", "solver_L2_R1.txt"} {
		for i, l := range readLines(t, name, 300) {
			want := Draw
			if l.score > 0 {
				want = Win
			} else if l.score < 0 {
				want = Loss
			}
			if got := s.Outcome(l.pos); got != want {
				t.Fatalf("%s line %d (%s, score %d): Outcome = %d, want %d", name, i+1, l.moves, l.score, got, want)
			}
		}
	}
}

func TestBookEncodingRoundTrip(t *testing.T) {
	b := NewBook()
	r := rand.New(rand.NewPCG(5, 6))
	for i := range b.Len() {
		b.Set(i, r.IntN(4)-1)
	}
	data, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var c Book
	if err := c.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	for i := range b.Len() {
		if b.At(i) != c.At(i) {
			t.Fatalf("entry %d: %d after the round trip, want %d", i, c.At(i), b.At(i))
		}
	}
	p := BookIndex()[123]
	if v, ok := c.Lookup(p); ok != (b.At(123) != Unknown) || ok && v != b.At(123) {
		t.Fatalf("Lookup(entry 123) = %d, %v; stored %d", v, ok, b.At(123))
	}
	if _, ok := c.Lookup(connect4.Position{}); ok {
		t.Fatal("Lookup of the empty board succeeded; the book holds ply-8 positions only")
	}
	for name, bad := range map[string][]byte{
		"empty":     nil,
		"truncated": data[:len(data)-1],
		"trailing":  append(append([]byte{}, data...), 0),
		"magic":     append([]byte("x"), data[1:]...),
	} {
		if err := c.UnmarshalBinary(bad); !errors.Is(err, ErrBookFormat) {
			t.Errorf("%s book: err = %v, want ErrBookFormat", name, err)
		}
	}
}

// bookFor returns a book holding, solved live, the entries below p (a
// position with BookPly-1 stones), and Unknown everywhere else.
func bookFor(t *testing.T, p connect4.Position) *Book {
	t.Helper()
	b := NewBook()
	s := sharedSolver()
	index := map[uint64]int{}
	for i, q := range BookIndex() {
		index[canonicalKey(q.Key())] = i
	}
	for col := range connect4.Width {
		if !p.CanPlay(col) {
			continue
		}
		q := p
		q.Play(col)
		i, ok := index[canonicalKey(q.Key())]
		if !ok {
			t.Fatalf("child %d of %s is not in the book index", col, p)
		}
		b.Set(i, s.Outcome(q))
	}
	return b
}

func TestBookOutcomeMatchesReferenceScores(t *testing.T) {
	if testing.Short() {
		t.Skip("solves up to 21 positions after 8 plies (seconds each); skipped in -short mode")
	}
	n := 0
	for i, l := range readLines(t, "solver_L1_R1.txt", 0) {
		if l.pos.Moves() != BookPly-1 || n == 3 {
			continue
		}
		n++
		b := bookFor(t, l.pos)
		want := Draw
		if l.score > 0 {
			want = Win
		} else if l.score < 0 {
			want = Loss
		}
		if got, ok := b.Outcome(l.pos); !ok || got != want {
			t.Fatalf("line %d (%s, score %d): book outcome %d, %v; want %d", i+1, l.moves, l.score, got, ok, want)
		}
		if _, ok := b.Outcome(connect4.Position{}); ok {
			t.Fatal("the empty board's outcome came from a book that misses most entries")
		}
		// The agent, given that book, picks a move that keeps the outcome.
		a := NewAgent(1)
		a.Book = b
		st, err := connect4.New().ParseMoves(l.moves)
		if err != nil {
			t.Fatal(err)
		}
		act, err := a.Act(t.Context(), st, st.CurrentPlayer())
		if err != nil {
			t.Fatal(err)
		}
		if got := a.solver.ScoreMove(l.pos, int(act)); sign(got) != want {
			t.Fatalf("line %d (%s): the agent played column %d worth %d; the position is worth %d", i+1, l.moves, act, got, l.score)
		}
	}
	if n == 0 {
		t.Fatal("no position after 7 plies in solver_L1_R1.txt")
	}
}

// A book file of any content decodes or fails with ErrBookFormat; it never
// panics.
func FuzzBookUnmarshal(f *testing.F) {
	b := NewBook()
	data, _ := b.MarshalBinary()
	f.Add(data)
	f.Add([]byte(bookMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Book
		if err := c.UnmarshalBinary(data); err != nil && !errors.Is(err, ErrBookFormat) {
			t.Fatalf("error not wrapping ErrBookFormat: %v", err)
		}
	})
}
