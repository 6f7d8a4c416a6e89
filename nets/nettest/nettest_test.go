package nettest

import (
	"math"
	"testing"
)

// The binomial tails are Python's exact sums over math.comb
// (sum(comb(n, i) * q**i * (1-q)**(n-i) for i in range(k, n+1))).
func TestBinomialTail(t *testing.T) {
	for _, c := range []struct {
		n, k int
		q    float64
		want float64
	}{
		{152, 2, 0.01, 0.44971445389015313},
		{150, 5, 0.01, 0.017987494546488833},
		{150, 6, 0.01, 0.004211232219891409},
		{10, 10, 0.5, 0.0009765625},
		{10, 0, 0.5, 1},
		{10, 11, 0.5, 0},
	} {
		if got := BinomialTail(c.n, c.k, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("BinomialTail(%d, %d, %g) = %.17g, want %.17g", c.n, c.k, c.q, got, c.want)
		}
	}
}

func TestAgreementMeets(t *testing.T) {
	for _, c := range []struct {
		positions, same int
		want            bool
	}{
		{2000, 1980, true},  // 99.0%: a large sample must reach the bar itself
		{2000, 1979, false}, // 98.95%
		{152, 150, true},    // 2 misses: P = 0.45 at a 1% miss rate
		{150, 145, true},    // 5 misses: P = 0.018
		{150, 144, false},   // 6 misses: P = 0.004, the sample rejects 99%
		{150, 135, false},   // 90%
	} {
		a := Agreement{Positions: c.positions, SameMove: c.same}
		if got := a.Meets(0.99); got != c.want {
			t.Errorf("%d of %d positions: Meets(0.99) = %v, want %v", c.same, c.positions, got, c.want)
		}
	}
}
