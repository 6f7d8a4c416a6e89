package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The F(3x4,3x3) matrices as written in winograd34.go's documentation,
// in float64: the tests check the algorithm they define against the
// direct correlation, and the Go transforms against them.
var (
	w34B3T = [5][5]float64{{1, -2, -1, 2, 0}, {0, -1, 1, 2, 0}, {0, 1, -3, 2, 0}, {0, -1, 0, 1, 0}, {0, 1, -2, -1, 2}}
	w34G3  = [5][3]float64{{1, 0, 0}, {0.5, 0.5, 0.5}, {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {-2.0 / 3, -1.0 / 3, -1.0 / 6}, {0, 0, 0.5}}
	w34A3T = [3][5]float64{{1, 1, 1, 4, 0}, {0, 1, -1, 2, 0}, {0, 1, 1, 1, 1}}
	w34B4T = [6][6]float64{{4, 0, -5, 0, 1, 0}, {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}}
	w34G4  = [6][3]float64{{0.25, 0, 0}, {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}}
	w34A4T = [4][6]float64{{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}
)

// TestWinograd34Matrices checks the documented matrices against the
// definition of the convolution they compute: for random 1-D inputs d
// (m+2 values) and kernels g (3), A^T [(G g) .* (B^T d)] must equal the
// correlation y_i = sum_k d_{i+k} g_k, in float64 to rounding, for F(3,3)
// and F(4,3).
func TestWinograd34Matrices(t *testing.T) {
	r := rand.New(rand.NewPCG(341, 342))
	check := func(name string, m int, bt func(k, i int) float64, g func(k, j int) float64, at func(i, k int) float64) {
		n := m + 2
		for range 20 {
			d := make([]float64, n)
			for i := range d {
				d[i] = r.Float64()*2 - 1
			}
			var kern [3]float64
			for i := range kern {
				kern[i] = r.Float64()*2 - 1
			}
			prod := make([]float64, n)
			for k := range n {
				var gv, dv float64
				for j := range 3 {
					gv += g(k, j) * kern[j]
				}
				for i := range n {
					dv += bt(k, i) * d[i]
				}
				prod[k] = gv * dv
			}
			for i := range m {
				var y, want float64
				for k := range n {
					y += at(i, k) * prod[k]
				}
				for j := range 3 {
					want += d[i+j] * kern[j]
				}
				if math.Abs(y-want) > 1e-12 {
					t.Fatalf("%s: output %d = %v, want %v", name, i, y, want)
				}
			}
		}
	}
	check("F(3,3)", 3, func(k, i int) float64 { return w34B3T[k][i] }, func(k, j int) float64 { return w34G3[k][j] }, func(i, k int) float64 { return w34A3T[i][k] })
	check("F(4,3)", 4, func(k, i int) float64 { return w34B4T[k][i] }, func(k, j int) float64 { return w34G4[k][j] }, func(i, k int) float64 { return w34A4T[i][k] })
}

// TestWinograd34Transforms checks the portable transforms (input, output,
// weights, the weights' adjoint and the output gradient's) against the
// documented matrices applied in float64, to float32 rounding of sums of
// a few terms (1e-5 of the absolute sum of the terms).
func TestWinograd34Transforms(t *testing.T) {
	r := rand.New(rand.NewPCG(343, 344))
	// mat2 returns L X R^T (X rows x cols), and the same with absolute
	// values (the scale the rounding is relative to).
	mat2 := func(l [][]float64, x [][]float64, rt [][]float64) (y, scale [][]float64) {
		y, scale = make([][]float64, len(l)), make([][]float64, len(l))
		for i := range l {
			y[i], scale[i] = make([]float64, len(rt)), make([]float64, len(rt))
			for j := range rt {
				for a := range x {
					for b := range x[a] {
						p := l[i][a] * x[a][b] * rt[j][b]
						y[i][j] += p
						scale[i][j] += math.Abs(p)
					}
				}
			}
		}
		return y, scale
	}
	rows := func(m any) [][]float64 {
		var out [][]float64
		switch m := m.(type) {
		case [5][5]float64:
			for _, r := range m {
				out = append(out, r[:])
			}
		case [3][5]float64:
			for _, r := range m {
				out = append(out, r[:])
			}
		case [6][6]float64:
			for _, r := range m {
				out = append(out, r[:])
			}
		case [4][6]float64:
			for _, r := range m {
				out = append(out, r[:])
			}
		case [5][3]float64:
			for _, r := range m {
				out = append(out, r[:])
			}
		case [6][3]float64:
			for _, r := range m {
				out = append(out, r[:])
			}
		}
		return out
	}
	transpose := func(m [][]float64) [][]float64 {
		out := make([][]float64, len(m[0]))
		for i := range out {
			out[i] = make([]float64, len(m))
			for j := range m {
				out[i][j] = m[j][i]
			}
		}
		return out
	}
	random := func(nr, nc int) ([][]float64, []float32) {
		x, flat := make([][]float64, nr), make([]float32, nr*nc)
		for i := range x {
			x[i] = make([]float64, nc)
			for j := range x[i] {
				v := float32(r.Float64()*2 - 1)
				x[i][j], flat[i*nc+j] = float64(v), v
			}
		}
		return x, flat
	}
	compare := func(what string, got []float32, want, scale [][]float64) {
		t.Helper()
		nc := len(want[0])
		for i := range want {
			for j := range want[i] {
				if g := float64(got[i*nc+j]); math.Abs(g-want[i][j]) > 1e-6*scale[i][j]+1e-12 {
					t.Fatalf("%s: [%d][%d] = %v, want %v", what, i, j, g, want[i][j])
				}
			}
		}
	}
	b3t, b4t, a3t, a4t := rows(w34B3T), rows(w34B4T), rows(w34A3T), rows(w34A4T)
	g3, g4 := rows(w34G3), rows(w34G4)
	const n, col = 3, 1 // columns of the strided transforms, the one checked
	for range 10 {
		// Input: V = B3^T d B4.
		d, df := random(5, 6)
		want, scale := mat2(b3t, d, b4t)
		in, v := make([]float32, w34Pos*n), make([]float32, w34Pos*n)
		for p, x := range df {
			in[p*n+col] = x
		}
		w34In(v, n, in, n, n)
		got := make([]float32, w34Pos)
		for e := range got {
			got[e] = v[e*n+col]
		}
		compare("input transform", got, want, scale)

		// Output: Y = A3^T m A4.
		m, mf := random(5, 6)
		want, scale = mat2(a3t, m, a4t)
		mm := make([]float32, w34Pos*n)
		for p, x := range mf {
			mm[p*n+col] = x
		}
		y := w34OutColumn(mm, n, col)
		compare("output transform", y[:], want, scale)

		// Weights: U = G3 g G4^T.
		g, gf := random(3, 3)
		want, scale = mat2(g3, g, g4)
		u := w34WeightColumn((*[9]float32)(gf))
		compare("weight transform", u[:], want, scale)

		// The weights' adjoint: dg = G3^T du G4.
		du, duf := random(5, 6)
		want, scale = mat2(transpose(g3), du, transpose(g4))
		dg := w34WeightGradColumn((*[w34Pos]float32)(duf))
		compare("weight gradient transform", dg[:], want, scale)

		// Output gradient: dM = A3 dY A4^T.
		dy, dyf := random(3, 4)
		want, scale = mat2(transpose(a3t), dy, transpose(a4t))
		var ys [w34Outs]*float32
		for q := range ys {
			row := make([]float32, n)
			row[col] = dyf[q]
			ys[q] = &row[0]
		}
		out := make([]float32, w34Pos*n)
		w34GradOut(&impl{name: "generic"}, out, n, &ys, n)
		for e := range got {
			got[e] = out[e*n+col]
		}
		compare("output gradient transform", got, want, scale)
	}
}

// TestWinogradWeights34OneTap checks the weight transform on kernels with
// a single 1: U = G3 g G4^T is then the outer product of a column of G3
// and one of G4, written out here by hand from the documented matrices.
func TestWinogradWeights34OneTap(t *testing.T) {
	g3col := [3][5]float32{{1, 0.5, -1.0 / 6, -2.0 / 3, 0}, {0, 0.5, 1.0 / 6, -1.0 / 3, 0}, {0, 0.5, -1.0 / 6, -1.0 / 6, 0.5}}
	g4col := [3][6]float32{{0.25, -1.0 / 6, -1.0 / 6, 1.0 / 24, 1.0 / 24, 0}, {0, -1.0 / 6, 1.0 / 6, 1.0 / 12, -1.0 / 12, 0}, {0, -1.0 / 6, -1.0 / 6, 1.0 / 6, 1.0 / 6, 1}}
	for kh := range 3 {
		for kw := range 3 {
			wt := make([]float32, 9)
			wt[kh*3+kw] = 1
			u := make([]float32, w34Pos)
			WinogradWeights34(wt, 1, 1, u)
			for i := range 5 {
				for j := range 6 {
					want := float64(g3col[kh][i]) * float64(g4col[kw][j])
					if got := float64(u[6*i+j]); math.Abs(got-want) > 2e-7*math.Abs(want) {
						t.Errorf("tap (%d,%d): U[%d][%d] = %v, want %v", kh, kw, i, j, got, want)
					}
				}
			}
		}
	}
}

// TestConv3x3Winograd34 checks the F(3x4) convolution against the direct
// float64 convolution plus bias, residual and ReLU, on every
// implementation with 1 and 2 threads, relative to the absolute sum of an
// output's products (winoTol): a single pixel, boards whose last row or
// column of tiles lies partly outside (6x7, 5x5, 10x10), channel counts
// off the GEMM widths, several chunks split over threads.
func TestConv3x3Winograd34(t *testing.T) {
	r := rand.New(rand.NewPCG(345, 346))
	shapes := [][5]int{{1, 1, 1, 1, 1}, {7, 16, 5, 5, 16}, {2, 3, 6, 7, 5}, {1, 32, 6, 7, 32}, {1, 4, 1, 5, 3},
		{5, 7, 3, 1, 70}, {3, 2, 10, 10, 33}, {24, 32, 6, 7, 32}, {6, 64, 10, 10, 64}}
	if testing.Short() {
		shapes = shapes[:7]
	}
	worst := 0.0
	for _, sh := range shapes {
		c := newConvCase(r, sh)
		conv := directConv3x3(c.in, c.batch, c.cin, c.h, c.w, c.wt, c.cout)
		scale := directConv3x3(absSlice(c.in), c.batch, c.cin, c.h, c.w, absSlice(c.wt), c.cout)
		u := make([]float32, w34Pos*c.cin*c.cout)
		WinogradWeights34(c.wt, c.cin, c.cout, u)
		eachConvMode(t, conv, c.bias, c.res, func(bias, res []float32, relu bool, out []float32) {
			Conv3x3Winograd34(c.in, c.batch, c.cin, c.h, c.w, u, c.cout, bias, res, relu, out)
		}, func(label string, out, want []float32) {
			winoClose(t, fmt.Sprintf("%s %v", label, sh), out, want, scale, c.bias, c.res)
			if label[len(label)-5:] == "plain" {
				for i := range out {
					worst = max(worst, math.Abs(float64(out[i]-want[i]))/float64(scale[i]))
				}
			}
		})
	}
	t.Logf("worst error: %.3g of the products' absolute sum", worst)
}

// TestConv3x3Winograd34Moments checks the fused convolution and
// batch-norm statistics as TestConv3x3WinogradMoments does for F(2x2):
// the outputs equal Conv3x3Winograd34's, the sums agree with float64
// sums over those outputs, only pixels inside the image count, and 2
// threads give the same bits as 1.
func TestConv3x3Winograd34Moments(t *testing.T) {
	r := rand.New(rand.NewPCG(347, 348))
	shapes := [][5]int{{1, 16, 1, 1, 3}, {7, 16, 5, 5, 16}, {2, 16, 6, 7, 24}, {9, 32, 6, 7, 32}, {3, 16, 5, 3, 40}}
	for _, sh := range shapes {
		c := newConvCase(r, sh)
		m := c.batch * c.h * c.w
		u := make([]float32, w34Pos*c.cin*c.cout)
		WinogradWeights34(c.wt, c.cin, c.cout, u)
		shift := randSlice(r, c.cout)
		for _, name := range implNames() {
			use(t, name)
			var first []uint64
			for _, th := range []int{1, 2} {
				prev := SetThreads(th)
				want, got := make([]float32, m*c.cout), make([]float32, m*c.cout)
				s1, s2 := make([]float64, c.cout), make([]float64, c.cout)
				s1[0], s2[0] = 0.5, 0.25 // the sums add to what is there
				Conv3x3Winograd34(c.in, c.batch, c.cin, c.h, c.w, u, c.cout, nil, nil, false, want)
				Conv3x3Winograd34Moments(c.in, c.batch, c.cin, c.h, c.w, u, c.cout, shift, s1, s2, got)
				SetThreads(prev)
				if !slices.Equal(math32bits(got), math32bits(want)) {
					t.Fatalf("%v %s threads=%d: outputs differ from Conv3x3Winograd34's", sh, name, th)
				}
				for j := range c.cout {
					var w1, w2, a1 float64
					if j == 0 {
						w1, w2 = 0.5, 0.25
					}
					for p := range m {
						e := float64(want[p*c.cout+j]) - float64(shift[j])
						w1 += e
						w2 += e * e
						a1 += math.Abs(e)
					}
					if math.Abs(s1[j]-w1) > 1e-5*(a1+1) || math.Abs(s2[j]-w2) > 1e-5*(w2+1) {
						t.Fatalf("%v %s threads=%d: channel %d sums %v %v, want %v %v", sh, name, th, j, s1[j], s2[j], w1, w2)
					}
				}
				all := make([]uint64, 0, len(got)+2*c.cout)
				for _, b := range math32bits(got) {
					all = append(all, uint64(b))
				}
				for j := range c.cout {
					all = append(all, math.Float64bits(s1[j]), math.Float64bits(s2[j]))
				}
				if first == nil {
					first = all
				} else if !slices.Equal(all, first) {
					t.Errorf("%v %s: 2 threads differ from 1", sh, name)
				}
			}
		}
	}
}

// TestConv3x3Winograd34WeightGrad checks Conv3x3Winograd34WeightGrad
// followed by WinogradWeights34Grad against the direct float64 weight
// gradient, on every implementation, relative to the largest sum of the
// products' absolute values over the pair's 9 taps (winoTol), with two
// calls adding into du.
func TestConv3x3Winograd34WeightGrad(t *testing.T) {
	r := rand.New(rand.NewPCG(349, 350))
	shapes := [][5]int{{1, 1, 1, 1, 1}, {2, 3, 6, 7, 5}, {3, 16, 6, 7, 16}, {1, 4, 1, 5, 3},
		{2, 8, 10, 10, 33}, {24, 32, 6, 7, 32}, {5, 32, 5, 4, 24}}
	if testing.Short() {
		shapes = shapes[:5]
	}
	worst := 0.0
	for _, sh := range shapes {
		batch, cin, h, w, cout := sh[0], sh[1], sh[2], sh[3], sh[4]
		m := batch * h * w
		in, dy := randSlice(r, m*cin), randSlice(r, m*cout)
		want := directWeightGrad(in, batch, cin, h, w, dy, cout)
		scale := directWeightGrad(absSlice(in), batch, cin, h, w, absSlice(dy), cout)
		// The transforms mix a pair's 9 taps, so a tap's error is
		// relative to the largest of their absolute sums (a tap that
		// sees only padding, as the top row on a one-row board, has a
		// sum of 0 but gets the rounding of the others' cancellation).
		pairScale := make([]float64, cin*cout)
		for i, s := range scale {
			pairScale[i%(cin*cout)] = max(pairScale[i%(cin*cout)], s)
		}
		for _, name := range Available() {
			use(t, name)
			du := make([]float32, w34Pos*cin*cout)
			half := batch / 2
			Conv3x3Winograd34WeightGrad(in[:half*h*w*cin], half, cin, h, w, dy[:half*h*w*cout], cout, du)
			Conv3x3Winograd34WeightGrad(in[half*h*w*cin:], batch-half, cin, h, w, dy[half*h*w*cout:], cout, du)
			dw := make([]float32, 9*cin*cout)
			WinogradWeights34Grad(du, cin, cout, dw)
			for i, v := range dw {
				d, s := math.Abs(float64(v)-want[i]), pairScale[i%(cin*cout)]
				if d > winoTol*s {
					t.Fatalf("%s %v: dw[%d] = %v, want %v (largest absolute sum of the pair %v)", name, sh, i, v, want[i], s)
				}
				worst = max(worst, d/s)
			}
		}
	}
	t.Logf("worst error: %.3g of the products' absolute sum", worst)
}

// TestWinogradWeights34GradAdjoint checks that WinogradWeights34Grad is
// the adjoint of WinogradWeights34: <U(g), du> = <g, U^T(du)> in float64
// to float32 rounding, with blocks of output channels past 64.
func TestWinogradWeights34GradAdjoint(t *testing.T) {
	r := rand.New(rand.NewPCG(351, 352))
	for _, sh := range [][2]int{{1, 1}, {3, 70}, {16, 130}} {
		cin, cout := sh[0], sh[1]
		g, du := randSlice(r, 9*cin*cout), randSlice(r, w34Pos*cin*cout)
		u, dg := make([]float32, w34Pos*cin*cout), make([]float32, 9*cin*cout)
		WinogradWeights34(g, cin, cout, u)
		WinogradWeights34Grad(du, cin, cout, dg)
		var lhs, rhs, scale float64
		for i := range u {
			lhs += float64(u[i]) * float64(du[i])
			scale += math.Abs(float64(u[i]) * float64(du[i]))
		}
		for i := range g {
			rhs += float64(g[i]) * float64(dg[i])
		}
		if math.Abs(lhs-rhs) > 1e-6*scale {
			t.Errorf("cin=%d cout=%d: <U(g), du> = %v, <g, U^T(du)> = %v", cin, cout, lhs, rhs)
		}
	}
}

// TestWinograd34BadArgs: bad sizes panic with the function's name.
func TestWinograd34BadArgs(t *testing.T) {
	x := make([]float32, 64)
	s := make([]float64, 4)
	for _, f := range []func(){
		func() { Conv3x3Winograd34(x, -1, 1, 2, 2, x, 1, nil, nil, false, x) },
		func() { Conv3x3Winograd34(x, 2, 1, 6, 6, x, 1, nil, nil, false, x) },
		func() { Conv3x3Winograd34(x, 1, 2, 2, 2, x[:59], 1, nil, nil, false, x) },
		func() { Conv3x3Winograd34(x, 1, 1, 2, 2, x, 2, nil, nil, false, x[:7]) },
		func() { Conv3x3Winograd34(x, 1, 1, 2, 2, x, 2, x[:1], nil, false, x) },
		func() { Conv3x3Winograd34(x, 1, 1, 2, 2, x, 2, nil, x[:7], false, x) },
		func() { Conv3x3Winograd34Moments(x, 1, 1, 2, 2, x, 2, x[:1], s, s, x) },
		func() { WinogradWeights34(x, -1, 1, x) },
		func() { WinogradWeights34(x[:8], 1, 1, x) },
		func() { WinogradWeights34(x, 1, 1, x[:29]) },
		func() { Conv3x3Winograd34WeightGrad(x[:5], 1, 1, 2, 3, x, 1, x) },
		func() { Conv3x3Winograd34WeightGrad(x, 1, 1, 2, 3, x[:5], 1, x) },
		func() { Conv3x3Winograd34WeightGrad(x, 1, 1, 2, 3, x, 1, x[:29]) },
		func() { WinogradWeights34Grad(x[:29], 1, 1, x) },
		func() { WinogradWeights34Grad(x, 1, 1, x[:8]) },
	} {
		func() {
			defer func() {
				if e := recover(); e == nil || !strings.Contains(fmt.Sprint(e), "Winograd") {
					t.Errorf("panic %v, want one naming the function", e)
				}
			}()
			f()
		}()
	}
}

// TestWinograd34NoAllocs: on one thread the F(3x4) calls allocate
// nothing in steady state.
func TestWinograd34NoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless with -race (sync.Pool drops items)")
	}
	r := rand.New(rand.NewPCG(353, 354))
	const batch, ch = 16, 32
	in, out := randSlice(r, batch*42*ch), make([]float32, batch*42*ch)
	u, du := randSlice(r, w34Pos*ch*ch), make([]float32, w34Pos*ch*ch)
	dw, shift := make([]float32, 9*ch*ch), randSlice(r, ch)
	s1, s2 := make([]float64, ch), make([]float64, ch)
	for _, name := range Available() {
		use(t, name)
		prev := SetThreads(1)
		for what, f := range map[string]func(){
			"Conv3x3Winograd34":           func() { Conv3x3Winograd34(in, batch, ch, 6, 7, u, ch, shift, in, true, out) },
			"Conv3x3Winograd34Moments":    func() { Conv3x3Winograd34Moments(in, batch, ch, 6, 7, u, ch, shift, s1, s2, out) },
			"Conv3x3Winograd34WeightGrad": func() { Conv3x3Winograd34WeightGrad(in, batch, ch, 6, 7, out, ch, du) },
			"WinogradWeights34":           func() { WinogradWeights34(dw, ch, ch, u) },
			"WinogradWeights34Grad":       func() { WinogradWeights34Grad(du, ch, ch, dw) },
		} {
			f()
			if allocs := testing.AllocsPerRun(5, f); allocs != 0 {
				t.Errorf("%s: %s allocates %v per call", name, what, allocs)
			}
		}
		SetThreads(prev)
	}
}

