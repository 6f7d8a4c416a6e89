package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestConv3x3WinogradMoments checks the fused convolution and batch-norm
// statistics: the outputs equal Conv3x3Winograd's without bias, residual
// or activation (the same transforms; -0 and +0 alike), the sums agree
// with float64 sums over those outputs taken here, only the pixels inside
// the image count (6x7 and 5x3 leave tiles half outside), 2 threads give
// the same bits as 1 (the implementations' GEMMs differ in their last
// bits, so TestWinoOutStats compares the fused store itself), and
// the bfloat16 variant matches Conv3x3WinogradBF16 in the same way.
func TestConv3x3WinogradMoments(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	shapes := [][5]int{{1, 16, 1, 1, 3}, {7, 16, 5, 5, 16}, {2, 16, 6, 7, 24}, {9, 32, 6, 7, 32}, {3, 16, 5, 3, 40}, {2, 64, 10, 10, 64}}
	if testing.Short() {
		shapes = shapes[:5]
	}
	for _, sh := range shapes {
		c := newConvCase(r, sh)
		m := c.batch * c.h * c.w
		u := make([]float32, 16*c.cin*c.cout)
		WinogradWeights(c.wt, c.cin, c.cout, u)
		ub := PackWinogradBF16(u, c.cin, c.cout)
		shift := randSlice(r, c.cout)
		for _, bf16 := range []bool{false, true} {
			label := fmt.Sprintf("%v bf16=%v", sh, bf16)
			for _, name := range implNames() {
				use(t, name)
				var first []uint64 // 1 thread's outputs and sums, as bits
				for _, th := range []int{1, 2} {
					prev := SetThreads(th)
					want, got := make([]float32, m*c.cout), make([]float32, m*c.cout)
					s1, s2 := make([]float64, c.cout), make([]float64, c.cout)
					s1[0], s2[0] = 0.5, 0.25 // the sums add to what is there
					if bf16 {
						Conv3x3WinogradBF16(c.in, c.batch, c.cin, c.h, c.w, ub, nil, nil, false, want)
						Conv3x3WinogradBF16Moments(c.in, c.batch, c.cin, c.h, c.w, ub, shift, s1, s2, got)
					} else {
						Conv3x3Winograd(c.in, c.batch, c.cin, c.h, c.w, u, c.cout, nil, nil, false, want)
						Conv3x3WinogradMoments(c.in, c.batch, c.cin, c.h, c.w, u, c.cout, shift, s1, s2, got)
					}
					SetThreads(prev)
					for i := range got {
						if got[i] != want[i] {
							t.Fatalf("%s %s threads=%d: out[%d] = %v, want %v", label, name, th, i, got[i], want[i])
						}
					}
					for j := range c.cout {
						var w1, w2, a1, a2 float64 // float64 sums and absolute sums
						if j == 0 {
							w1, w2 = 0.5, 0.25
						}
						for p := range m {
							e := float64(want[p*c.cout+j]) - float64(shift[j])
							w1 += e
							w2 += e * e
							a1 += math.Abs(e)
							a2 += e * e
						}
						// float32 sums of up to 4*winoChunk values: a few
						// hundred roundings of 6e-8 of the absolute sum.
						if math.Abs(s1[j]-w1) > 1e-5*(a1+1) || math.Abs(s2[j]-w2) > 1e-5*(a2+1) {
							t.Fatalf("%s %s threads=%d: channel %d sums %v %v, want %v %v", label, name, th, j, s1[j], s2[j], w1, w2)
						}
					}
					bits := math32bits(got)
					all := make([]uint64, 0, len(bits)+2*c.cout)
					for _, b := range bits {
						all = append(all, uint64(b))
					}
					for j := range c.cout {
						all = append(all, math.Float64bits(s1[j]), math.Float64bits(s2[j]))
					}
					if first == nil {
						first = all
					} else if !slices.Equal(all, first) {
						t.Errorf("%s %s: 2 threads differ from 1", label, name)
					}
				}
			}
		}
	}
}

// TestWinoOutStats checks the fused store and sums of one tile on every
// implementation against the Go loop bit for bit, with column counts that
// leave AVX-512 and AVX2 tails, masked outputs (whose values, even NaN,
// must not reach the sums) and sums added to what s1 and s2 hold.
func TestWinoOutStats(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	for _, n := range []int{3, 8, 16, 40, 64} {
		const ms = 80
		m := randSlice(r, 16*ms)
		shift := randSlice(r, n)
		s1in, s2in := randSlice(r, n), randSlice(r, n)
		for _, keep := range [][4]uint32{{^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0)}, {^uint32(0), 0, ^uint32(0), 0}, {^uint32(0), ^uint32(0), 0, 0}} {
			// Hand-worked reference: the plain output transform
			// (winoOutPlain, checked by TestWinogradTransforms), then
			// the masked sums in the documented order.
			y := make([]float32, 4*n)
			winoOutPlain(&impl{name: "generic"}, y, n, m, ms, n)
			w1, w2 := slices.Clone(s1in), slices.Clone(s2in)
			for j := range n {
				var sum, sq float32
				for q := range 4 {
					e := y[q*n+j] - shift[j]
					if keep[q] == 0 {
						e = 0
					}
					if q == 0 {
						sum, sq = e, float32(e*e)
						continue
					}
					sum += e
					sq += float32(e * e)
				}
				w1[j] += sum
				w2[j] += sq
			}
			for _, name := range implNames() {
				use(t, name)
				dst := make([]float32, 4*n)
				var out [4][]float32
				for q := range out {
					out[q] = dst[q*n : (q+1)*n]
				}
				s1, s2 := slices.Clone(s1in), slices.Clone(s2in)
				winoOutStats(cur.Load(), m, ms, &out, &keep, shift, s1, s2)
				if !slices.Equal(math32bits(dst), math32bits(y)) {
					t.Fatalf("%s n=%d keep=%x: outputs differ from the output transform", name, n, keep)
				}
				if !slices.Equal(math32bits(s1), math32bits(w1)) || !slices.Equal(math32bits(s2), math32bits(w2)) {
					t.Fatalf("%s n=%d keep=%x: sums %v %v, want %v %v", name, n, keep, s1, s2, w1, w2)
				}
			}
		}
	}
}
