package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// directWeightGrad is the weight gradient of a 3x3 "same" convolution in
// float64 loops: dw[((kh*3+kw)*cin+ci)*cout+co] = sum over n, y, x of
// in(n, y+kh-1, x+kw-1, ci) * dy(n, y, x, co), zero padding.
func directWeightGrad(in []float32, batch, cin, h, w int, dy []float32, cout int) []float64 {
	dw := make([]float64, 9*cin*cout)
	for n := range batch {
		for y := range h {
			for x := range w {
				g := dy[((n*h+y)*w+x)*cout:][:cout]
				for kh := range 3 {
					for kw := range 3 {
						yy, xx := y+kh-1, x+kw-1
						if yy < 0 || yy >= h || xx < 0 || xx >= w {
							continue
						}
						px := in[((n*h+yy)*w+xx)*cin:][:cin]
						for ci, v := range px {
							row := dw[((kh*3+kw)*cin+ci)*cout:][:cout]
							for co, gv := range g {
								row[co] += float64(v) * float64(gv)
							}
						}
					}
				}
			}
		}
	}
	return dw
}

// TestConv3x3WinogradWeightGrad checks Conv3x3WinogradWeightGrad followed
// by WinogradWeightsGrad against the direct float64 weight gradient, on
// every implementation, relative to the sum of the products' absolute
// values (winoTol): odd boards (tiles half outside), channel counts off
// the SIMD widths (the gathered-copy path), 16 and 64 channels (the SIMD
// input transforms), and several chunks of tiles. A call adds to du.
func TestConv3x3WinogradWeightGrad(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	shapes := [][5]int{{1, 1, 1, 1, 1}, {2, 3, 6, 7, 5}, {3, 16, 6, 7, 16}, {1, 4, 1, 5, 3},
		{2, 8, 10, 10, 33}, {24, 64, 6, 7, 64}, {5, 32, 5, 4, 24}}
	for _, sh := range shapes {
		batch, cin, h, w, cout := sh[0], sh[1], sh[2], sh[3], sh[4]
		m := batch * h * w
		in, dy := randSlice(r, m*cin), randSlice(r, m*cout)
		want := directWeightGrad(in, batch, cin, h, w, dy, cout)
		scale := directWeightGrad(absSlice(in), batch, cin, h, w, absSlice(dy), cout)
		for _, name := range Available() {
			use(t, name)
			du := make([]float32, 16*cin*cout)
			// Two halves of the batch add into du.
			half := batch / 2
			Conv3x3WinogradWeightGrad(in[:half*h*w*cin], half, cin, h, w, dy[:half*h*w*cout], cout, du)
			Conv3x3WinogradWeightGrad(in[half*h*w*cin:], batch-half, cin, h, w, dy[half*h*w*cout:], cout, du)
			dw := make([]float32, 9*cin*cout)
			WinogradWeightsGrad(du, cin, cout, dw)
			for i, v := range dw {
				if d := math.Abs(float64(v) - want[i]); d > winoTol*scale[i]+1e-30 {
					t.Fatalf("%s %v: dw[%d] = %v, want %v (absolute sum %v)", name, sh, i, v, want[i], scale[i])
				}
			}
		}
	}
}

// TestWinoGradOut checks the output gradient's transform, on every
// implementation and column counts off the SIMD widths, against the
// input transform (the portable winoIn) of the 4x4 patch holding dY in
// its centre and zeros around, whose rows are A dY A^T's permuted and
// negated (gradChunk before the 2x2 transform): the same values, bit
// for bit, and against A dY A^T written out by hand for one column.
func TestWinoGradOut(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	generic := &impl{name: "generic"}
	perm, sign := [4]int{3, 1, 2, 0}, [4]float32{1, 1, -1, 1}
	for _, n := range []int{1, 7, 8, 16, 24, 33, 64} {
		var y [4][]float32
		var yp [4]*float32
		d := make([]float32, 16*n) // the patches, d[p*n+j]
		for q := range y {
			y[q] = randSlice(r, n)
			yp[q] = &y[q][0]
			copy(d[(4*(1+q/2)+1+q%2)*n:][:n], y[q])
		}
		want := make([]float32, 16*n)
		winoIn(generic, want, n, d, n, n)
		for _, name := range Available() {
			use(t, name)
			v := make([]float32, 16*n)
			winoGradOut(cur.Load(), v, n, &yp, n)
			for e := range 16 {
				i, j := e/4, e%4
				f := 4*perm[i] + perm[j]
				for c := range n {
					if got, w := v[e*n+c], sign[i]*sign[j]*want[f*n+c]; got != w {
						t.Fatalf("%s n=%d: dM[%d][%d] = %v, input transform of the patch %v", name, n, e, c, got, w)
					}
				}
			}
			// A = [1 0; 1 1; 1 -1; 0 -1] on column 0.
			a, b, c, dd := y[0][0], y[1][0], y[2][0], y[3][0]
			rows := [4][2]float32{{a, b}, {a + c, b + dd}, {a - c, b - dd}, {-c, -dd}}
			for i, row := range rows {
				hand := [4]float32{row[0], row[0] + row[1], row[0] - row[1], -row[1]}
				for j, h := range hand {
					if got := v[(4*i+j)*n]; got != h {
						t.Fatalf("%s n=%d: dM[%d][0] = %v, A dY A^T by hand %v", name, n, 4*i+j, got, h)
					}
				}
			}
		}
	}
}

