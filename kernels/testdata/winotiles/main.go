// Command winotiles measures the accuracy of Winograd tiles for a 3x3
// "same" convolution on Connect Four's 6x7 board: F(2x2,3x3) (the kernels'
// tiles), F(4x4,3x3) and F(3x4,3x3) (F(3,3) down the columns by F(4,3)
// along the rows), in float32 and with the transformed input and weights
// rounded to bfloat16, against a float64 direct convolution. It prints
// each one's products per image and channel pair and its error over the
// output's sum of absolute products (the measure kernels' tests bound by
// 1e-5). An experiment for issue 42 (docs/BENCHMARKS.md, "Batch norm's dz
// inside its consumers"), not a test: go run ./kernels/testdata/winotiles
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// wino is a 1-D Winograd transform F(m, 3): m outputs from r = m+2
// inputs, with its matrices B^T (r x r), G (r x 3) and A^T (m x r). A 2-D
// tile applies one down its columns and one (maybe another) along its rows.
type wino struct {
	m, r int
	bt   [][]float64
	g    [][]float64
	at   [][]float64
}

var f2 = wino{2, 4,
	[][]float64{{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
	[][]float64{{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
	[][]float64{{1, 1, 1, 0}, {0, 1, -1, -1}}}

var f4 = wino{4, 6,
	[][]float64{{4, 0, -5, 0, 1, 0}, {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}},
	[][]float64{{1.0 / 4, 0, 0}, {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}},
	[][]float64{{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}}

// mul32 returns L X R^T in float32 arithmetic, rows then columns, each
// sum in index order (as a SIMD transform would, one add per term).
func mul32(l [][]float64, x [][]float32, r [][]float64) [][]float32 {
	t := make([][]float32, len(l))
	for i := range l {
		t[i] = make([]float32, len(x[0]))
		for j := range x[0] {
			var s float32
			for k := range x {
				if l[i][k] != 0 {
					s += float32(l[i][k]) * x[k][j]
				}
			}
			t[i][j] = s
		}
	}
	y := make([][]float32, len(t))
	for i := range t {
		y[i] = make([]float32, len(r))
		for j := range r {
			var s float32
			for k := range t[i] {
				if r[j][k] != 0 {
					s += t[i][k] * float32(r[j][k])
				}
			}
			y[i][j] = s
		}
	}
	return y
}

// bf16 rounds x to bfloat16, to nearest even (x finite).
func bf16(x float32) float32 {
	b := math.Float32bits(x)
	b += 0x7fff + (b>>16)&1
	return math.Float32frombits(b &^ 0xffff)
}

func main() {
	const h, w, batch = 6, 7, 16
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ch := range []int{32, 64} {
		in := make([]float32, batch*h*w*ch)
		for i := range in {
			in[i] = float32(rng.Float64()*2 - 1)
		}
		wt := make([]float32, 9*ch*ch) // [kh][kw][ci][co]
		for i := range wt {
			wt[i] = float32((rng.Float64()*2 - 1) / math.Sqrt(float64(9*ch)))
		}
		at := func(n, y, x, c int) float32 {
			if y < 0 || y >= h || x < 0 || x >= w {
				return 0
			}
			return in[((n*h+y)*w+x)*ch+c]
		}
		// direct
		want := make([]float64, batch*h*w*ch)
		abs := make([]float64, batch*h*w*ch)
		for n := range batch {
			for y := range h {
				for x := range w {
					for co := range ch {
						var s, a float64
						for kh := range 3 {
							for kw := range 3 {
								for ci := range ch {
									p := float64(at(n, y+kh-1, x+kw-1, ci)) * float64(wt[((kh*3+kw)*ch+ci)*ch+co])
									s += p
									a += math.Abs(p)
								}
							}
						}
						want[((n*h+y)*w+x)*ch+co], abs[((n*h+y)*w+x)*ch+co] = s, a
					}
				}
			}
		}
		at3, g3, bt3 := cook(3, 3, []float64{0, 1, -1, 0.5})
		f3 := wino{3, 5, bt3, g3, at3}
		at3b, g3b, bt3b := cook(3, 3, []float64{0, 1, -1, 2})
		f3b := wino{3, 5, bt3b, g3b, at3b}
		for k, pair := range [][2]wino{{f2, f2}, {f4, f4}, {f3, f4}, {f3b, f4}} {
			f, fc := pair[0], pair[1]
			label := []string{"", "points 0 ±1 ±2", "F(3,3) points 0 ±1 1/2", "F(3,3) points 0 ±1 2"}[k]
			for _, useBF := range []bool{false, true} {
				// transformed weights U[ci][co] r x r
				u := make([][][]float32, ch*ch)
				for ci := range ch {
					for co := range ch {
						g := make([][]float32, 3)
						for kh := range 3 {
							g[kh] = make([]float32, 3)
							for kw := range 3 {
								g[kh][kw] = wt[((kh*3+kw)*ch+ci)*ch+co]
							}
						}
						uu := mul32(f.g, g, fc.g)
						if useBF {
							for i := range uu {
								for j := range uu[i] {
									uu[i][j] = bf16(uu[i][j])
								}
							}
						}
						u[ci*ch+co] = uu
					}
				}
				var maxRel, sumRel float64
				cnt := 0
				th, tw := (h+f.m-1)/f.m, (w+fc.m-1)/fc.m
				for n := range batch {
					for ty := range th {
						for tx := range tw {
							v := make([][][]float32, ch)
							for ci := range ch {
								d := make([][]float32, f.r)
								for i := range f.r {
									d[i] = make([]float32, fc.r)
									for j := range fc.r {
										d[i][j] = at(n, ty*f.m+i-1, tx*fc.m+j-1, ci)
									}
								}
								v[ci] = mul32(f.bt, d, fc.bt)
								if useBF {
									for i := range v[ci] {
										for j := range v[ci][i] {
											v[ci][i][j] = bf16(v[ci][i][j])
										}
									}
								}
							}
							for co := range ch {
								m := make([][]float32, f.r)
								for i := range f.r {
									m[i] = make([]float32, fc.r)
									for j := range fc.r {
										var s float32
										for ci := range ch {
											s += v[ci][i][j] * u[ci*ch+co][i][j]
										}
										m[i][j] = s
									}
								}
								y := mul32(f.at, m, fc.at)
								for i := range f.m {
									for j := range fc.m {
										yy, xx := ty*f.m+i, tx*fc.m+j
										if yy >= h || xx >= w {
											continue
										}
										k := ((n*h+yy)*w+xx)*ch + co
										rel := math.Abs(float64(y[i][j])-want[k]) / abs[k]
										maxRel = max(maxRel, rel)
										sumRel += rel
										cnt++
									}
								}
							}
						}
					}
				}
				fmt.Printf("ch=%d F(%dx%d,3x3) %s bf16=%v: %d products per image-channel pair; error / sum|products|: max %.2e mean %.2e (%d outputs)\n", ch, f.m, fc.m, label, useBF, th*tw*f.r*fc.r, maxRel, sumRel/float64(cnt), cnt)
			}
		}
	}
}

// cook returns F(m, r)'s matrices (A^T m x n, G n x r, B^T n x n, n =
// m+r-1) from the n-1 finite points and infinity (Toom-Cook).
func cook(m, r int, pts []float64) (at, g, bt [][]float64) {
	n := m + r - 1
	at = make([][]float64, m)
	for i := range m {
		at[i] = make([]float64, n)
		for j := range n - 1 {
			at[i][j] = math.Pow(pts[j], float64(i))
		}
		if i == m-1 {
			at[i][n-1] = 1
		}
	}
	g = make([][]float64, n)
	for j := range n {
		g[j] = make([]float64, r)
		if j == n-1 {
			g[j][r-1] = 1
			continue
		}
		f := 1.0
		for l := range n - 1 {
			if l != j {
				f *= pts[j] - pts[l]
			}
		}
		for k := range r {
			g[j][k] = math.Pow(pts[j], float64(k)) / f
		}
	}
	// polynomial products, ascending coefficients
	mul := func(p []float64, a float64) []float64 { // p * (x - a)
		q := make([]float64, len(p)+1)
		for i, c := range p {
			q[i+1] += c
			q[i] -= a * c
		}
		return q
	}
	bt = make([][]float64, n)
	for j := range n {
		p := []float64{1}
		for l := range n - 1 {
			if l != j || j == n-1 {
				p = mul(p, pts[l])
			}
		}
		row := make([]float64, n)
		copy(row, p)
		bt[j] = row
	}
	return at, g, bt
}
