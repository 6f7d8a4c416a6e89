package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// winoTol bounds the error of Conv3x3Winograd relative to the absolute
// sum of an output's products, sum |x*w| over its 9*cin taps: float32
// Winograd F(2x2,3x3) rounds the input transform (sums of up to 4 values),
// the transformed weights (halves), the 16 dot products of length cin and
// the output transform (sums of up to 9 values), each a few units of
// 6e-8. The largest error seen over these tests is about 1e-6 of that
// sum; 1e-5 leaves a margin, and a wrong transform errs by O(1) of it.
const winoTol = 1e-5

// TestConv3x3Winograd checks the Winograd convolution against the direct
// float64 six-loop convolution (directConv3x3) plus bias, residual and ReLU
// computed by hand, on every implementation with 1 and 2 threads. Shapes
// cover a single pixel, odd heights and widths (the Connect Four board is
// 6x7: its last column of tiles is half outside), 8x8 and Sequence's 10x10,
// channel counts that leave GEMM column tails, and batches with several
// chunks of tiles that split over threads.
func TestConv3x3Winograd(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	shapes := [][5]int{{1, 1, 1, 1, 1}, {7, 16, 5, 5, 16}, {2, 3, 6, 7, 5}, {1, 64, 6, 7, 64}, {3, 2, 10, 10, 33},
		{1, 4, 1, 5, 3}, {5, 7, 3, 1, 70}, {2, 16, 8, 8, 16}, {24, 64, 6, 7, 64}, {6, 32, 10, 10, 128}}
	if testing.Short() {
		shapes = shapes[:7]
	}
	for _, sh := range shapes {
		c := newConvCase(r, sh)
		conv := directConv3x3(c.in, c.batch, c.cin, c.h, c.w, c.wt, c.cout)
		scale := directConv3x3(absSlice(c.in), c.batch, c.cin, c.h, c.w, absSlice(c.wt), c.cout)
		u := make([]float32, 16*c.cin*c.cout)
		WinogradWeights(c.wt, c.cin, c.cout, u)
		eachConvMode(t, conv, c.bias, c.res, func(bias, res []float32, relu bool, out []float32) {
			Conv3x3Winograd(c.in, c.batch, c.cin, c.h, c.w, u, c.cout, bias, res, relu, out)
		}, func(label string, out, want []float32) {
			winoClose(t, fmt.Sprintf("%s %v", label, sh), out, want, scale, c.bias, c.res)
		})
	}
}

// TestConv3x3WinogradMatchesIm2col checks that the two convolution paths
// agree on a Connect Four residual layer (64 -> 64 channels, 6x7) with
// inputs of the size a network sees.
func TestConv3x3WinogradMatchesIm2col(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	batch, cin, h, w, cout := 16, 64, 6, 7, 64
	m := batch * h * w
	in := randSlice(r, m*cin)
	wt := randSlice(r, 9*cin*cout)
	bias := randSlice(r, cout)
	u := make([]float32, 16*cin*cout)
	WinogradWeights(wt, cin, cout, u)
	a, b := make([]float32, m*cout), make([]float32, m*cout)
	Conv3x3BiasAct(in, batch, cin, h, w, wt, cout, bias, nil, false, a)
	Conv3x3Winograd(in, batch, cin, h, w, u, cout, bias, nil, false, b)
	scale := directConv3x3(absSlice(in), batch, cin, h, w, absSlice(wt), cout)
	worst := 0.0
	for i := range a {
		worst = max(worst, math.Abs(float64(a[i]-b[i]))/(float64(scale[i])+math.Abs(float64(bias[i%cout]))))
	}
	if worst > winoTol {
		t.Errorf("Winograd and im2col differ by %.3g of the products' absolute sum, want <= %g", worst, winoTol)
	}
	t.Logf("largest difference: %.3g of the products' absolute sum", worst)
}

// winoClose fails t unless every got[i] is within winoTol of want[i]
// relative to the absolute sum of what was added up for it (scale[i], the
// bias and the residual).
func winoClose(t *testing.T, what string, got, want, scale, bias, res []float32) {
	t.Helper()
	cout := len(bias)
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		s := float64(scale[i]) + math.Abs(float64(bias[i%cout])) + math.Abs(float64(res[i]))
		if math.IsNaN(g) || math.Abs(g-w) > winoTol*s {
			t.Fatalf("%s: element %d = %v, want %v (tol %.3g)", what, i, g, w, winoTol*s)
		}
	}
}

func absSlice(x []float32) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(math.Abs(float64(v)))
	}
	return y
}