// TestWinogradWeightGradBadArgs: short buffers panic with the function's name.
func TestWinogradWeightGradBadArgs(t *testing.T) {
	for _, f := range []func(){
		func() {
			Conv3x3WinogradWeightGrad(make([]float32, 5), 1, 1, 2, 3, make([]float32, 6), 1, make([]float32, 16))
		},
		func() {
			Conv3x3WinogradWeightGrad(make([]float32, 6), 1, 1, 2, 3, make([]float32, 5), 1, make([]float32, 16))
		},
		func() {
			Conv3x3WinogradWeightGrad(make([]float32, 6), 1, 1, 2, 3, make([]float32, 6), 1, make([]float32, 15))
		},
		func() { WinogradWeightsGrad(make([]float32, 15), 1, 1, make([]float32, 9)) },
		func() { WinogradWeightsGrad(make([]float32, 16), 1, 1, make([]float32, 8)) },
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

// TestConv3x3WinogradWeightGradBF16 checks the bfloat16 weight gradient
// against the direct float64 one within bfloat16's rounding (2% of the sum
// of the products' absolute values: both transformed operands rounded to 8
// significant bits, and each transformed value a sum of up to 4 inputs, so
// the rounding is relative to up to 16 times the direct products'
// magnitudes; measured 0.1-1.1%, most with the fewest tiles), on every
// implementation, and that
// the implementations give the same bits as the portable code (the
// AVX-512 BF16 pair-row kernels and pairRowsBF16AVX512 against
// pairsProductGeneric and ToBF16): odd tile counts (a zero pad row),
// 16, 32 and 64 channels (strips of 32 and 64 columns, a partial strip
// at 48, three strips of 32 at 96 and two of 64 at 128), several chunks.
func TestConv3x3WinogradWeightGradBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	shapes := [][5]int{{1, 16, 3, 5, 16}, {1, 16, 5, 5, 16}, {3, 16, 5, 5, 32}, {3, 32, 6, 7, 32}, {24, 64, 6, 7, 64}, {2, 16, 10, 10, 48}, {5, 32, 5, 4, 64},
		{3, 16, 5, 5, 96}, {2, 32, 6, 7, 128}}
	for _, sh := range shapes {
		batch, cin, h, w, cout := sh[0], sh[1], sh[2], sh[3], sh[4]
		m := batch * h * w
		in, dy := randSlice(r, m*cin), randSlice(r, m*cout)
		want := directWeightGrad(in, batch, cin, h, w, dy, cout)
		scale := directWeightGrad(absSlice(in), batch, cin, h, w, absSlice(dy), cout)
		var ref []float32
		for _, name := range append([]string{"generic"}, Available()...) {
			use(t, name)
			du := make([]float32, 16*cin*cout)
			Conv3x3WinogradWeightGradBF16(in, batch, cin, h, w, dy, cout, du)
			switch {
			case ref == nil:
				ref = du
			case cur.Load().amx:
				// The tile unit sums in its own order (amx.go).
				closeEnough(t, fmt.Sprintf("%s %v: du against the portable code's", name, sh), du, ref, m)
			default:
				for i := range du {
					if du[i] != ref[i] {
						t.Fatalf("%s %v: du[%d] = %v, portable code %v (%s)", name, sh, i, du[i], ref[i], BF16Kernels())
					}
				}
			}
			dw := make([]float32, 9*cin*cout)
			WinogradWeightsGrad(du, cin, cout, dw)
			worst := 0.0
			for i, v := range dw {
				d := math.Abs(float64(v) - want[i])
				if d > 0.02*scale[i]+1e-30 {
					t.Fatalf("%s %v: dw[%d] = %v, want %v (absolute sum %v)", name, sh, i, v, want[i], scale[i])
				}
				worst = max(worst, d/scale[i])
			}
			if worst < 1e-5 {
				t.Errorf("%s %v: error at most %.2g of the absolute sum: bfloat16 did not round", name, sh, worst)
			}
		}
	}
}
