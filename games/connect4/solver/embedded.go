package solver

import (
	_ "embed"
	"fmt"
	"sync"
)

// embeddedBook is the complete opening book shipped in the binary: the
// outcome of each of the 92,244 positions of BookIndex, two bits each
// (23,085 bytes), computed with this package's solver by genbook
// (games/connect4/solver/genbook; hours of CPU time, see
// docs/BENCHMARKS.md).
//
//go:embed book.bin
var embeddedBook []byte

var (
	openingOnce sync.Once
	opening     *Book
	openingErr  error
)

// OpeningBook returns the opening book built into the binary, decoded on
// first use (well under a millisecond) and then shared: with it, Book.Outcome
// answers any position with at most BookPly stones without searching. The
// index those answers need is computed on the first such position, not
// here (see Book). The returned book is safe for concurrent reads and
// must not be modified (Set).
func OpeningBook() (*Book, error) {
	openingOnce.Do(func() {
		b := new(Book)
		if err := b.UnmarshalBinary(embeddedBook); err != nil {
			openingErr = fmt.Errorf("solver: the built-in opening book: %w (the binary is damaged or was built from a bad book.bin)", err)
			return
		}
		opening = b
	})
	return opening, openingErr
}

// LoadBook resolves a book option as the solver agent and `canopy solve`
// take it: "" or "default" is the built-in book (OpeningBook), "none" is
// no book (nil, nil), and anything else names a file written by genbook
// (ReadBook).
func LoadBook(name string) (*Book, error) {
	switch name {
	case "", "default":
		return OpeningBook()
	case "none":
		return nil, nil
	}
	return ReadBook(name)
}