// TestWinogradWeightsOneTap checks the weight transform on kernels with a
// single 1: U = G g G^T is then the outer product of two columns of G,
// written out here by hand.
func TestWinogradWeightsOneTap(t *testing.T) {
	gcol := [3][4]float32{{1, 0.5, 0.5, 0}, {0, 0.5, -0.5, 0}, {0, 0.5, 0.5, 1}}
	for kh := range 3 {
		for kw := range 3 {
			wt := make([]float32, 9)
			wt[kh*3+kw] = 1
			u := make([]float32, 16)
			WinogradWeights(wt, 1, 1, u)
			for i := range 4 {
				for j := range 4 {
					if want := gcol[kh][i] * gcol[kw][j]; u[4*i+j] != want {
						t.Errorf("tap (%d,%d): U[%d][%d] = %v, want %v", kh, kw, i, j, u[4*i+j], want)
					}
				}
			}
		}
	}
}

// TestWinogradWeightsBitForBit checks WinogradWeights, which runs down
// blocks of output channels, against the transform written pair by pair
// (the loop it replaced), bit for bit: training hashes its steps, and the
// float32 path must not move. Shapes cover output blocks with a tail (70,
// 130) and single channels.
func TestWinogradWeightsBitForBit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sh := range [][2]int{{1, 1}, {2, 32}, {64, 64}, {3, 70}, {16, 130}} {
		cin, cout := sh[0], sh[1]
		wts := make([]float32, 9*cin*cout)
		for i := range wts {
			wts[i] = float32(r.NormFloat64())
		}
		got := make([]float32, 16*cin*cout)
		WinogradWeights(wts, cin, cout, got)
		plane := cin * cout
		for ci := range cin {
			for co := range cout {
				var g [3][3]float32
				for kh := range 3 {
					for kw := range 3 {
						g[kh][kw] = wts[((kh*3+kw)*cin+ci)*cout+co]
					}
				}
				var tt [4][3]float32
				for c := range 3 {
					tt[0][c] = g[0][c]
					tt[1][c] = (g[0][c] + g[1][c] + g[2][c]) / 2
					tt[2][c] = (g[0][c] - g[1][c] + g[2][c]) / 2
					tt[3][c] = g[2][c]
				}
				for i := range 4 {
					u := [4]float32{tt[i][0], (tt[i][0] + tt[i][1] + tt[i][2]) / 2, (tt[i][0] - tt[i][1] + tt[i][2]) / 2, tt[i][2]}
					for j, want := range u {
						if v := got[(4*i+j)*plane+ci*cout+co]; math.Float32bits(v) != math.Float32bits(want) {
							t.Fatalf("cin=%d cout=%d: U[%d][%d] of (%d,%d) = %v, want %v", cin, cout, i, j, ci, co, v, want)
						}
					}
				}
			}
		}
	}
}

func TestConv3x3WinogradBadArgs(t *testing.T) {
	x := make([]float32, 64)
	cases := []struct {
		name string
		f    func()
	}{
		{"negative batch", func() { Conv3x3Winograd(x, -1, 1, 2, 2, x, 1, nil, nil, false, x) }},
		{"image too short", func() { Conv3x3Winograd(x, 2, 1, 6, 6, x, 1, nil, nil, false, x) }},
		{"weights too short", func() { Conv3x3Winograd(x, 1, 2, 2, 2, x[:31], 1, nil, nil, false, x) }},
		{"output too short", func() { Conv3x3Winograd(x, 1, 1, 2, 2, x, 4, nil, nil, false, x[:15]) }},
		{"bias too short", func() { Conv3x3Winograd(x, 1, 1, 2, 2, x, 4, x[:3], nil, false, x) }},
		{"residual too short", func() { Conv3x3Winograd(x, 1, 1, 2, 2, x, 4, nil, x[:15], false, x) }},
		{"transform negative", func() { WinogradWeights(x, -1, 1, x) }},
		{"transform input short", func() { WinogradWeights(x[:8], 1, 1, x) }},
		{"transform output short", func() { WinogradWeights(x, 1, 1, x[:15]) }},
	}
	for _, c := range cases {
		func() {
			defer func() {
				if e := recover(); e == nil {
					t.Errorf("%s: no panic", c.name)
				}
			}()
			c.f()
		}()
	}
}

