package gametest

import (
	"testing"

	"github.com/canopy-go/canopy/games"
)

// Symmetries checks the symmetries g declares (games.Symmetric) against its
// rules: exactly the named ones in that order (identity excluded), each
// verified by games.CheckSymmetry on n random games (n/5, at least 1, in
// -short mode) seeded by seed and the symmetry's index, and the same slice
// returned on every call.
func Symmetries(t *testing.T, g games.Game, names []string, n int, seed uint64) {
	t.Helper()
	if testing.Short() {
		n = max(n/5, 1)
	}
	syms := games.SymmetriesOf(g)
	got := make([]string, len(syms))
	for i := range syms {
		got[i] = syms[i].Name()
	}
	if len(got) != len(names) {
		t.Fatalf("%s: symmetries %v, want %v", g.Spec(), got, names)
	}
	for i := range names {
		if got[i] != names[i] {
			t.Fatalf("%s: symmetries %v, want %v", g.Spec(), got, names)
		}
	}
	if again := games.SymmetriesOf(g); len(syms) > 0 && &again[0] != &syms[0] {
		t.Errorf("%s: Symmetries builds a new slice per call", g.Spec())
	}
	for i, s := range syms {
		if err := games.CheckSymmetry(g, s, games.NewRand(seed+uint64(i)), n); err != nil {
			t.Fatal(err)
		}
	}
}
