package kernels

import (
	"fmt"
	"unsafe"
)

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
	m := checkWeightGrad("Conv3x3WinogradWeightGrad", batch, cin, h, w, cout, src, dy, du, 16)
	if m == 0 || cin == 0 || cout == 0 {
		return
	}
	a := winoArgs{src: src, cin: cin, h: h, w: w, th: (h + 1) / 2, tw: (w + 1) / 2, cout: cout, dst: dy}
	tiles := batch * a.th * a.tw
	for t0 := 0; t0 < tiles; t0 += winoGradChunk {
		a.gradChunk(t0, min(t0+winoGradChunk, tiles), tiles, du, bf16)
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

// winoGradAhead is how many tiles ahead gradIn and gradPairsBF16
// prefetch the image: the weight gradient reads a layer's input long
// after the forward pass wrote it, from memory rather than cache, and
// the transform waited on the loads (it took three times as long per
// tile as the forward's in the training step of the 32x4 Connect Four
// net). On a 64-sample slice whose input is out of cache, prefetching 8
// tiles ahead cut the weight gradient's CPU time by 10-22% (4 and 16
// within a few percent of 8, 2 less; AVX-512 EPYC, docs/BENCHMARKS.md).
const winoGradAhead = 8

// gradChunk adds the products of tiles [t0, t1) of tiles into du; a.dst
// is the output gradient. Per position e of the 4x4 tile, the GEMM
// reads the tiles' transformed input V_e (gradIn) and the transformed
// output gradient dM_e = (A dY A^T)_e (winoGradOut: 4 non-zero inputs,
// 18 additions, against 16 and 32 of the input transform that computed
// it before on the patch with zeros around dY, in the same order, so the
// values are the same).
func (a *winoArgs) gradChunk(t0, t1, tiles int, du []float32, bf16 bool) {
	sc := winoPool.Get().(*winoScratch)
	nt := t1 - t0
	cin, cout := a.cin, a.cout
	is, os := nt*cin+winoPad, nt*cout+winoPad
	if cap(sc.zero) < max(cin, cout) {
		sc.zero = make([]float32, max(cin, cout))
	}
	im := cur.Load()
	if bf16 {
		a.gradChunkBF16(im, sc, t0, t1, tiles, du)
		winoPool.Put(sc)
		return
	}
	a.gradIn(im, sc, t0, t1, tiles, is)
	sc.mm = grow(sc.mm, 16*os)
	a.gradOut(im, sc, t0, t1, os)
	plane := cin * cout
	for e := range 16 {
		if !directGemm(im, true, cin, cout, nt, sc.v[e*is:], cin, sc.mm[e*os:], cout, true, du[e*plane:], cout) {
			gemm(1, true, false, cin, cout, nt, 1, sc.v[e*is:], cin, sc.mm[e*os:], cout, 1, du[e*plane:], cout, nil, nil, false)
		}
	}
	winoPool.Put(sc)
}

// gradIn writes the transformed input patches of tiles [t0, t1) into
// sc.v ([16][nt*cin] at row stride is), prefetching the image
// winoGradAhead tiles ahead (of tiles in all) where the SIMD transforms
// read it in place.
func (a *winoArgs) gradIn(im *impl, sc *winoScratch, t0, t1, tiles, is int) {
	cin := a.cin
	if !im.avx2Loops || cin%8 != 0 {
		a.transformIn(im, sc, &sc.v, t0, t1, is, false)
		return
	}
	sc.v = grow(sc.v, 16*is)
	tab, per := a.table(sc), a.th*a.tw
	lines := (4*cin + 63) / 64
	var taps [16]*float32 // on the stack: no write barriers
	var ahead [4]*float32
	for t := t0; t < t1; t++ {
		if f := t + winoGradAhead; f < tiles {
			centre(tab, f/per, f%per, a.src, a.h*a.w, cin, &ahead, sc.zero)
			prefetch4(&ahead, lines)
		}
		a.taps(tab, t/per, t%per, &taps, sc.zero[:cin])
		if im.avx512Loops && cin%16 == 0 {
			winoGatherInAVX512(&sc.v[(t-t0)*cin], is, &taps, cin)
		} else {
			winoGatherInAVX2(&sc.v[(t-t0)*cin], is, &taps, cin)
		}
	}
}

// gradOut writes the transformed output gradients dM = A dY A^T of tiles
// [t0, t1) into sc.mm ([16][nt*cout] at row stride os).
func (a *winoArgs) gradOut(im *impl, sc *winoScratch, t0, t1, os int) {
	cout := a.cout
	tab, per := a.table(sc), a.th*a.tw
	var y [4]*float32
	for t := t0; t < t1; t++ {
		centre(tab, t/per, t%per, a.dst, a.h*a.w, cout, &y, sc.zero)
		winoGradOut(im, sc.mm[(t-t0)*cout:], os, &y, cout)
	}
}

// centre points y[q] at the ch channels of pixel q (2*row+column) of the
// output tile (the 2x2 centre of the input patch) of tile position p of
// image n of the NHWC batch img (hw pixels per image), or at zero where
// the pixel lies outside the image; tab is winoArgs.table's.
func centre(tab []int32, n, p int, img []float32, hw, ch int, y *[4]*float32, zero []float32) {
	base := n * hw
	for q, o := range tab[20*p+16:][:4] {
		if o < 0 {
			y[q] = &zero[0]
		} else {
			y[q] = &img[(base+int(o))*ch]
		}
	}
}

// winoGradOut applies the transform of the output gradient to n columns:
// for each column j, the 2x2 values y[q][j] (q = 2*row+column) become
// v[e*vs+j] = (A dY A^T)[e] (e = 4*i+c), first down the columns (t_i =
// y0, y0+y1, y0-y1, 0-y1), then along the rows (t_i0, t_i0+t_i1,
// t_i0-t_i1, 0-t_i1). These are, up to the sign of zeros, the values
// the input transform computes on the 4x4 patch holding dY in its centre
// and zeros around (each addition there with a zero is exact, and the
// others are the same additions of the same values, up to the exact
// negations of its row and column permutation; see gradChunk before
// issue 42's weight-gradient work). winoGradOutAVX2 and
// winoGradOutAVX512 do the same operations in the same order.
func winoGradOut(im *impl, v []float32, vs int, y *[4]*float32, n int) {
	// Whole vectors of one width (every training net's case): the SIMD
	// loop straight, as simd below would call it, without the closure.
	switch {
	case n > 0 && im.avx512Loops && n%16 == 0:
		winoGradOutAVX512(&v[0], vs, y, n)
		return
	case n > 0 && !im.avx512Loops && im.avx2Loops && n%8 == 0:
		winoGradOutAVX2(&v[0], vs, y, n)
		return
	}
	j := 0
	simd := func(k int, f func(v *float32, vs int, src *[4]*float32, n int)) {
		var p [4]*float32
		for q := range 4 {
			p[q] = (*float32)(unsafe.Add(unsafe.Pointer(y[q]), 4*j))
		}
		f(&v[j], vs, &p, k)
		j += k
	}
	if im.avx512Loops && n >= 16 {
		simd(n/16*16, winoGradOutAVX512)
	}
	if im.avx2Loops && n-j >= 8 {
		simd((n-j)/8*8, winoGradOutAVX2)
	}
	if j == n {
		return
	}
	y0, y1, y2, y3 := unsafe.Slice(y[0], n), unsafe.Slice(y[1], n), unsafe.Slice(y[2], n), unsafe.Slice(y[3], n)
	for ; j < n; j++ {
		var t [4][2]float32
		for c, d := range [2][2]float32{{y0[j], y2[j]}, {y1[j], y3[j]}} {
			t[0][c] = d[0]
			t[1][c] = d[0] + d[1]
			t[2][c] = d[0] - d[1]
			t[3][c] = 0 - d[1]
		}
		for i := range 4 {
			v[(4*i)*vs+j] = t[i][0]
			v[(4*i+1)*vs+j] = t[i][0] + t[i][1]
			v[(4*i+2)*vs+j] = t[i][0] - t[i][1]
			v[(4*i+3)*vs+j] = 0 - t[i][1]
		}
	}
}

// WinogradWeightsGrad is the adjoint of WinogradWeights: given du, the
// gradient of the transformed weights ([16][cin][cout], as
// Conv3x3WinogradWeightGrad accumulates it), it writes the gradient of the
// [9*cin, cout] weights, dw[((kh*3+kw)*cin+ci)*cout+co] = (G^T du G)[kh][kw]
// of the pair (ci, co), over dw's first 9*cin*cout values.
func WinogradWeightsGrad(du []float32, cin, cout int, dw []float32) {
	checkTransform("WinogradWeightsGrad", cin, cout, du, 16, "du", dw, 9)
	// Per input channel and block of up to 64 output channels, each
	// step a loop down contiguous columns, as in WinogradWeights (pair by
	// pair, the 16 values a plane apart fell on the same cache sets and
	// the loop took 4% of the 64x5 Connect Four net's bfloat16 step).
	// Every value is computed by the same operations in the same order as
	// pair by pair.
	plane := cin * cout
	const blk = 64
	var t [3][4][blk]float32 // t = G^T u (3x4 per column)
	for ci := range cin {
		for c0 := 0; c0 < cout; c0 += blk {
			nb := min(blk, cout-c0)
			for c := range 4 {
				o := c*plane + ci*cout + c0
				u0, u1 := du[o:][:nb], du[o+4*plane:][:nb]
				u2, u3 := du[o+8*plane:][:nb], du[o+12*plane:][:nb]
				t0, t1, t2 := t[0][c][:nb], t[1][c][:nb], t[2][c][:nb]
				for j := range nb {
					s := (u1[j] + u2[j]) / 2
					t0[j] = u0[j] + s
					t1[j] = (u1[j] - u2[j]) / 2
					t2[j] = s + u3[j]
				}
			}
			// g = t G (3x3).
			for r := range 3 {
				a, b, c, d := t[r][0][:nb], t[r][1][:nb], t[r][2][:nb], t[r][3][:nb]
				o := (r*3*cin+ci)*cout + c0
				g0, g1, g2 := dw[o:][:nb], dw[o+plane:][:nb], dw[o+2*plane:][:nb]
				for j := range nb {
					s := (b[j] + c[j]) / 2
					g0[j] = a[j] + s
					g1[j] = (b[j] - c[j]) / 2
					g2[j] = s + d[j]
				}
			}
		}
	}
}

// gradChunkBF16 is gradChunk's products in bfloat16: per position e,
// the chunk's nt transformed input rows V_e and output gradient rows
// dM_e rounded to bfloat16 and interleaved in k pairs of tiles (a zero
// tile pads an odd nt), V_e^T as the pair rows of A (sc.ab, [16][kp][cin]
// pairs) and dM_e as B packed in strips of nr columns (sc.bb,
// [16][strips][kp][nr] pairs), and their product added into du's plane
// e by the kernels' residual (c = res = du). With AVX-512 BF16 the
// transforms write the pairs directly (winoGatherInPairsBF16AVX512,
// winoGradOutPairsBF16AVX512: the float32 rows and the interleaving
// pass cost 11% of the 64x5 Connect Four net's bfloat16 step); elsewhere
// they run in float32 into sc.v and sc.mm and pairRows rounds and
// interleaves them: the same values.
func (a *winoArgs) gradChunkBF16(im *impl, sc *winoScratch, t0, t1, tiles int, du []float32) {
	cin, cout, nt := a.cin, a.cout, t1-t0
	kp := (nt + 1) / 2
	nr := bf16StripWidth(cout)
	if im.amx && cin%16 == 0 && cout%nr == 0 {
		a.amxGradChunk(im, sc, t0, t1, tiles, du)
		return
	}
	strips := (cout + nr - 1) / nr
	as, bs := kp*2*cin+2*winoPad, kp*2*strips*nr+2*winoPad // row strides of sc.ab, sc.bb
	sc.ab = grow16(sc.ab, 16*as)
	sc.bb = grow16(sc.bb, 16*bs)
	zero := sc.zero[:max(cin, cout)]
	if im.bf16 != nil && im.avx512Loops && cin%16 == 0 && cout%16 == 0 {
		a.gradPairsBF16(sc, t0, t1, tiles, as, bs)
	} else {
		is, os := nt*cin+winoPad, nt*cout+winoPad
		a.gradIn(im, sc, t0, t1, tiles, is)
		sc.mm = grow(sc.mm, 16*os)
		a.gradOut(im, sc, t0, t1, os)
		pairOperands(im, 16, nt, cin, cout, sc.v, is, sc.mm, os, zero, sc.ab, as, sc.bb, bs)
	}
	pairProducts(im, 16, kp, cin, cout, sc.ab, as, sc.bb, bs, du)
}

// pairOperands rounds and interleaves the operands of the bfloat16
// weight-gradient products of npos positions over nt tiles: for each
// position e, the transformed input V_e (v's row e at stride is, nt
// tiles of cin values) as the pair rows of A (ab's row e at stride as,
// [kp][cin] pairs, kp = (nt+1)/2: a zero tile pads an odd nt) and the
// transformed output gradient dM_e (m's row e at stride os, nt tiles of
// cout values) as B packed in strips of bf16StripWidth(cout) columns
// (bb's row e at stride bs, [strips][kp][nr] pairs).
func pairOperands(im *impl, npos, nt, cin, cout int, v []float32, is int, m []float32, os int, zero []float32, ab []uint16, as int, bb []uint16, bs int) {
	kp, full := (nt+1)/2, nt/2
	nr := bf16StripWidth(cout)
	strips := (cout + nr - 1) / nr
	for e := range npos {
		v, m, ab, bb := v[e*is:], m[e*os:], ab[e*as:], bb[e*bs:]
		pairRows(im, ab, v, zero, cin, cin, full, 0)
		if full < kp {
			pairRows(im, ab[full*2*cin:], v[2*full*cin:], zero, cin, 0, 1, 0)
		}
		for s := range strips {
			s0 := s * nr
			cols := min(nr, cout-s0)
			b := bb[s*kp*nr*2:]
			if cols == nr && strips == 1 {
				pairRows(im, b, m, zero, cout, cout, full, 0)
			} else {
				for p := range full {
					pairRows(im, b[p*nr*2:], m[2*p*cout+s0:], zero, cols, cout, 1, 0)
					clear(b[p*nr*2+2*cols : (p+1)*nr*2]) // a partial strip's padding
				}
			}
			if full < kp {
				pairRows(im, b[full*nr*2:], m[2*full*cout+s0:], zero, cols, 0, 1, 0)
				clear(b[full*nr*2+2*cols : (full+1)*nr*2])
			}
		}
	}
}

// pairProducts adds, for each of npos positions e, the product of the
// pair rows of ab's row e (at stride as) transposed by the packed strips
// of bb's row e (at stride bs), kp pairs, into du's plane e ([cin][cout]),
// by the pair-row BF16 kernels (the kernels' residual, c = res = du) or
// their portable form.
func pairProducts(im *impl, npos, kp, cin, cout int, ab []uint16, as int, bb []uint16, bs int, du []float32) {
	nr := bf16StripWidth(cout)
	var ts *bf16TileSet
	for _, t := range im.bf16 {
		if t.nr == nr && cout%nr == 0 {
			ts = t
		}
	}
	plane := cin * cout
	for e := range npos {
		ab, bb := ab[e*as:], bb[e*bs:]
		c := du[e*plane : (e+1)*plane]
		if ts == nil {
			pairsProductGeneric(kp, ab, cin, bb, nr, cout, c)
			continue
		}
		for i0 := 0; i0 < cin; i0 += ts.mr {
			kern := ts.kernT
			if r := cin - i0; r < ts.mr {
				kern = ts.tailT[r]
			}
			for s0 := 0; s0 < cout; s0 += nr {
				cp := &c[i0*cout+s0]
				kern(kp, &ab[2*i0], 2*cin, &bb[(s0/nr)*kp*nr*2], cp, cout, nil, cp, kResidual)
			}
		}
	}
}

// gradPairsBF16 writes gradChunkBF16's operands for tiles [t0, t1) with
// the AVX-512 BF16 transforms: per pair of tiles, the input patches
// (prefetched as in gradIn) and the output gradients, into sc.ab and
// sc.bb at row strides as and bs. cin and cout are multiples of 16.
func (a *winoArgs) gradPairsBF16(sc *winoScratch, t0, t1, tiles, as, bs int) {
	cin, cout, nt := a.cin, a.cout, t1-t0
	kp := (nt + 1) / 2
	nr := bf16StripWidth(cout)
	tab, per := a.table(sc), a.th*a.tw
	lines := cin / 16
	zero := sc.zero[:max(cin, cout)]
	var taps [32]*float32 // on the stack: no write barriers
	var y [8]*float32
	var ahead [4]*float32
	for p := range kp {
		for x := range 2 {
			t := t0 + 2*p + x
			if t >= t1 { // an odd chunk's last pair: a zero tile
				for q := range 16 {
					taps[16*x+q] = &zero[0]
				}
				for q := range 4 {
					y[4*x+q] = &zero[0]
				}
				continue
			}
			if f := t + winoGradAhead; f < tiles {
				centre(tab, f/per, f%per, a.src, a.h*a.w, cin, &ahead, zero)
				prefetch4(&ahead, lines)
			}
			a.taps(tab, t/per, t%per, (*[16]*float32)(taps[16*x:]), zero[:cin])
			centre(tab, t/per, t%per, a.dst, a.h*a.w, cout, (*[4]*float32)(y[4*x:]), zero)
		}
		winoGatherInPairsBF16AVX512(&sc.ab[2*p*cin], as, &taps, cin)
		for s := 0; s*nr < cout; s++ {
			s0 := s * nr
			cols := min(nr, cout-s0)
			ys := y
			for q := range ys {
				if ys[q] != &zero[0] {
					ys[q] = (*float32)(unsafe.Add(unsafe.Pointer(ys[q]), 4*s0))
				}
			}
			o := s*kp*nr*2 + p*nr*2
			winoGradOutPairsBF16AVX512(&sc.bb[o], bs, &ys, cols)
			if cols < nr { // a partial strip's padding
				for e := range 16 {
					clear(sc.bb[e*bs+o+2*cols : e*bs+o+2*nr])
				}
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