// BenchmarkWinograd34 compares the F(3x4) convolution and weight
// gradient with F(2x2)'s on training's layer shapes, one thread: the
// Connect Four nets' tower layers (6x7, 32 and 64 channels) and
// Sequence's (10x10, 64 channels, and its stem of 107 planes), the
// forward at batch 256 and the weight gradient of a 64-sample slice (a
// training step's part). Read ns/op as CPU time on a quiet machine only.
func BenchmarkWinograd34(b *testing.B) {
	r := rand.New(rand.NewPCG(355, 356))
	defer SetThreads(SetThreads(1))
	for _, sh := range []struct{ h, w, cin, cout int }{{6, 7, 16, 16}, {6, 7, 32, 32}, {6, 7, 64, 64}, {10, 10, 64, 64}, {10, 10, 107, 64}} {
		const batch, slice = 256, 64
		cin, cout, hw := sh.cin, sh.cout, sh.h*sh.w
		in, out := randSlice(r, batch*hw*cin), make([]float32, batch*hw*cout)
		res := randSlice(r, batch*hw*cout)
		wt := randSlice(r, 9*cin*cout)
		u2, u4 := make([]float32, 16*cin*cout), make([]float32, w34Pos*cin*cout)
		WinogradWeights(wt, cin, cout, u2)
		WinogradWeights34(wt, cin, cout, u4)
		du := make([]float32, w34Pos*cin*cout)
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"forward/F2x2", func() { Conv3x3Winograd(in, batch, cin, sh.h, sh.w, u2, cout, nil, res, true, out) }},
			{"forward/F3x4", func() { Conv3x3Winograd34(in, batch, cin, sh.h, sh.w, u4, cout, nil, res, true, out) }},
			{"wgrad/F2x2", func() { Conv3x3WinogradWeightGrad(in, slice, cin, sh.h, sh.w, out, cout, du) }},
			{"wgrad/F3x4", func() { Conv3x3Winograd34WeightGrad(in, slice, cin, sh.h, sh.w, out, cout, du) }},
		} {
			b.Run(fmt.Sprintf("%dx%d/%d-%d/%s", sh.h, sh.w, cin, cout, c.name), func(b *testing.B) {
				for b.Loop() {
					c.f()
				}
			})
		}
	}
}

