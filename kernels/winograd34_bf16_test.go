package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// w34BF16Bound returns, per output of a 3x3 convolution computed by
// F(3x4,3x3) with bfloat16 operands, a bound on its error from first
// principles, in float64 from the documented matrices: rounding a value to
// bfloat16 (8 significant bits, to nearest) moves it by at most 2^-9 of
// itself, so a product of two rounded values is off by at most (2^-8 +
// 2^-18) of the exact product, and output q of a tile is off by at most
// that times sum over input channels ci and positions e of |A_qe| |V_e(ci)|
// |U_e(ci, co)| (A_qe = A3^T[r][k] A4^T[c][l] for q = (r, c), e = (k, l);
// V = B3^T d B4, U = G3 g G4^T). The float32 transforms and sums add about
// 1e-6 of the same sum, and of the products' absolute sum (winoTol's
// measure), allowed for by a further 1e-5 of both.
func w34BF16Bound(c convCase) []float64 {
	th, tw := (c.h+2)/3, (c.w+3)/4
	bound := make([]float64, c.batch*c.h*c.w*c.cout)
	// |U_e(ci, co)| for every pair, [e][ci][co].
	uAbs := make([]float64, w34Pos*c.cin*c.cout)
	for ci := range c.cin {
		for co := range c.cout {
			for k := range 5 {
				for l := range 6 {
					var u float64
					for a := range 3 {
						for b := range 3 {
							u += w34G3[k][a] * float64(c.wt[((3*a+b)*c.cin+ci)*c.cout+co]) * w34G4[l][b]
						}
					}
					uAbs[((6*k+l)*c.cin+ci)*c.cout+co] = math.Abs(u)
				}
			}
		}
	}
	vAbs := make([]float64, w34Pos*c.cin)
	p := make([]float64, w34Pos*c.cout)
	for n := range c.batch {
		for ty := range th {
			for tx := range tw {
				y0, x0 := 3*ty, 4*tx
				for ci := range c.cin {
					var d [5][6]float64
					for i := range 5 {
						for j := range 6 {
							y, x := y0-1+i, x0-1+j
							if y >= 0 && y < c.h && x >= 0 && x < c.w {
								d[i][j] = float64(c.in[((n*c.h+y)*c.w+x)*c.cin+ci])
							}
						}
					}
					for k := range 5 {
						for l := range 6 {
							var v float64
							for i := range 5 {
								for j := range 6 {
									v += w34B3T[k][i] * d[i][j] * w34B4T[l][j]
								}
							}
							vAbs[(6*k+l)*c.cin+ci] = math.Abs(v)
						}
					}
				}
				clear(p)
				for e := range w34Pos {
					for ci := range c.cin {
						ve := vAbs[e*c.cin+ci]
						for co, u := range uAbs[(e*c.cin+ci)*c.cout:][:c.cout] {
							p[e*c.cout+co] += ve * u
						}
					}
				}
				for r := range 3 {
					for col := range 4 {
						y, x := y0+r, x0+col
						if y >= c.h || x >= c.w {
							continue
						}
						o := ((n*c.h+y)*c.w + x) * c.cout
						for co := range c.cout {
							var s float64
							for k := range 5 {
								for l := range 6 {
									s += math.Abs(w34A3T[r][k]*w34A4T[col][l]) * p[(6*k+l)*c.cout+co]
								}
							}
							bound[o+co] = s
						}
					}
				}
			}
		}
	}
	return bound
}

