package search

import (
	"math"
	"testing"
)

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %.12f, want %.12f", name, got, want)
	}
}

// Expected values are computed by hand from the published formulas.
func TestFormulas(t *testing.T) {
	// UCB1: 0.5 + 1.4*sqrt(ln 100 / 10) = 0.5 + 1.4*sqrt(0.460517019) = 0.5 + 1.4*0.678614...
	near(t, "UCB1", UCB1(0.5, 10, 100, 1.4), 0.5+1.4*0.6786140424415112)
	// UCB1-Tuned: values {+1 x 3, -1 x 1}: mean 0.5, mean square 1.
	// x in [0,1]: E[x] = 0.75, E[x^2] = 0.75, var = 0.1875,
	// n = 4, N = 20: sqrt(2 ln 20 / 4) = sqrt(1.497866137) = 1.223873417,
	// V = 1.411373417 -> min(1/4, V) = 1/4; bound = sqrt(ln 20 / 4 * 1/4) =
	// sqrt(0.187233)=0.4327046; score in [0,1]: 1.1827046;
	// back to [-1, 1]: 2*1.1827046 - 1 = 1.3654092.
	if got := UCB1TunedScore(0.5, 1, 4, 20, 1); math.Abs(got-1.3654092) > 1e-6 {
		t.Errorf("UCB1Tuned = %v, want 1.3654092 (hand)", got)
	}
	// A low-variance case where V < 1/4: all values 0 (x = 0.5, var 0), n = 1000, N = 2000:
	// V = sqrt(2 ln 2000 / 1000) = sqrt(0.015201804) = 0.123295596;
	// bound = sqrt(ln 2000/1000 * V) = sqrt(0.007600902*0.123295596) = 0.030612921...
	lnN := math.Log(2000)
	v := math.Sqrt(2 * lnN / 1000)
	if math.Abs(v-0.1232956) > 1e-6 {
		t.Errorf("V = %v, want 0.1232956", v)
	}
	near(t, "UCB1Tuned low var", UCB1TunedScore(0, 0, 1000, 2000, 1), 2*(0.5+math.Sqrt(lnN/1000*v))-1)
	if got := UCB1TunedScore(0, 0, 1000, 2000, 1); math.Abs(got-0.0612258) > 1e-6 {
		t.Errorf("UCB1Tuned low var = %v, want 0.0612258 (hand)", got)
	}
	// PUCT: 0.1 + 1.5*0.3*sqrt(16)/(1+3) = 0.1 + 1.5*0.3*4/4 = 0.55.
	near(t, "PUCT", PUCTScore(0.1, 0.3, 3, 16, 1.5), 0.55)
	// RAVE sqrt schedule: k = 1000, n = 1000: sqrt(1000/4000) = 0.5.
	near(t, "beta sqrt", RaveBetaSqrt(1000, 1000), 0.5)
	near(t, "beta sqrt n=0", RaveBetaSqrt(0, 1000), 1)
	// Silver: n = 10, na = 30, b = 0.5: 30/(10+30+4*0.25*10*30) = 30/340.
	near(t, "beta silver", RaveBetaSilver(10, 30, 0.5), 30.0/340)
	// alpha-AMAF: k = 100, n = 25 -> 0.75; n >= k -> 0.
	near(t, "alpha", AlphaAMAFWeight(25, 100), 0.75)
	near(t, "alpha past k", AlphaAMAFWeight(150, 100), 0)
	// progressive bias: 2 * 0.6 / (1+4) = 0.24.
	near(t, "bias", ProgressiveBias(0.6, 4, 2), 0.24)
}