// TestWinograd34SIMD checks the SIMD loops of every implementation
// against the portable Go loops bit for bit (they do the same operations
// in the same order): the input transform read through pixel pointers,
// the output store with bias, residual (also in place; a NaN passes
// through the ReLU) and ReLU, the store with batch norm's sums of the
// outputs not masked and the output gradient's transform, on column
// counts that leave AVX-512 and AVX2 tails.
func TestWinograd34SIMD(t *testing.T) {
	r := rand.New(rand.NewPCG(357, 358))
	generic := &impl{name: "generic"}
	for _, n := range []int{3, 8, 16, 24, 40, 64} {
		const ms = 80 // row stride of the products and transformed values
		// Input: 30 pixel rows of n channels.
		pix := randSlice(r, w34Pos*n)
		var taps [w34Pos]*float32
		for q := range taps {
			taps[q] = &pix[q*n]
		}
		wantV := make([]float32, w34Pos*ms)
		w34In(wantV, ms, pix, n, n)
		// Products, bias, residual and output rows.
		m, bias, shift := randSlice(r, w34Pos*ms), randSlice(r, n), randSlice(r, n)
		resData := randSlice(r, w34Outs*n)
		resData[5] = float32(math.NaN())
		keep := [w34Outs]uint32{}
		for q := range keep {
			if q%5 != 2 {
				keep[q] = ^uint32(0)
			}
		}
		dy := randSlice(r, w34Outs*n)
		rows := func(x []float32) (p [w34Outs]*float32) {
			for q := range p {
				p[q] = &x[q*n]
			}
			return p
		}
		type result struct{ v, store, inPlace, stats, s1, s2, grad []float32 }
		run := func(im *impl) result {
			var res result
			res.v = make([]float32, w34Pos*ms)
			if im.avx2Loops && n%8 == 0 {
				if im.avx512Loops && n%16 == 0 {
					w34GatherInAVX512(&res.v[0], ms, &taps, n)
				} else {
					w34GatherInAVX2(&res.v[0], ms, &taps, n)
				}
			} else {
				w34In(res.v, ms, pix, n, n)
			}
			res.store = make([]float32, w34Outs*n)
			o, rr := rows(res.store), rows(resData)
			w34OutStore(im, m, ms, &o, &rr, bias, 0)
			res.inPlace = slices.Clone(resData)
			o = rows(res.inPlace)
			w34OutStore(im, m, ms, &o, &o, bias, float32(math.Inf(-1)))
			res.stats = make([]float32, w34Outs*n)
			res.s1, res.s2 = slices.Clone(bias), slices.Clone(shift) // sums add to these
			o = rows(res.stats)
			w34OutStats(im, m, ms, &o, &keep, shift, res.s1, res.s2)
			res.grad = make([]float32, w34Pos*ms)
			y := rows(dy)
			w34GradOut(im, res.grad, ms, &y, n)
			return res
		}
		want := run(generic)
		if !slices.Equal(math32bits(want.v), math32bits(wantV)) {
			t.Fatalf("n=%d: the generic path's input transform differs from w34In", n)
		}
		for _, name := range implNames() {
			use(t, name)
			got := run(cur.Load())
			for _, c := range []struct {
				what      string
				got, want []float32
			}{{"input", got.v, want.v}, {"store", got.store, want.store}, {"in-place store", got.inPlace, want.inPlace},
				{"stats store", got.stats, want.stats}, {"s1", got.s1, want.s1}, {"s2", got.s2, want.s2}, {"output gradient", got.grad, want.grad}} {
				if !slices.Equal(math32bits(c.got), math32bits(c.want)) {
					t.Errorf("%s n=%d: %s differs from the portable loop's", name, n, c.what)
				}
			}
		}
	}
}

