package gametest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// Symmetries checks the symmetries g declares (games.Symmetric) against its
// rules: exactly the named ones in that order (identity excluded), each
// verified by CheckSymmetry on n random games (n/5, at least 1, in
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
		if err := CheckSymmetry(g, s, games.NewRand(seed+uint64(i)), n); err != nil {
			t.Fatal(err)
		}
	}
}

// CheckSymmetry verifies sym against the rules of g, used as the outside
// truth: it plays nGames random games (actions uniform over the legal ones,
// drawn from rng) and alongside each a mirror game that plays the mapped
// actions, checking after every action the properties listed on games.Symmetry
// (player to move, terminal status, returns, legal actions, every
// player's observation). It returns the first difference found, naming the
// game's moves. Only deterministic sequential games are supported. It
// allocates.
func CheckSymmetry(g games.Game, sym games.Symmetry, rng *rand.Rand, nGames int) error {
	t := g.Type()
	if t.Dynamics != games.Sequential || t.Chance != games.Deterministic {
		return fmt.Errorf("CheckSymmetry: %s is not a deterministic sequential game", g.Spec())
	}
	if sym.ObservationSize() != games.ObservationSize(g) || sym.NumActions() != g.NumActions() {
		return fmt.Errorf("symmetry %s works on %d observation values and %d actions; %s has %d and %d",
			sym.Name(), sym.ObservationSize(), sym.NumActions(), g.Spec(), games.ObservationSize(g), g.NumActions())
	}
	n := g.NumActions()
	ma, mb := games.NewMask(n), games.NewMask(n)
	obsA, obsB, want := make([]float32, sym.ObservationSize()), make([]float32, sym.ObservationSize()), make([]float32, sym.ObservationSize())
	retA, retB := make([]float64, g.NumPlayers()), make([]float64, g.NumPlayers())
	legal := make([]games.Action, 0, n)
	for game := range nGames {
		a, b := g.NewInitialState(), g.NewInitialState()
		var moves []string
		for {
			where := func() string {
				return fmt.Sprintf("symmetry %s of %s, game %d after moves [%s] (mirror: [%s])", sym.Name(), g.Spec(), game,
					strings.Join(moves, " "), b.String())
			}
			if a.CurrentPlayer() != b.CurrentPlayer() || a.IsTerminal() != b.IsTerminal() {
				return fmt.Errorf("%s: player to move %d, mirror %d; terminal %t, mirror %t", where(),
					a.CurrentPlayer(), b.CurrentPlayer(), a.IsTerminal(), b.IsTerminal())
			}
			a.Returns(retA)
			b.Returns(retB)
			if !slices.Equal(retA, retB) {
				return fmt.Errorf("%s: returns %v, mirror %v", where(), retA, retB)
			}
			for p := range g.NumPlayers() {
				a.Observation(p, obsA)
				b.Observation(p, obsB)
				sym.Observation(want, obsA)
				for i := range want {
					if want[i] != obsB[i] {
						return fmt.Errorf("%s: player %d's observation differs at index %d: transformed %v, mirror %v",
							where(), p, i, want[i], obsB[i])
					}
				}
			}
			a.Legal(ma)
			b.Legal(mb)
			legal = legal[:0]
			for x := range n {
				la, lb := ma.Has(games.Action(x)), mb.Has(sym.Action(games.Action(x)))
				if la != lb {
					return fmt.Errorf("%s: action %s legal %t, its image %s in the mirror legal %t", where(),
						a.ActionString(games.Action(x)), la, b.ActionString(sym.Action(games.Action(x))), lb)
				}
				if la {
					legal = append(legal, games.Action(x))
				}
			}
			if a.IsTerminal() {
				break
			}
			if len(legal) == 0 {
				return fmt.Errorf("%s: no legal action at a non-terminal state", where())
			}
			x := legal[rng.IntN(len(legal))]
			moves = append(moves, a.ActionString(x))
			a.Apply(x)
			if err := games.ApplyChecked(b, sym.Action(x)); err != nil {
				return fmt.Errorf("%s: mirror of %s: %v", where(), a.ActionString(x), err)
			}
		}
	}
	return nil
}
