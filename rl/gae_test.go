package rl

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Hand-computed GAE over 3 steps of one environment with an episode end
// after step 1 (gamma 0.9, lambda 0.5).
func TestGAEHand(t *testing.T) {
	r := []float32{0, 1, 0}
	v := []float32{0.5, 0.2, -0.1}
	done := []bool{false, true, false}
	last := []float32{0.4}
	adv, ret := make([]float32, 3), make([]float32, 3)
	if err := GAE(3, 1, r, v, done, last, 0.9, 0.5, adv, ret); err != nil {
		t.Fatal(err)
	}
	d2 := 0 + 0.9*0.4 - (-0.1)
	d1 := 1 - 0.2 // no bootstrap across the end
	d0 := 0 + 0.9*0.2 - 0.5
	want := []float64{d0 + 0.45*d1, d1, d2}
	for i := range want {
		if !near(float64(adv[i]), want[i], 1e-6) || !near(float64(ret[i]), want[i]+float64(v[i]), 1e-6) {
			t.Fatalf("step %d: adv %g ret %g, want %g %g", i, adv[i], ret[i], want[i], want[i]+float64(v[i]))
		}
	}
}

// With lambda 1, GAE is the discounted return minus the value, and
// ZeroSumGAE the alternating-sign return G_t = r_t - gamma G_{t+1} minus
// the value; with two environments interleaved time-major.
func TestGAELambdaOne(t *testing.T) {
	const T, N, gamma = 5, 2, 0.8
	r := []float32{0, 0.1, 0, 0, 1, 0, 0, -1, 0.5, 0}
	v := []float32{0.3, -0.2, 0.1, 0.4, -0.5, 0.2, 0.6, -0.3, 0.0, 0.7}
	done := []bool{false, false, false, false, true, false, false, true, false, false}
	last := []float32{0.25, -0.6}
	for _, zs := range []bool{false, true} {
		adv, ret := make([]float32, T*N), make([]float32, T*N)
		f, sign := GAE, 1.0
		if zs {
			f, sign = ZeroSumGAE, -1
		}
		if err := f(T, N, r, v, done, last, gamma, 1, adv, ret); err != nil {
			t.Fatal(err)
		}
		for e := range N {
			g := float64(last[e])
			for tt := T - 1; tt >= 0; tt-- {
				i := tt*N + e
				if done[i] {
					g = 0
				}
				g = float64(r[i]) + sign*gamma*g
				if !near(float64(ret[i]), g, 1e-6) || !near(float64(adv[i]), g-float64(v[i]), 1e-6) {
					t.Fatalf("zero-sum %v, env %d step %d: ret %g adv %g, want %g %g", zs, e, tt, ret[i], adv[i], g, g-float64(v[i]))
				}
			}
		}
	}
}

// Study 002's zero-sum delta: delta_t = r_t + gamma (-V(s_{t+1})) - V(s_t),
// which is A_t at lambda 0.
func TestZeroSumGAEDelta(t *testing.T) {
	r := []float32{0, 0, 1}
	v := []float32{0.1, -0.3, 0.6}
	adv, ret := make([]float32, 3), make([]float32, 3)
	if err := ZeroSumGAE(3, 1, r, v, []bool{false, false, true}, []float32{0.9}, 0.99, 0, adv, ret); err != nil {
		t.Fatal(err)
	}
	want := []float64{0 - 0.99*(-0.3) - 0.1, 0 - 0.99*0.6 + 0.3, 1 - 0.6}
	for i := range want {
		if !near(float64(adv[i]), want[i], 1e-6) {
			t.Fatalf("step %d: %g, want %g", i, adv[i], want[i])
		}
	}
}

func TestGAEErrors(t *testing.T) {
	x := make([]float32, 4)
	d := make([]bool, 4)
	for _, c := range []struct {
		T, N          int
		gamma, lambda float64
	}{{0, 1, 0.9, 0.9}, {5, 1, 0.9, 0.9}, {2, 2, 1.5, 0.9}, {2, 2, 0.9, math.NaN()}} {
		if err := GAE(c.T, c.N, x, x, d, x, c.gamma, c.lambda, x, make([]float32, 4)); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
