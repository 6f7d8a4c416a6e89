package sushigo

import (
	"math"
	"testing"

	"github.com/canopy-go/canopy/games"
)

func TestFastRandUniform(t *testing.T) {
	r := fastRand{s: 5}
	const n, draws = 7, 70000
	var cnt [n]int
	for range draws {
		cnt[r.intN(n)]++
	}
	chi := 0.0
	for _, c := range cnt {
		d := float64(c) - draws/n
		chi += d * d / (draws / n)
	}
	if chi > 22.5 { // chi-square, 6 degrees of freedom, p = 0.001
		t.Errorf("intN(7) counts %v, chi-square %.1f", cnt, chi)
	}
}

// TestPlayoutMatchesGeneric compares the specialised playout with
// games.RandomPlayout: both must end in valid terminal states, and the
// mean final scores must agree within sampling error.
func TestPlayoutMatchesGeneric(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 800
	}
	g := New(4, false)
	var mean [2][4]float64
	sc := make([]float64, 4)
	mask := games.NewMask(NumActions)
	joint := make([]games.Action, 4)
	rng := games.NewRand(6)
	for i := range n {
		for path := range 2 {
			s := g.NewInitialState().(*State)
			if path == 0 {
				s.RandomPlayout(rng)
			} else {
				games.RandomPlayout(s, rng, mask, joint)
			}
			if !s.IsTerminal() {
				t.Fatal("playout did not finish the game")
			}
			if i < 20 {
				if _, err := g.ParseState(s.String()); err != nil {
					t.Fatalf("playout ended in an invalid state: %v", err)
				}
			}
			s.Scores(sc)
			for p := range 4 {
				mean[path][p] += sc[p] / float64(n)
			}
		}
	}
	for p := range 4 {
		// Final scores of random 4-player play have a standard deviation
		// near 6.5 (measured once over 5000 games), so the difference of
		// two means has a standard error near 6.5*sqrt(2/n); allow 5 of them.
		if tol := 5 * 6.5 * math.Sqrt(2/float64(n)); math.Abs(mean[0][p]-mean[1][p]) > tol {
			t.Errorf("player %d: mean score %.2f (playout) vs %.2f (generic), tolerance %.2f", p, mean[0][p], mean[1][p], tol)
		}
	}
	t.Logf("mean scores: playout %.2f, generic %.2f", mean[0], mean[1])
}
