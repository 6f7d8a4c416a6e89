package nim

import (
	"slices"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
	"github.com/canopy-go/canopy/games/perft"
)

func TestConformance(t *testing.T) {
	for _, spec := range []string{"nim", "nim:stones=1", "nim:stones=64,take=9", "nim:take=1"} {
		t.Run(spec, func(t *testing.T) {
			gametest.Run(t, games.MustNew(spec), gametest.Options{Games: 200})
		})
	}
}

func FuzzNotation(f *testing.F) { gametest.FuzzNotation(f, games.MustNew("nim")) }

// Move sequences by ply from a heap of 5, moves of 1..3, worked by hand:
// ply d counts the d-tuples of 1..3 summing to at most 5 (1, 3, 9-1,
// 1+3+6, 1+4, 1), and the games that end sum to exactly 5: the 13
// compositions of 5 into parts of at most 3 (a tribonacci number).
func TestPerft(t *testing.T) {
	g := games.MustNew("nim:stones=5")
	if got, want := perft.Count(g.NewInitialState(), 6), []uint64{1, 3, 8, 10, 5, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("perft = %v, want %v", got, want)
	}
}

// The theory of subtraction games: the player to move loses exactly when
// the heap is a multiple of take+1. Exhaustive minimax over every heap and
// move limit checks Returns and Legal against it.
func TestLosingHeaps(t *testing.T) {
	for take := 1; take <= 4; take++ {
		for stones := 1; stones <= 20; stones++ {
			g, err := New(stones, take)
			if err != nil {
				t.Fatal(err)
			}
			s := g.NewInitialState()
			if got, want := value(s), stones%(take+1) != 0; got != want {
				t.Errorf("stones=%d take=%d: mover wins %v, want %v", stones, take, got, want)
			}
		}
	}
}

// value reports whether the player to move in s wins with best play.
func value(s games.State) bool {
	m := games.NewMask(s.Game().NumActions())
	s.Legal(m)
	for a := range m.All() {
		c := s.Clone()
		c.Apply(a)
		if c.IsTerminal() {
			r := make([]float64, 2)
			c.Returns(r)
			if r[s.CurrentPlayer()] == 1 {
				return true
			}
			continue
		}
		if !value(c) {
			return true
		}
	}
	return false
}

func TestSpecRoundTrip(t *testing.T) {
	for _, spec := range []string{"nim", "nim:stones=7", "nim:take=2", "nim:stones=9,take=4"} {
		if got := games.MustNew(spec).Spec(); got != spec {
			t.Errorf("%s: Spec() = %q", spec, got)
		}
	}
	for _, bad := range []string{"nim:stones=0", "nim:stones=65", "nim:take=10", "nim:heap=3"} {
		if _, err := games.New(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