// TestWinogradWeights34Columns checks WinogradWeights34 and
// WinogradWeights34Grad, which run down blocks of output channels,
// against the per-pair transforms (w34WeightColumn, w34WeightGradColumn,
// checked against the matrices by TestWinograd34Transforms) bit for bit,
// with blocks past 64 columns, on every implementation (the SIMD loops
// of the weight transform, w34WeightsG<w> and w34WeightsGT<w>, on whole
// vectors of a block, Go on the rest).
func TestWinogradWeights34Columns(t *testing.T) {
	r := rand.New(rand.NewPCG(359, 360))
	for _, name := range implNames() {
		use(t, name)
		testWeights34Columns(t, r, name)
	}
}

func testWeights34Columns(t *testing.T, r *rand.Rand, name string) {
	for _, sh := range [][2]int{{1, 1}, {3, 70}, {2, 24}, {16, 130}} {
		cin, cout := sh[0], sh[1]
		g, du := randSlice(r, 9*cin*cout), randSlice(r, w34Pos*cin*cout)
		u, dg := make([]float32, w34Pos*cin*cout), make([]float32, 9*cin*cout)
		WinogradWeights34(g, cin, cout, u)
		WinogradWeights34Grad(du, cin, cout, dg)
		plane := cin * cout
		for ci := range cin {
			for co := range cout {
				var gp [9]float32
				for tap := range gp {
					gp[tap] = g[tap*plane+ci*cout+co]
				}
				var dp [w34Pos]float32
				for e := range dp {
					dp[e] = du[e*plane+ci*cout+co]
				}
				for e, want := range w34WeightColumn(&gp) {
					if got := u[e*plane+ci*cout+co]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%s %v: U[%d] of (%d, %d) = %v, want %v", name, sh, e, ci, co, got, want)
					}
				}
				for tap, want := range w34WeightGradColumn(&dp) {
					if got := dg[tap*plane+ci*cout+co]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%s %v: dg[%d] of (%d, %d) = %v, want %v", name, sh, tap, ci, co, got, want)
					}
				}
			}
		}
	}
}

