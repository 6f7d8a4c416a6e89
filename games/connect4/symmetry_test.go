package connect4

import (
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

// The mirror is checked against the rules: random games and their mirror
// images (actions mapped column c -> 6-c) must stay move for move in the
// transformed relation.
func TestMirrorSymmetry(t *testing.T) {
	g := New()
	syms := games.SymmetriesOf(g)
	if len(syms) != 1 || syms[0].Name() != "mirror" {
		t.Fatalf("symmetries %v, want [mirror]", syms)
	}
	n := 300
	if testing.Short() {
		n = 60
	}
	if err := gametest.CheckSymmetry(g, syms[0], games.NewRand(1), n); err != nil {
		t.Fatal(err)
	}
	// Applying the mirror twice is the identity.
	obs, once, twice := make([]float32, 2*Cells), make([]float32, 2*Cells), make([]float32, 2*Cells)
	s, _ := g.ParseMoves("4452")
	s.Observation(0, obs)
	syms[0].Observation(once, obs)
	syms[0].Observation(twice, once)
	for i := range obs {
		if obs[i] != twice[i] {
			t.Fatalf("mirror twice differs at %d", i)
		}
	}
}

// A false symmetry (actions mirrored, observation left as is) is caught:
// the check has teeth.
func TestCheckSymmetryCatchesAWrongMap(t *testing.T) {
	g := New()
	id := make([]int, 2*Cells)
	for i := range id {
		id[i] = i
	}
	act := []int{6, 5, 4, 3, 2, 1, 0}
	bad, err := games.NewSymmetry("half-mirror", id, act)
	if err != nil {
		t.Fatal(err)
	}
	if err := gametest.CheckSymmetry(g, bad, games.NewRand(1), 5); err == nil {
		t.Fatal("CheckSymmetry accepted an observation that is not mirrored")
	}
}
