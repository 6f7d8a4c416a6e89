package solver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/internal/readfile"
)

// BookPly is the number of stones on the board in every position an
// opening book holds. All positions with fewer stones are answered from
// the book by a negamax over it (at most 7^(BookPly-n) leaves, with a
// table: instant), positions with more by the solver (about 0.5 s for a
// position with BookPly+1 stones on one core).
const BookPly = 8

// Outcomes of a position for the player to move, as a book stores them.
const (
	Loss    = -1
	Draw    = 0
	Win     = 1
	Unknown = 2 // not solved yet (a partial book under construction)
)

// bookMagic starts every book file; the version is its last byte.
const bookMagic = "canopy-c4-book\x00\x01"

// MirrorKey returns the key (connect4.Position.Key) of the left-right
// mirror image of the position with key k. Keys are column-separable (each
// column's 7 bits depend only on that column's stones), so mirroring the
// key mirrors the position.
func MirrorKey(k uint64) uint64 {
	var m uint64
	for col := range connect4.Width {
		m |= (k >> (col * 7) & 0x7f) << ((connect4.Width - 1 - col) * 7)
	}
	return m
}

// canonicalKey is the smaller of a position's key and its mirror's: one
// key for both images, which have the same value.
func canonicalKey(k uint64) uint64 { return min(k, MirrorKey(k)) }

// BookIndex lists the positions an opening book holds: every distinct
// position reachable in BookPly moves of legal play (play stops when a
// player has four in a row, so positions won before ply BookPly have no
// descendants), mirror images once, in increasing canonical key. It is
// computed on first use (about 0.1 s of CPU) and then shared; callers must
// not modify it.
func BookIndex() []connect4.Position {
	return sharedIndex().positions
}

// bookPositions is len(BookIndex()) for BookPly = 8 (checked against the
// outside table of positions per ply by TestBookIndexCoversEveryPosition),
// so that a book's size can be checked without computing the index.
const bookPositions = 92_244

// index is BookIndex with the canonical key of each position, the keys a
// Book looks positions up by.
type index struct {
	positions []connect4.Position
	keys      []uint64 // canonicalKey of positions[i], increasing
}

var (
	indexOnce sync.Once
	theIndex  index
	// indexBuilds counts the computations of the index (at most one): a
	// test checks that positions deeper than BookPly never cause one.
	indexBuilds atomic.Int32
)

// sharedIndex returns the book index, computing it on the first call; it
// is safe for concurrent use and its result is read-only.
func sharedIndex() *index {
	indexOnce.Do(func() {
		indexBuilds.Add(1)
		ps := enumerateBook()
		keys := make([]uint64, len(ps))
		for i, p := range ps {
			keys[i] = canonicalKey(p.Key())
		}
		theIndex = index{positions: ps, keys: keys}
	})
	return &theIndex
}

func enumerateBook() []connect4.Position {
	seen := make(map[uint64]connect4.Position, 100_000)
	visited := make(map[uint64]bool, 100_000) // positions below BookPly already expanded
	var walk func(p connect4.Position)
	walk = func(p connect4.Position) {
		if p.Moves() == BookPly {
			seen[canonicalKey(p.Key())] = p
			return
		}
		if p.LastMoverWon() || visited[p.Key()] {
			return
		}
		visited[p.Key()] = true
		for col := range connect4.Width {
			if p.CanPlay(col) {
				q := p
				q.Play(col)
				walk(q)
			}
		}
	}
	walk(connect4.Position{})
	keys := make([]uint64, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]connect4.Position, len(keys))
	for i, k := range keys {
		out[i] = seen[k]
	}
	return out
}

// Book holds the outcome (Win, Draw, Loss for the player to move) of every
// position of BookIndex, or Unknown for those a partial book has not
// solved yet. It is safe for concurrent reads; Set is not safe
// concurrently with anything.
//
// A book is cheap to make or decode (its outcomes only): the index it
// looks positions up in is computed when a position with at most BookPly
// stones first needs it (see sharedIndex), so a program that only meets
// deeper positions never pays for it.
type Book struct {
	vals []int8 // aligned with BookIndex
}

// NewBook returns a book with every outcome Unknown.
func NewBook() *Book {
	b := &Book{vals: make([]int8, bookPositions)}
	for i := range b.vals {
		b.vals[i] = Unknown
	}
	return b
}

// Len returns the number of positions the book covers.
func (b *Book) Len() int { return len(b.vals) }

// Solved returns how many outcomes are known.
func (b *Book) Solved() int {
	n := 0
	for _, v := range b.vals {
		if v != Unknown {
			n++
		}
	}
	return n
}

// At returns the outcome of BookIndex()[i].
func (b *Book) At(i int) int { return int(b.vals[i]) }

// Set records the outcome of BookIndex()[i].
func (b *Book) Set(i, outcome int) { b.vals[i] = int8(outcome) }

