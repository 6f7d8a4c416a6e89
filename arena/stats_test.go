package arena

import (
	"math"
	"testing"
)

// Reference values from the Wilson score interval formula evaluated by hand
// (z = 1.96): for 50/100, centre 0.5, half-width 0.0962; for 0/10 the
// interval is [0, 0.2775].
func TestWilson(t *testing.T) {
	iv := Wilson(50, 100)
	if math.Abs(iv.Lo-0.4038) > 1e-3 || math.Abs(iv.Hi-0.5962) > 1e-3 {
		t.Errorf("Wilson(50,100) = %+v", iv)
	}
	iv = Wilson(0, 10)
	if iv.Lo != 0 || math.Abs(iv.Hi-0.2775) > 1e-3 {
		t.Errorf("Wilson(0,10) = %+v", iv)
	}
}

func TestSummarize(t *testing.T) {
	var s summarize
	for _, x := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		s.add(x)
	}
	got := s.summary()
	// mean 5, sample variance 32/7.
	if got.Min != 2 || got.Max != 9 || got.Mean != 5 || math.Abs(got.Std-math.Sqrt(32.0/7)) > 1e-12 {
		t.Errorf("%+v", got)
	}
}

func TestDeriveSeedSpreads(t *testing.T) {
	seen := map[uint64]bool{}
	for s := range uint64(4) {
		for i := range uint64(1000) {
			x := DeriveSeed(s, i)
			if seen[x] {
				t.Fatalf("collision at %d,%d", s, i)
			}
			seen[x] = true
		}
	}
}