// TestConv3x3Winograd34BF16 checks the bfloat16 F(3x4) convolution against
// the float64 direct convolution (plus bias, residual and ReLU), on every
// implementation with 1 and 2 threads, within w34BF16Bound's bound; it
// logs the largest error relative to the products' absolute sum (the
// measure of kernels/testdata/winotiles).
func TestConv3x3Winograd34BF16(t *testing.T) {
	r := rand.New(rand.NewPCG(351, 352))
	shapes := [][5]int{{1, 2, 1, 1, 1}, {2, 4, 6, 7, 5}, {7, 16, 5, 5, 16}, {1, 32, 6, 7, 32}, {3, 16, 10, 10, 33}, {5, 8, 3, 1, 70}, {24, 64, 6, 7, 64}}
	if testing.Short() {
		shapes = shapes[:6]
	}
	worst, worstRel := 0.0, 0.0
	for _, sh := range shapes {
		c := newConvCase(r, sh)
		conv := directConv3x3(c.in, c.batch, c.cin, c.h, c.w, c.wt, c.cout)
		scale := directConv3x3(absSlice(c.in), c.batch, c.cin, c.h, c.w, absSlice(c.wt), c.cout)
		bound := w34BF16Bound(c)
		u := make([]float32, w34Pos*c.cin*c.cout)
		WinogradWeights34(c.wt, c.cin, c.cout, u)
		ub := PackWinograd34BF16(u, c.cin, c.cout)
		eachConvMode(t, conv, c.bias, c.res, func(bias, res []float32, relu bool, out []float32) {
			Conv3x3Winograd34BF16(c.in, c.batch, c.cin, c.h, c.w, ub, bias, res, relu, out)
		}, func(label string, out, want []float32) {
			for i := range want {
				s := float64(scale[i]) + math.Abs(float64(c.bias[i%c.cout])) + math.Abs(float64(c.res[i]))
				tol := (0x1p-8+0x1p-18)*bound[i] + 1e-5*(bound[i]+s)
				d := math.Abs(float64(out[i]) - float64(want[i]))
				if !(d <= tol) {
					t.Fatalf("%s %v: element %d = %v, want %v (bound %.3g)", label, sh, i, out[i], want[i], tol)
				}
				if label[len(label)-5:] == "plain" {
					worst = max(worst, d/float64(scale[i]))
					worstRel = max(worstRel, d/tol)
				}
			}
		})
	}
	t.Logf("worst error: %.3g of the products' absolute sum, %.3g of the bound", worst, worstRel)
}