// TestWinograd34GatherTiles checks the input transform of whole chunks
// (the run-of-tiles loops, which build the pixel pointers from the tile
// table and prefetch) on every implementation against the portable
// gathered copy and w34In, bit for bit: chunks that start and end inside
// an image, boards with tiles partly outside, channels of whole AVX2 but
// not AVX-512 vectors.
func TestWinograd34GatherTiles(t *testing.T) {
	r := rand.New(rand.NewPCG(361, 362))
	generic := &impl{name: "generic"}
	for _, sh := range [][4]int{{5, 16, 6, 7}, {3, 24, 5, 5}, {4, 32, 10, 10}, {2, 8, 3, 4}} {
		batch, cin, h, w := sh[0], sh[1], sh[2], sh[3]
		src := randSlice(r, batch*h*w*cin)
		a := w34Args{src: src, cin: cin, h: h, w: w, th: (h + 2) / 3, tw: (w + 3) / 4}
		tiles := batch * a.th * a.tw
		for _, span := range [][2]int{{0, tiles}, {1, tiles - 1}, {a.th*a.tw + 1, tiles}} {
			t0, t1 := span[0], span[1]
			is := (t1-t0)*cin + winoPad
			run := func(im *impl) []float32 {
				sc := &w34Scratch{zero: make([]float32, cin)}
				a.gatherIn(im, sc, t0, t1, is)
				return slices.Clone(sc.v[:w34Pos*is])
			}
			want := run(generic)
			for _, name := range implNames() {
				use(t, name)
				if got := run(cur.Load()); !slices.Equal(math32bits(got), math32bits(want)) {
					t.Errorf("%s %v tiles [%d, %d): transformed input differs from the portable path's", name, sh, t0, t1)
				}
				// Rounded in the transform's store (w34GatherTilesBF16AVX512):
				// ToBF16 of the portable values, the padding untouched.
				sc := &w34Scratch{zero: make([]float32, cin), vb: make([]uint16, w34Pos*is)}
				for i := range sc.vb {
					sc.vb[i] = 0xdead
				}
				if !a.gatherInTo(cur.Load(), sc, t0, t1, is, true) {
					continue
				}
				for i, v := range want {
					w := ToBF16(v)
					if i%is >= (t1-t0)*cin {
						w = 0xdead
					}
					if sc.vb[i] != w {
						t.Fatalf("%s %v tiles [%d, %d): bfloat16 row %d, value %d = %#04x, want %#04x", name, sh, t0, t1, i/is, i%is, sc.vb[i], w)
					}
				}
			}
		}
	}
}
