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
	conv3x3WinogradWeightGrad(src, batch, cin, h, w, dy, cout, du, false)
}

func conv3x3WinogradWeightGrad(src []float32, batch, cin, h, w int, dy []float32, cout int, du []float32, bf16 bool) {
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
		a.gradChunk(t0, min(t0+winoGradChunk, tiles), du, bf16)
	}
}

// Conv3x3WinogradWeightGradBF16 is Conv3x3WinogradWeightGrad with the 16
// products over tiles in bfloat16: per chunk of winoGradChunk tiles the
// transformed input and output gradient (computed in float32) are rounded
// to bfloat16, their products summed in float32 (VDPBF16PS with AVX-512
// BF16, the portable code in its order elsewhere; the two give the same
// bits), and the chunk's sums added into du in float32. cin and cout must
// be multiples of 16.
func Conv3x3WinogradWeightGradBF16(src []float32, batch, cin, h, w int, dy []float32, cout int, du []float32) {
	if cin%16 != 0 || cout%16 != 0 {
		panic(fmt.Sprintf("kernels: Conv3x3WinogradWeightGradBF16: cin=%d and cout=%d must be multiples of 16", cin, cout))
	}
	conv3x3WinogradWeightGrad(src, batch, cin, h, w, dy, cout, du, true)
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
func (a *winoArgs) gradChunk(t0, t1 int, du []float32, bf16 bool) {
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
	if bf16 {
		a.gradChunkBF16(im, sc, nt, is, os, du)
		winoPool.Put(sc)
		return
	}
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

// gradChunkBF16 is gradChunk's products in bfloat16, given the chunk's nt
// transformed input rows in sc.v (row stride is) and transformed output
// gradients in sc.mm (row stride os): per position e, the rows of both
// are interleaved in k pairs of tiles (pairRows; a zero row pads an odd
// nt), V_e^T as the pair rows of A and dM_e, negated where gradChunk's
// permutation has the sign -1, as B packed in strips, and their product
// is added into du's plane e by the kernels' residual (c = res = du).
func (a *winoArgs) gradChunkBF16(im *impl, sc *winoScratch, nt, is, os int, du []float32) {
	cin, cout := a.cin, a.cout
	perm, sign := [4]int{3, 1, 2, 0}, [4]uint32{0, 0, 0x80008000, 0}
	kp, full := (nt+1)/2, nt/2
	nr := bf16StripWidth(cout)
	var ts *bf16TileSet
	for _, t := range im.bf16 {
		if t.nr == nr && cout%nr == 0 {
			ts = t
		}
	}
	strips := (cout + nr - 1) / nr
	sc.ab = grow16(sc.ab, kp*2*cin)
	sc.bb = grow16(sc.bb, kp*2*strips*nr)
	zero := sc.zero[:max(cin, cout)]
	plane := cin * cout
	for e := range 16 {
		i, j := e/4, e%4
		f := 4*perm[i] + perm[j]
		mask := sign[i] ^ sign[j]
		v, m := sc.v[e*is:], sc.mm[f*os:]
		pairRows(im, sc.ab, v, zero, cin, cin, full, 0)
		if full < kp {
			pairRows(im, sc.ab[full*2*cin:], v[2*full*cin:], zero, cin, 0, 1, 0)
		}
		for s := range strips {
			s0 := s * nr
			cols := min(nr, cout-s0)
			b := sc.bb[s*kp*nr*2:]
			if cols == nr && strips == 1 {
				pairRows(im, b, m, zero, cout, cout, full, mask)
			} else {
				for p := range full {
					pairRows(im, b[p*nr*2:], m[2*p*cout+s0:], zero, cols, cout, 1, mask)
					clear(b[p*nr*2+2*cols : (p+1)*nr*2]) // a partial strip's padding
				}
			}
			if full < kp {
				pairRows(im, b[full*nr*2:], m[2*full*cout+s0:], zero, cols, 0, 1, mask)
				clear(b[full*nr*2+2*cols : (full+1)*nr*2])
			}
		}
		c := du[e*plane : (e+1)*plane]
		if ts == nil {
			pairsProductGeneric(kp, sc.ab, cin, sc.bb, nr, cout, c)
			continue
		}
		for i0 := 0; i0 < cin; i0 += ts.mr {
			kern := ts.kernT
			if r := cin - i0; r < ts.mr {
				kern = ts.tailT[r]
			}
			for s0 := 0; s0 < cout; s0 += nr {
				cp := &c[i0*cout+s0]
				kern(kp, &sc.ab[2*i0], 2*cin, &sc.bb[(s0/nr)*kp*nr*2], cp, cout, nil, cp, kResidual)
			}
		}
	}
}

// pairRows interleaves rows in bfloat16 for the k pairs of the BF16
// kernels: for p < pairs and j < n, dst[2*(p*n+j)] = ToBF16(src[2p*ld+j])
// and dst[2*(p*n+j)+1] = ToBF16(src[(2p+1)*ld+j]), or ToBF16(zero[j])
// when ld is 0 (one row and a zero row: pairs must then be 1), each pair
// of values XORed with mask (0x80008000 negates both).
func pairRows(im *impl, dst []uint16, src, zero []float32, n, ld, pairs int, mask uint32) {
	if im.bf16 != nil && n%16 == 0 && ld == n && pairs > 0 {
		pairRowsBF16AVX512(&dst[0], &src[0], n, pairs, mask)
		return
	}
	for p := range pairs {
		r0, r1 := src[2*p*ld:2*p*ld+n], zero[:n]
		if ld != 0 {
			r1 = src[(2*p+1)*ld : (2*p+1)*ld+n]
		}
		d := dst[2*p*n : 2*(p+1)*n]
		for j := range n {
			d[2*j] = ToBF16(r0[j]) ^ uint16(mask)
			d[2*j+1] = ToBF16(r1[j]) ^ uint16(mask>>16)
		}
	}
}

// pairsProductGeneric is the portable form of the pair-row kernels (see
// bf16TileSet.kernT) with the residual c: c (m x n, row-major) += A^T B
// with pair p of row i of A at a[p*2*m+2*i:], B packed in strips of nr
// columns, kp pairs, summed in VDPBF16PS's order (see
// bf16Args.genericRows) before the addition to c.
func pairsProductGeneric(kp int, a []uint16, m int, b []uint16, nr, n int, c []float32) {
	for i := range m {
		for j := range n {
			s, jj := j/nr, j%nr
			col := b[s*kp*nr*2:]
			var acc float32
			for p := range kp {
				aw, bw := a[p*2*m+2*i:], col[(p*nr+jj)*2:]
				acc = ftz(acc + dazBF16(aw[1])*dazBF16(bw[1]))
				acc = ftz(acc + dazBF16(aw[0])*dazBF16(bw[0]))
			}
			c[i*n+j] = acc + c[i*n+j]
		}
	}
}