// TestConv3x3Winograd34BF16Moments checks the fused convolution and
// batch-norm statistics in bfloat16 as TestConv3x3Winograd34Moments does
// in float32: the outputs equal Conv3x3Winograd34BF16's bit for bit, the
// sums agree with float64 sums over those outputs, and 2 threads give the
// same bits as 1.
func TestConv3x3Winograd34BF16Moments(t *testing.T) {
	r := rand.New(rand.NewPCG(353, 354))
	for _, sh := range [][5]int{{1, 16, 1, 1, 3}, {7, 16, 5, 5, 16}, {9, 32, 6, 7, 32}, {3, 16, 5, 3, 40}} {
		c := newConvCase(r, sh)
		m := c.batch * c.h * c.w
		u := make([]float32, w34Pos*c.cin*c.cout)
		WinogradWeights34(c.wt, c.cin, c.cout, u)
		ub := PackWinograd34BF16(u, c.cin, c.cout)
		shift := randSlice(r, c.cout)
		for _, name := range implNames() {
			use(t, name)
			var first []uint64
			for _, th := range []int{1, 2} {
				prev := SetThreads(th)
				want, got := make([]float32, m*c.cout), make([]float32, m*c.cout)
				s1, s2 := make([]float64, c.cout), make([]float64, c.cout)
				Conv3x3Winograd34BF16(c.in, c.batch, c.cin, c.h, c.w, ub, nil, nil, false, want)
				Conv3x3Winograd34BF16Moments(c.in, c.batch, c.cin, c.h, c.w, ub, shift, s1, s2, got)
				SetThreads(prev)
				if !slices.Equal(math32bits(got), math32bits(want)) {
					t.Fatalf("%v %s threads=%d: outputs differ from Conv3x3Winograd34BF16's", sh, name, th)
				}
				all := make([]uint64, 0, 2*c.cout)
				for j := range c.cout {
					var w1, w2, a1 float64
					for p := range m {
						e := float64(want[p*c.cout+j]) - float64(shift[j])
						w1 += e
						w2 += e * e
						a1 += math.Abs(e)
					}
					if math.Abs(s1[j]-w1) > 1e-5*(a1+1) || math.Abs(s2[j]-w2) > 1e-5*(w2+1) {
						t.Fatalf("%v %s threads=%d: channel %d sums %v %v, want %v %v", sh, name, th, j, s1[j], s2[j], w1, w2)
					}
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

// TestConv3x3Winograd34BF16SIMD checks the SIMD path (AVX-512 BF16 micro-
// kernels, AVX2/AVX-512 transforms) against the portable Go one on Connect
// Four and Sequence shapes: the same transforms in the same order and the
// same pairwise sums, so the same bits on this CPU (a CPU that rounds a
// VDPBF16PS pair once may differ in the last bits: closeEnough).
func TestConv3x3Winograd34BF16SIMD(t *testing.T) {
	if BF16Kernels() == "generic" {
		t.Skip("no AVX-512 BF16 kernels on this CPU: only the portable path runs")
	}
	r := rand.New(rand.NewPCG(355, 356))
	for _, sh := range [][5]int{{16, 64, 6, 7, 64}, {9, 32, 6, 7, 32}, {3, 2, 6, 7, 64}, {2, 64, 10, 10, 40}} {
		c := newConvCase(r, sh)
		u := make([]float32, w34Pos*c.cin*c.cout)
		WinogradWeights34(c.wt, c.cin, c.cout, u)
		ub := PackWinograd34BF16(u, c.cin, c.cout)
		simd, port := make([]float32, len(c.res)), make([]float32, len(c.res))
		Conv3x3Winograd34BF16(c.in, c.batch, c.cin, c.h, c.w, ub, c.bias, c.res, true, simd)
		restore, err := Use("generic")
		if err != nil {
			t.Fatal(err)
		}
		Conv3x3Winograd34BF16(c.in, c.batch, c.cin, c.h, c.w, ub, c.bias, c.res, true, port)
		restore()
		closeEnough(t, fmt.Sprintf("winograd34 bf16 %v", sh), simd, port, 9*c.cin)
		t.Logf("%v: bit for bit: %v", sh, slices.Equal(simd, port))
	}
}

// TestWinograd34BF16BadArgs checks that malformed calls panic with a
// message instead of reading out of bounds.
func TestWinograd34BF16BadArgs(t *testing.T) {
	ub := PackWinograd34BF16(make([]float32, w34Pos*4*3), 4, 3)
	img := make([]float32, 6*7*4)
	out := make([]float32, 6*7*3)
	for name, f := range map[string]func(){
		"pack short": func() { PackWinograd34BF16(make([]float32, 10), 4, 3) },
		"nil":        func() { Conv3x3Winograd34BF16(img, 1, 4, 6, 7, nil, nil, nil, false, out) },
		"cin":        func() { Conv3x3Winograd34BF16(img, 1, 2, 6, 7, ub, nil, nil, false, out) },
		"odd cin": func() {
			Conv3x3Winograd34BF16(img, 1, 3, 6, 7, PackWinograd34BF16(make([]float32, w34Pos*3*3), 3, 3), nil, nil, false, out)
		},
		"short dst": func() { Conv3x3Winograd34BF16(img, 1, 4, 6, 7, ub, nil, nil, false, out[:10]) },
		"moments":   func() { Conv3x3Winograd34BF16Moments(img, 1, 4, 6, 7, ub, nil, nil, nil, out) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// w34PatchAbs returns |V_e| = |(B3^T d B4)_e| in float64, e = 6k+l, of the
// 5x6 patch of channel ci of NHWC image n of in (h x w x ch) whose top
// left pixel is (y0-1, x0-1), zeros outside the image.
func w34PatchAbs(in []float32, n, ch, ci, h, w, y0, x0 int) (v [w34Pos]float64) {
	var d [5][6]float64
	for i := range 5 {
		for j := range 6 {
			if y, x := y0-1+i, x0-1+j; y >= 0 && y < h && x >= 0 && x < w {
				d[i][j] = float64(in[((n*h+y)*w+x)*ch+ci])
			}
		}
	}
	for k := range 5 {
		for l := range 6 {
			for i := range 5 {
				for j := range 6 {
					v[6*k+l] += w34B3T[k][i] * d[i][j] * w34B4T[l][j]
				}
			}
			v[6*k+l] = math.Abs(v[6*k+l])
		}
	}
	return v
}

// w34GradOutAbs returns |dM_e| = |(A3 dY A4^T)_e| in float64 of the 3x4
// output gradient of channel co of NHWC image n of dy (h x w x ch) whose
// top left pixel is (y0, x0), zeros outside the image.
func w34GradOutAbs(dy []float32, n, ch, co, h, w, y0, x0 int) (m [w34Pos]float64) {
	for k := range 5 {
		for l := range 6 {
			for r := range 3 {
				for c := range 4 {
					if y, x := y0+r, x0+c; y < h && x < w {
						m[6*k+l] += w34A3T[r][k] * float64(dy[((n*h+y)*w+x)*ch+co]) * w34A4T[c][l]
					}
				}
			}
			m[6*k+l] = math.Abs(m[6*k+l])
		}
	}
	return m
}

// TestConv3x3Winograd34WeightGradBF16 checks the bfloat16 F(3x4) weight
// gradient, transformed back by WinogradWeights34Grad, against the direct
// float64 one within a bound from first principles, as w34BF16Bound does
// for the forward: each product V_e dM_e of a tile is off by at most
// (2^-8 + 2^-18) of |V_e| |dM_e| after the two roundings to bfloat16, so
// du_e by that times P_e = the sum over tiles of |V_e| |dM_e|, and tap
// (a, b) of dw = G3^T du G4 by the sum over e = (k, l) of |G3[k][a]|
// |G4[l][b]| times du_e's bound; the float32 transforms and sums add a
// further 1e-5 of the same sums and of the direct products' absolute sum
// (winoTol's measure). It also checks that every implementation gives
// the portable code's bits (the AVX-512 BF16 pair-row kernels against
// pairsProductGeneric): odd tile counts (a zero pad tile), 16 to 64
// channels (strips of 32 and 64 columns, a partial strip at 48), several
// chunks.
func TestConv3x3Winograd34WeightGradBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(357, 358))
	shapes := [][5]int{{1, 16, 3, 5, 16}, {3, 16, 5, 5, 32}, {9, 32, 6, 7, 32}, {2, 16, 10, 10, 48}, {24, 64, 6, 7, 64}}
	if testing.Short() {
		shapes = shapes[:4]
	}
	worst := 0.0
	for _, sh := range shapes {
		batch, cin, h, w, cout := sh[0], sh[1], sh[2], sh[3], sh[4]
		m := batch * h * w
		in, dy := randSlice(r, m*cin), randSlice(r, m*cout)
		want := directWeightGrad(in, batch, cin, h, w, dy, cout)
		scale := directWeightGrad(absSlice(in), batch, cin, h, w, absSlice(dy), cout)
		// P_e per channel pair, [e][ci][co].
		p := make([]float64, w34Pos*cin*cout)
		vs, ms := make([][w34Pos]float64, cin), make([][w34Pos]float64, cout)
		for n := range batch {
			for y0 := 0; y0 < h; y0 += 3 {
				for x0 := 0; x0 < w; x0 += 4 {
					for ci := range cin {
						vs[ci] = w34PatchAbs(in, n, cin, ci, h, w, y0, x0)
					}
					for co := range cout {
						ms[co] = w34GradOutAbs(dy, n, cout, co, h, w, y0, x0)
					}
					for e := range w34Pos {
						for ci := range cin {
							row := p[(e*cin+ci)*cout:][:cout]
							for co := range cout {
								row[co] += vs[ci][e] * ms[co][e]
							}
						}
					}
				}
			}
		}
		bound := make([]float64, 9*cin*cout)
		for a := range 3 {
			for b := range 3 {
				for e := range w34Pos {
					g := math.Abs(w34G3[e/6][a] * w34G4[e%6][b])
					for i, v := range p[e*cin*cout:][:cin*cout] {
						bound[(3*a+b)*cin*cout+i] += g * v
					}
				}
			}
		}
		var ref []float32
		for _, name := range append([]string{"generic"}, Available()...) {
			use(t, name)
			du := make([]float32, w34Pos*cin*cout)
			half := batch / 2
			Conv3x3Winograd34WeightGradBF16(in[:half*h*w*cin], half, cin, h, w, dy[:half*h*w*cout], cout, du)
			Conv3x3Winograd34WeightGradBF16(in[half*h*w*cin:], batch-half, cin, h, w, dy[half*h*w*cout:], cout, du)
			switch {
			case ref == nil:
				ref = du
			case cur.Load().amx:
				// The tile unit sums in its own order (amx.go).
				closeEnough(t, fmt.Sprintf("%s %v: du against the portable code's", name, sh), du, ref, batch*h*w)
			case !slices.Equal(math32bits(du), math32bits(ref)):
				t.Fatalf("%s %v: du differs from the portable code's (%s)", name, sh, BF16Kernels())
			}
			dw := make([]float32, 9*cin*cout)
			WinogradWeights34Grad(du, cin, cout, dw)
			for i, v := range dw {
				tol := (0x1p-8+0x1p-18)*bound[i] + 1e-5*(bound[i]+scale[i])
				d := math.Abs(float64(v) - want[i])
				if !(d <= tol) {
					t.Fatalf("%s %v: dw[%d] = %v, want %v (bound %.3g)", name, sh, i, v, want[i], tol)
				}
				worst = max(worst, d/tol)
			}
		}
	}
	t.Logf("worst error: %.3g of the bound", worst)
}
