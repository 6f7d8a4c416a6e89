package hex

import (
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

func TestRotationSymmetry(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 15
	}
	for _, size := range []int{2, 3, 5, 8, 11} {
		for _, swap := range []bool{false, true} {
			g, err := New(size, swap)
			if err != nil {
				t.Fatal(err)
			}
			syms := games.SymmetriesOf(g)
			if len(syms) != 1 || syms[0].Name() != "rotate180" {
				t.Fatalf("%s: symmetries %v", g.Spec(), syms)
			}
			if swap && syms[0].Action(g.SwapAction()) != g.SwapAction() {
				t.Errorf("%s: swap maps to %d", g.Spec(), syms[0].Action(g.SwapAction()))
			}
			if err := gametest.CheckSymmetry(g, syms[0], games.NewRand(uint64(size)), n); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The swap rule is exercised on purpose: every game swaps at move 2, so the
// rotation's interplay with the transposition is checked on each.
func TestRotationWithSwapEveryGame(t *testing.T) {
	g, _ := New(5, true)
	sym := g.Symmetries()[0]
	rng := games.NewRand(7)
	for range 20 {
		a, b := g.NewState(), g.NewState()
		first := games.Action(rng.IntN(25))
		for _, x := range []games.Action{first, g.SwapAction()} {
			a.Apply(x)
			if err := games.ApplyChecked(b, sym.Action(x)); err != nil {
				t.Fatal(err)
			}
		}
		obsA, obsB, want := make([]float32, 75), make([]float32, 75), make([]float32, 75)
		for p := range 2 {
			a.Observation(p, obsA)
			b.Observation(p, obsB)
			sym.Observation(want, obsA)
			for i := range want {
				if want[i] != obsB[i] {
					t.Fatalf("after %s swap, player %d: rotated observation differs at %d", a.ActionString(first), p, i)
				}
			}
		}
	}
}

// Transposition alone exchanges the players' goals, so it is not a
// symmetry; the check must reject it.
func TestTranspositionIsNotASymmetry(t *testing.T) {
	g, _ := New(4, false)
	bad, err := games.NewBoardSymmetry("transpose", g.ObservationShape(), g.NumActions(),
		func(r, c int) (int, int) { return c, r },
		func(a games.Action) games.Action { return games.Action(int(a)%4*4 + int(a)/4) })
	if err != nil {
		t.Fatal(err)
	}
	if err := gametest.CheckSymmetry(g, bad, games.NewRand(1), 50); err == nil {
		t.Fatal("CheckSymmetry accepted the transposition")
	}
}
