package search

import (
	"math"
	"testing"
)

// soleWinner on hand-listed return vectors: +1 for the one player ahead
// of all others, -1 for everyone else, a shared first place included.
func TestSoleWinner(t *testing.T) {
	for _, c := range []struct{ ret, want []float64 }{
		{[]float64{1, 0.5, -1}, []float64{1, -1, -1}},
		{[]float64{0.5, 0.5, -1}, []float64{-1, -1, -1}},
		{[]float64{-1, -1, 0.25, -1}, []float64{-1, -1, 1, -1}},
		{[]float64{0, 0}, []float64{-1, -1}},
		{[]float64{-1, 1}, []float64{-1, 1}},
		{[]float64{0.3, 0.1, 0.2}, []float64{1, -1, -1}},
	} {
		got := make([]float64, len(c.ret))
		soleWinner(got, c.ret)
		for p := range got {
			if got[p] != c.want[p] {
				t.Errorf("returns %v: values %v, want %v", c.ret, got, c.want)
				break
			}
		}
	}
}

// cutValuesWin on hand-computed values: the lead over the strongest
// opponent, where CutValues takes the lead over the opponents' mean.
func TestCutValuesWin(t *testing.T) {
	x := []float64{3, 1, 0}
	got := make([]float64, 3)
	cutValuesWin(got, x, 2)
	want := []float64{math.Tanh(1), math.Tanh(-1), math.Tanh(-1.5)}
	mean := make([]float64, 3)
	CutValues(mean, x, 2)
	for p := range got {
		if math.Abs(got[p]-want[p]) > 1e-15 {
			t.Errorf("player %d: %v, want %v", p, got[p], want[p])
		}
	}
	// The mean form gives player 0 tanh((3 - 0.5)/2): more than its lead
	// over player 1 alone.
	if !(mean[0] > got[0]) {
		t.Errorf("CutValues %v, cutValuesWin %v: want the mean's lead larger for player 0", mean, got)
	}
}