// Lookup returns the outcome of p, a position with BookPly stones, and
// whether the book holds it (false for other plies and for Unknown).
func (b *Book) Lookup(p connect4.Position) (int, bool) {
	if p.Moves() != BookPly {
		return 0, false
	}
	i, ok := slices.BinarySearch(sharedIndex().keys, canonicalKey(p.Key()))
	if !ok || b.vals[i] == Unknown {
		return 0, false
	}
	return int(b.vals[i]), true
}

// MarshalBinary encodes the book: the magic, BookPly and the position
// count (uint32, little endian), then the outcomes two bits each in
// BookIndex order (0 loss, 1 draw, 2 win, 3 unknown), four per byte, low
// bits first. Positions are not stored: BookIndex recomputes them.
func (b *Book) MarshalBinary() ([]byte, error) {
	out := make([]byte, 0, len(bookMagic)+8+(len(b.vals)+3)/4)
	out = append(out, bookMagic...)
	out = binary.LittleEndian.AppendUint32(out, BookPly)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(b.vals)))
	packed := make([]byte, (len(b.vals)+3)/4)
	for i, v := range b.vals {
		packed[i/4] |= byte(v+1) << (2 * (i % 4))
	}
	return append(out, packed...), nil
}

// ErrBookFormat is wrapped by every error about a malformed book.
var ErrBookFormat = errors.New("not a Connect Four opening book")

// UnmarshalBinary decodes a book written by MarshalBinary, checking its
// magic, ply, position count and length exactly.
func (b *Book) UnmarshalBinary(data []byte) error {
	if len(data) < len(bookMagic)+8 || string(data[:len(bookMagic)]) != bookMagic {
		return fmt.Errorf("%w: bad header (want a file written by genbook)", ErrBookFormat)
	}
	data = data[len(bookMagic):]
	ply, n := binary.LittleEndian.Uint32(data), binary.LittleEndian.Uint32(data[4:])
	data = data[8:]
	switch {
	case ply != BookPly:
		return fmt.Errorf("%w: positions after %d plies, this build uses %d", ErrBookFormat, ply, BookPly)
	case n != bookPositions:
		return fmt.Errorf("%w: %d positions, want %d", ErrBookFormat, n, bookPositions)
	case len(data) != (bookPositions+3)/4:
		return fmt.Errorf("%w: %d bytes of outcomes, want %d", ErrBookFormat, len(data), (bookPositions+3)/4)
	}
	nb := NewBook()
	for i := range nb.vals {
		nb.vals[i] = int8(data[i/4]>>(2*(i%4))&3) - 1
	}
	*b = *nb
	return nil
}

// Outcome returns Win, Draw or Loss for the player to move in p with at
// most two null-window searches (cheaper than Solve's exact score).
func (s *Solver) Outcome(p connect4.Position) int {
	switch {
	case p.LastMoverWon():
		return Loss
	case p.Moves() == connect4.Cells:
		return Draw
	case p.CanWinNext():
		return Win
	}
	if s.negamax(p, 0, 1) > 0 {
		return Win
	}
	if s.negamax(p, -1, 0) < 0 {
		return Loss
	}
	return Draw
}

// Outcome returns the outcome of p for the player to move when p has at
// most BookPly stones: a negamax over the book entries below p (a won
// child ends the scan; a position's outcome is memoised within the call).
// ok is false when p has more stones or an entry it needs is Unknown.
func (b *Book) Outcome(p connect4.Position) (outcome int, ok bool) {
	if p.Moves() > BookPly {
		return 0, false // without allocating the memo
	}
	return b.outcome(p, make(map[uint64]int8))
}

func (b *Book) outcome(p connect4.Position, memo map[uint64]int8) (int, bool) {
	switch {
	case p.LastMoverWon():
		return Loss, true
	case p.Moves() == BookPly:
		return b.Lookup(p)
	case p.Moves() > BookPly:
		return 0, false
	case p.CanWinNext():
		return Win, true
	}
	if v, ok := memo[p.Key()]; ok {
		return int(v), v != Unknown
	}
	best, complete := Loss, true
	for _, col := range columnOrder {
		if !p.CanPlay(col) {
			continue
		}
		q := p
		q.Play(col)
		v, ok := b.outcome(q, memo)
		if !ok {
			complete = false
			continue
		}
		if -v > best {
			best = -v
			if best == Win {
				break
			}
		}
	}
	if best != Win && !complete {
		memo[p.Key()] = Unknown
		return 0, false
	}
	memo[p.Key()] = int8(best)
	return best, true
}

// maxBookFileBytes bounds a book file (1 GiB; the book of every position
// up to 12 plies takes tens of MB). Devices and pipes are refused before
// reading (see internal/readfile).
const maxBookFileBytes = 1 << 30

// ReadBook reads a book file written by genbook.
func ReadBook(path string) (*Book, error) {
	data, err := readfile.Regular(path, maxBookFileBytes)
	if err != nil {
		return nil, err
	}
	b := new(Book)
	if err := b.UnmarshalBinary(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
