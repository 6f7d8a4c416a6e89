package kernels

import "fmt"

// The weight gradient of a Winograd F(2x2, 3x3) convolution. A tile of
// output channel co is Y = A^T [sum over ci of U .* V] A with U = G g G^T
// (g the 3x3 kernel of the pair (ci, co)) and V = B^T d B (d the tile's
// 4x4 input patch of channel ci). Given the tile's output gradient dY
// (2x2; zero for outputs past the image's edge, which the forward drops),
// the gradient of the products is dM = A dY A^T (4x4), so dU = sum over
// tiles of dM .* V and dg = G^T dU G. Per position e of the 4x4 tile the
// sum over tiles is a product over the batch's tiles,
// dU_e[ci][co] = sum_t V_e[t][ci] * dM_e[t][co], a GEMM with transposed A
// of cin x tiles by tiles x cout: 16 multiply-adds per channel pair and
// tile of 4 outputs, against 36 for im2col's weight gradient.

// Conv3x3WinogradWeightGrad adds to du ([16][cin][cout], position e of the
// 4x4 transformed kernel outermost, as WinogradWeights writes U) the
// gradient of the transformed weights of a 3x3 "same" convolution of the
// NHWC batch src (batch*h*w*cin values) whose output gradient is dy (NHWC
// [batch*h*w, cout]): du_e += sum over tiles of (B^T d B)_e^T (A dy A^T)_e.
// WinogradWeightsGrad turns du into the gradient of the [9*cin, cout]
// weights. It runs on the calling goroutine alone (callers split the batch)
// and allocates nothing in steady state.
func Conv3x3WinogradWeightGrad(src []float32, batch, cin, h, w int, dy []float32, cout int, du []float32) {
	if batch < 0 || cin < 0 || h < 0 || w < 0 || cout < 0 {
		panic(fmt.Sprintf("kernels: Conv3x3WinogradWeightGrad: negative size batch=%d cin=%d h=%d w=%d cout=%d", batch, cin, h, w, cout))
	}
	m := batch * h * w
	switch {
	case len(src) < m*cin:
		panic(fmt.Sprintf("kernels: Conv3x3WinogradWeightGrad: image has %d values, want %d", len(src), m*cin))
	case len(dy) < m*cout:
		panic(fmt.Sprintf("kernels: Conv3x3WinogradWeightGrad: output gradient has %d values, want %d", len(dy), m*cout))
	case len(du) < 16*cin*cout:
		panic(fmt.Sprintf("kernels: Conv3x3WinogradWeightGrad: du has %d values, want %d", len(du), 16*cin*cout))
	}
	if m == 0 || cin == 0 || cout == 0 {
		return
	}
	a := winoArgs{src: src, cin: cin, h: h, w: w, th: (h + 1) / 2, tw: (w + 1) / 2, cout: cout, dst: dy}
	tiles := batch * a.th * a.tw
	for t0 := 0; t0 < tiles; t0 += winoGradChunk {
		a.gradChunk(t0, min(t0+winoGradChunk, tiles), du)
	}
}

// winoGradChunk is the number of tiles, the GEMMs' K, of one pass of
// Conv3x3WinogradWeightGrad (48 and 192 measured within noise of 96 on
// the training benchmarks).
const winoGradChunk = 96

// gradChunk adds the products of tiles [t0, t1) into du; a.dst is the
// output gradient.
//
// The output gradient's transform reuses the input transform: a tile's
// outputs are the 2x2 centre of its 4x4 input patch, and with the patch
// D holding dY there and zeros elsewhere, B^T D B is A dY A^T with its
// rows and columns permuted and signed. In one dimension
// B^T [0, y0, y1, 0] = [-y1, y0+y1, y1-y0, y0] while
// A [y0, y1] = [y0, y0+y1, y0-y1, -y1], so (A dY A^T)[i][j] =
// s_i s_j (B^T D B)[p_i][p_j] with p = (3, 1, 2, 0) and s = (1, 1, -1, 1);
// the GEMM of position e = 4i+j reads row 4p_i+p_j and scales by s_i s_j.
func (a *winoArgs) gradChunk(t0, t1 int, du []float32) {
	sc := winoPool.Get().(*winoScratch)
	nt := t1 - t0
	cin, cout := a.cin, a.cout
	is, os := nt*cin+winoPad, nt*cout+winoPad
	if cap(sc.zero) < max(cin, cout) {
		sc.zero = make([]float32, max(cin, cout))
	}
	im := cur.Load()
	a.transformIn(im, sc, &sc.v, t0, t1, is, false)
	g := winoArgs{src: a.dst, cin: cout, h: a.h, w: a.w, th: a.th, tw: a.tw, inner: true}
	g.transformIn(im, sc, &sc.mm, t0, t1, os, false)
	perm, sign := [4]int{3, 1, 2, 0}, [4]float32{1, 1, -1, 1}
	plane := cin * cout
	for e := range 16 {
		i, j := e/4, e%4
		f := 4*perm[i] + perm[j]
		gemm(1, true, false, cin, cout, nt, sign[i]*sign[j], sc.v[e*is:], cin, sc.mm[f*os:], cout, 1, du[e*plane:], cout, nil, nil, false)
	}
	winoPool.Put(sc)
}

// WinogradWeightsGrad is the adjoint of WinogradWeights: given du, the
// gradient of the transformed weights ([16][cin][cout], as
// Conv3x3WinogradWeightGrad accumulates it), it writes the gradient of the
// [9*cin, cout] weights, dw[((kh*3+kw)*cin+ci)*cout+co] = (G^T du G)[kh][kw]
// of the pair (ci, co), over dw's first 9*cin*cout values.
func WinogradWeightsGrad(du []float32, cin, cout int, dw []float32) {
	if cin < 0 || cout < 0 {
		panic(fmt.Sprintf("kernels: WinogradWeightsGrad: negative size cin=%d cout=%d", cin, cout))
	}
	if len(du) < 16*cin*cout {
		panic(fmt.Sprintf("kernels: WinogradWeightsGrad: du has %d values, want %d", len(du), 16*cin*cout))
	}
	if len(dw) < 9*cin*cout {
		panic(fmt.Sprintf("kernels: WinogradWeightsGrad: output has %d values, want %d", len(dw), 9*cin*cout))
	}
	plane := cin * cout
	for ci := range cin {
		for co := range cout {
			var u [4][4]float32
			for e := range 16 {
				u[e/4][e%4] = du[e*plane+ci*cout+co]
			}
			// t = G^T u (3x4), then g = t G (3x3).
			var t [3][4]float32
			for c := range 4 {
				s := (u[1][c] + u[2][c]) / 2
				t[0][c] = u[0][c] + s
				t[1][c] = (u[1][c] - u[2][c]) / 2
				t[2][c] = s + u[3][c]
			}
			for r := range 3 {
				s := (t[r][1] + t[r][2]) / 2
				g := [3]float32{t[r][0] + s, (t[r][1] - t[r][2]) / 2, s + t[r][3]}
				for c, v := range g {
					dw[((r*3+c)*cin+ci)*cout+co] = v
				}
			}
		}
	}
}
