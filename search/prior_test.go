package search

import (
	"math"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// storedPrior is p as an edge stores it (priorCode), for tests that set up
// edges and compute the scores they expect from the stored prior.
func storedPrior(p float32) float32 { return priorValue(uint32(priorCode(p))) }

// set writes an edge's statistics for a test (plain stores).
func (h *edgeStats) set(n, vloss int32, w int64, prior float32) {
	h.n, h.w = n, w
	h.vp = uint32(vloss)
	h.setPrior(prior)
}

// TestPriorCode checks the 16-bit prior against float64 arithmetic:
// relative error at most 2^-12 on [2^-30, 1], exact powers of two, zero
// (and NaN, negatives, tiny values) to zero, clamping above 2, order kept,
// and every code decoding to a value that encodes back to it.
func TestPriorCode(t *testing.T) {
	rng := games.NewRand(5)
	for i := range 200000 {
		// log-uniform on [2^-30, 1], plus the uniform priors 1/k.
		p := float32(math.Exp2(-30 * rng.Float64()))
		if i < 400 {
			p = 1 / float32(i+1)
		}
		got := float64(storedPrior(p))
		if rel := math.Abs(got-float64(p)) / float64(p); rel > 0x1p-12 {
			t.Fatalf("prior %g stored as %g: relative error %g > 2^-12", p, got, rel)
		}
	}
	for e := -31; e <= 1; e++ {
		if p := float32(math.Exp2(float64(e))); e < 1 && storedPrior(p) != p && e > -31 {
			t.Errorf("2^%d stored as %g", e, storedPrior(p))
		}
	}
	for _, p := range []float32{0, -0.5, 1e-12, float32(math.NaN()), float32(math.Inf(-1))} {
		if c := priorCode(p); c != 0 {
			t.Errorf("priorCode(%g) = %d, want 0", p, c)
		}
	}
	if priorValue(0) != 0 {
		t.Errorf("priorValue(0) = %g", priorValue(0))
	}
	for _, p := range []float32{2, 1e6, float32(math.Inf(1))} {
		if c := priorCode(p); c != 0xffff {
			t.Errorf("priorCode(%g) = %#x, want the largest code", p, c)
		}
	}
	if top := priorValue(0xffff); top < 1.999 || top >= 2 {
		t.Errorf("largest code decodes to %g, want just below 2", top)
	}
	prev := float32(0)
	for c := uint32(1); c <= 0xffff; c++ {
		v := priorValue(c)
		if !(v > prev) {
			t.Fatalf("code %d decodes to %g, not above code %d's %g", c, v, c-1, prev)
		}
		if back := priorCode(v); uint32(back) != c {
			t.Fatalf("code %d decodes to %g, which encodes to %d", c, v, back)
		}
		// Halfway between two codes rounds to one of them, in order.
		if mid := (float64(prev) + float64(v)) / 2; c > 1 {
			if m := priorCode(float32(mid)); uint32(m) != c && uint32(m) != c-1 {
				t.Fatalf("%g, between codes %d and %d, encodes to %d", mid, c-1, c, m)
			}
		}
		prev = v
	}
}

// TestVirtualLossKeepsPrior: the packed word's virtual-loss count runs up
// to MaxWalkers and back without touching the prior beside it, with plain
// and atomic adds.
func TestVirtualLossKeepsPrior(t *testing.T) {
	for _, shared := range []bool{false, true} {
		tr := &Tree{shared: shared}
		var h edgeStats
		h.setPrior(0.3)
		want := h.prior()
		for i := 1; i <= MaxWalkers; i++ {
			tr.addVloss(&h, 1)
			if i%4099 == 0 || i == MaxWalkers {
				if vl, p := loadVP(&h); vl != int32(i) || p != want {
					t.Fatalf("shared=%v: after %d virtual losses: count %d, prior %g (want %g)", shared, i, vl, p, want)
				}
			}
		}
		for range MaxWalkers {
			tr.addVloss(&h, -1)
		}
		if h.vloss() != 0 || h.prior() != want {
			t.Fatalf("shared=%v: after removing them: count %d, prior %g (want 0, %g)", shared, h.vloss(), h.prior(), want)
		}
		h.setPrior(0.7)
		if h.vloss() != 0 || h.prior() != storedPrior(0.7) {
			t.Fatalf("shared=%v: setPrior: count %d, prior %g", shared, h.vloss(), h.prior())
		}
	}
}

// TestThreadsBound: more goroutines on one tree than its edges can count
// in flight is refused with the limit named.
func TestThreadsBound(t *testing.T) {
	o := DefaultOptions()
	o.Sims, o.Threads = 100, MaxWalkers+1
	err := o.normalize()
	if err == nil || !strings.Contains(err.Error(), "65535") {
		t.Fatalf("threads=%d: err = %v, want the limit %d named", o.Threads, err, MaxWalkers)
	}
}