// TestWinogradTransforms checks winoIn and winoOutStore (without bias,
// residual or ReLU) against the transform
// matrices of Lavin and Gray (2015) applied as Kronecker products in
// float64, and the SIMD versions against the Go loops bit for bit (they
// do the same additions in the same order), on column counts with and
// without a scalar tail.
func TestWinogradTransforms(t *testing.T) {
	bt := [][4]float64{{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}}
	at := [][4]float64{{1, 1, 1, 0}, {0, 1, -1, -1}}
	r := rand.New(rand.NewPCG(33, 34))
	for _, n := range []int{1, 8, 37, 64} {
		const stride = 70
		d := randSlice(r, 16*stride)
		results := map[string][2][]float32{}
		for _, name := range implNames() {
			use(t, name)
			v, y := make([]float32, 16*stride), make([]float32, 4*stride)
			winoIn(cur.Load(), v, stride, d, stride, n)
			winoOutPlain(cur.Load(), y, stride, d, stride, n)
			results[name] = [2][]float32{v, y}
			// Entry e = rows*i+j of transform m is sum_p m[i][p/4]*m[j][p%4]*d[p].
			for _, tr := range []struct {
				what string
				m    [][4]float64
				out  []float32
			}{{"input", bt, v}, {"output", at, y}} {
				rows := len(tr.m)
				for j := range n {
					for e := range rows * rows {
						var want float64
						for p := range 16 {
							want += tr.m[e/rows][p/4] * tr.m[e%rows][p%4] * float64(d[p*stride+j])
						}
						if got := float64(tr.out[e*stride+j]); math.Abs(got-want) > 1e-5 {
							t.Fatalf("%s n=%d: %s transform column %d entry %d = %v, want %v", name, n, tr.what, j, e, got, want)
						}
					}
				}
			}
		}
		gen := results["generic"]
		for name, res := range results {
			if !slices.Equal(res[0], gen[0]) || !slices.Equal(res[1], gen[1]) {
				t.Errorf("%s n=%d: transforms differ from the generic ones", name, n)
			}
		}
	}
}

// winoOutPlain is the output transform alone of n columns: winoOutStore
// with no bias, no residual and no ReLU, y_q written to y[q*ys:].
func winoOutPlain(im *impl, y []float32, ys int, m []float32, ms int, n int) {
	zero := make([]float32, n)
	var out, res [4][]float32
	for q := range out {
		out[q], res[q] = y[q*ys:q*ys+n], zero
	}
	winoOutStore(im, m, ms, &out, &res, zero, float32(math.Inf(-1)))
}

// winoOutStore's store: bias, residual (also in place) and ReLU, pixels
// sent to a sink, the SIMD versions bit for bit with the Go loop,
// including NaN and -0 passing through.
func TestWinoOutStore(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	for _, n := range []int{3, 16, 40, 64} {
		const ms = 80
		m := randSlice(r, 16*ms)
		m[5], m[ms+7] = float32(math.NaN()), float32(math.Copysign(0, -1))
		bias := randSlice(r, n)
		type key struct {
			relu bool
			impl string
		}
		results := map[key][]uint32{}
		for _, name := range implNames() {
			use(t, name)
			for _, relu := range []bool{false, true} {
				lo := float32(math.Inf(-1))
				if relu {
					lo = 0
				}
				dst := randSlice(rand.New(rand.NewPCG(uint64(n), 1)), 3*n) // pixel 3 goes to a sink
				want := slices.Clone(dst)
				y := make([]float32, 4*n)
				winoOutPlain(&impl{name: "generic"}, y, n, m, ms, n)
				for q := range 3 {
					for c := range n {
						v := y[q*n+c] + bias[c] + want[q*n+c] // the residual is the destination
						if v < lo {
							v = lo
						}
						want[q*n+c] = v
					}
				}
				sink := make([]float32, n)
				out := [4][]float32{dst[:n], dst[n : 2*n], dst[2*n:], sink}
				res := [4][]float32{dst[:n], dst[n : 2*n], dst[2*n:], make([]float32, n)}
				winoOutStore(cur.Load(), m, ms, &out, &res, bias, lo)
				for i := range dst {
					if math.Float32bits(dst[i]) != math.Float32bits(want[i]) && !(dst[i] != dst[i] && want[i] != want[i]) {
						t.Fatalf("%s n=%d relu=%v: out[%d] = %v, want %v", name, n, relu, i, dst[i], want[i])
					}
				}
				results[key{relu, name}] = math32bits(append(dst, sink...))
			}
		}
		for k, got := range results {
			if !slices.Equal(got, results[key{k.relu, "generic"}]) {
				t.Errorf("%s n=%d relu=%v: differs from the generic loop", k.impl, n, k.relu)
			}
		}
	}
}

func math32bits(x []float32) []uint32 {
	b := make([]uint32, len(x))
	for i, v := range x {
		b[i] = math.Float32bits(v)
	}
	return b
}
