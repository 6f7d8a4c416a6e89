package search

import (
	"math"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// TestDrawSwapsUniform: the edge order built by drawSwaps + placeEdge is a
// uniform permutation. 4 edges: all 24 orders are counted over 48000
// shuffles and compared with the uniform expectation by a chi-square test
// (23 degrees of freedom; 70 is exceeded with probability < 1e-6).
func TestDrawSwapsUniform(t *testing.T) {
	const k, n = 4, 48000
	ar := newArena(1, k, false, false, false, false)
	rng := games.NewRand(3)
	perm := make([]int32, k)
	counts := map[[k]games.Action]int{}
	for range n {
		drawSwaps(perm, rng)
		for i := range int32(k) {
			placeEdge(ar, 0, i, perm, games.Action(i), float32(i))
		}
		var key [k]games.Action
		for i := range k {
			e := ar.edges[i]
			if e.child != NilNode || ar.hot[i].prior != float32(e.action) {
				t.Fatalf("edge %d: action %d, prior %v, child %d: edge and prior separated", i, e.action, ar.hot[i].prior, e.child)
			}
			key[i] = e.action
		}
		counts[key]++
	}
	if len(counts) != 24 {
		t.Fatalf("%d distinct orders of 4 edges, want 24", len(counts))
	}
	exp := float64(n) / 24
	var chi float64
	for _, c := range counts {
		chi += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	if chi > 70 {
		t.Errorf("chi-square %.1f over 24 orders: not uniform (%v)", chi, counts)
	}
}

// TestDrawSwapsLarge: with 40 edges the draws span several 64-bit batches
// (bounds 2..20 fill the first); every index stays in [0, i] and each
// index's mean is i/2 within 5 standard errors.
func TestDrawSwapsLarge(t *testing.T) {
	const k, n = 40, 4000
	rng := games.NewRand(9)
	perm := make([]int32, k)
	sum := make([]float64, k)
	for range n {
		drawSwaps(perm, rng)
		for i, j := range perm {
			if j < 0 || int(j) > i {
				t.Fatalf("perm[%d] = %d, want within [0, %d]", i, j, i)
			}
			sum[i] += float64(j)
		}
	}
	for i := 1; i < k; i++ {
		b := float64(i + 1)
		sd := math.Sqrt((b*b - 1) / 12 / n)
		if d := math.Abs(sum[i]/n - float64(i)/2); d > 5*sd {
			t.Errorf("index %d: mean %.3f, want %.3f (sd %.3f)", i, sum[i]/n, float64(i)/2, sd)
		}
	}
}
