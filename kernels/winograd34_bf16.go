package kernels

import "fmt"

// F(3x4,3x3) Winograd with bfloat16 products (issue 42): the transforms of
// Conv3x3Winograd34 in float32, the 30 products over channels per chunk
// of tiles with the transformed image and the transformed weights rounded
// to bfloat16 and the products summed in float32 on the BF16 micro-kernels
// (GemmBiasActBF16's), as Conv3x3WinogradBF16 does for F(2x2). Rounding
// the transformed operands costs F(3x4) more than F(2x2): its transforms
// spread each rounding over more outputs with larger coefficients (up to
// 5 in B4, 8 in A4), so the error relative to the absolute sum of an
// output's products is about 3.7x F(2x2)'s on average and up to 1e-2
// (kernels/testdata/winotiles; the tests allow 5e-2, see
// TestConv3x3Winograd34BF16). Whether a training run tolerates it is
// measured, not assumed (docs/RESULTS.md §11).

// Winograd34BF16 holds the F(3x4) transformed weights of a 3x3
// convolution (see WinogradWeights34) rounded to bfloat16 and packed for
// the BF16 kernels, one matrix U_e of cin x cout per position e of the
// 5x6 transformed tile. It is read-only after packing and safe for
// concurrent use.
type Winograd34BF16 struct {
	cin, cout int
	u         [w34Pos]*BF16Matrix
}

// PackWinograd34BF16 packs the transformed weights u (30*cin*cout values,
// as WinogradWeights34 writes them) for Conv3x3Winograd34BF16.
func PackWinograd34BF16(u []float32, cin, cout int) *Winograd34BF16 {
	return RepackWinograd34BF16(nil, u, cin, cout)
}

// RepackWinograd34BF16 is PackWinograd34BF16 into wb's memory when wb
// (which may be nil) holds weights of the same shape, else into new
// memory (see RepackBF16); it returns the packed weights.
func RepackWinograd34BF16(wb *Winograd34BF16, u []float32, cin, cout int) *Winograd34BF16 {
	if cin < 0 || cout < 0 || len(u) < w34Pos*cin*cout {
		panic(fmt.Sprintf("kernels: PackWinograd34BF16: %d values for cin=%d cout=%d, want 30*cin*cout", len(u), cin, cout))
	}
	if wb == nil || wb.cin != cin || wb.cout != cout {
		wb = &Winograd34BF16{cin: cin, cout: cout}
	}
	plane := cin * cout
	for e := range w34Pos {
		wb.u[e] = RepackBF16(wb.u[e], u[e*plane:(e+1)*plane], cin, cout)
	}
	return wb
}

// Conv3x3Winograd34BF16 is Conv3x3Winograd34 with the 30 products over
// channels in bfloat16: the transformed image and the transformed weights
// u (PackWinograd34BF16) are rounded to bfloat16 and the products summed
// in float32; the transforms run in float32. cin must be even. It
// allocates nothing in steady state except when it splits over threads.
func Conv3x3Winograd34BF16(src []float32, batch, cin, h, w int, u *Winograd34BF16, bias, residual []float32, relu bool, dst []float32) {
	checkWinograd34BF16(u, cin)
	winograd34(0, w34Args{ub: u}, "Conv3x3Winograd34BF16", src, batch, cin, h, w, u.cout, bias, residual, relu, dst)
}

// Conv3x3Winograd34BF16Moments is Conv3x3Winograd34Moments with the
// products in bfloat16, as Conv3x3Winograd34BF16 computes them.
func Conv3x3Winograd34BF16Moments(src []float32, batch, cin, h, w int, u *Winograd34BF16, shift []float32, s1, s2 []float64, dst []float32) {
	checkWinograd34BF16(u, cin)
	w34Moments(w34Args{ub: u}, "Conv3x3Winograd34BF16Moments", src, batch, cin, h, w, u.cout, shift, s1, s2, dst)
}

func checkWinograd34BF16(u *Winograd34BF16, cin int) {
	if u == nil {
		panic("kernels: Conv3x3Winograd34BF16: nil weights (see PackWinograd34BF16)")
	}
	if u.cin != cin || cin%2 != 0 {
		panic(fmt.Sprintf("kernels: Conv3x3Winograd34BF16: weights for %d input channels, image has %d (must be even)", u.cin, cin))
	}
}

// productsBF16 computes the chunk's 30 products in bfloat16: row e of the
// transformed input sc.v (nt tiles of cin values at row stride is) is
// rounded into sc.vb (unless rounded: the gather wrote sc.vb) and
// multiplied by a.ub's U_e into sc.mm's row e (row stride os).
func (a *w34Args) productsBF16(im *impl, sc *w34Scratch, nt, is, os int, rounded bool) {
	cin, cout := a.cin, a.cout
	sc.vb = grow16(sc.vb, w34Pos*is)
	if im.amx && amxFits(a.ub.u[0]) {
		p := &sc.amx.plan
		p.start(nt, a.ub.u[0], cin, cout, false)
		for e := range w34Pos {
			if !rounded {
				convertBF16(im, sc.vb[e*is:e*is+nt*cin], sc.v[e*is:e*is+nt*cin])
			}
			p.addGemm(nt, sc.vb[e*is:], a.ub.u[e], sc.mm[e*os:])
		}
		p.run()
		return
	}
	ts := scratchPool.Get().(*scratch)
	for e := range w34Pos {
		if !rounded {
			convertBF16(im, sc.vb[e*is:e*is+nt*cin], sc.v[e*is:e*is+nt*cin])
		}
		g := bf16Args{im: im, b: a.ub.u[e], c: sc.mm[e*os:], ldc: cout}
		g.rows(0, nt, sc.vb[e*is:], cin, ts)
	}
	scratchPool.Put(ts)
}

// Conv3x3Winograd34WeightGradBF16 is Conv3x3Winograd34WeightGrad with the
// 30 products over tiles in bfloat16, as Conv3x3WinogradWeightGradBF16
// computes F(2x2)'s: per chunk of w34GradChunk tiles the transformed input
// and output gradient (computed in float32 by the loops of
// Conv3x3Winograd34WeightGrad) are rounded to bfloat16 and interleaved
// in pairs of tiles (pairOperands), their products summed in float32
// (VDPBF16PS with AVX-512 BF16, the portable code in its order elsewhere:
// the same bits) and the chunk's sums added into du in float32. cin and
// cout must be multiples of 16. It runs on the calling goroutine alone
// and allocates nothing in steady state.
func Conv3x3Winograd34WeightGradBF16(src []float32, batch, cin, h, w int, dy []float32, cout int, du []float32) {
	const fn = "Conv3x3Winograd34WeightGradBF16"
	if cin%16 != 0 || cout%16 != 0 {
		panic(fmt.Sprintf("kernels: %s: cin=%d and cout=%d must be multiples of 16", fn, cin, cout))
	}
	a, tiles, sc := w34GradStart(fn, src, batch, cin, h, w, dy, cout, du)
	if sc == nil {
		return
	}
	defer w34Pool.Put(sc)
	im := cur.Load()
	nr := bf16StripWidth(cout)
	if im.amx && cout%nr == 0 {
		amxWeightGrad34(im, &a, sc, tiles, du)
		return
	}
	strips := (cout + nr - 1) / nr
	for t0 := 0; t0 < tiles; t0 += w34GradChunk {
		t1 := min(t0+w34GradChunk, tiles)
		nt := t1 - t0
		kp := (nt + 1) / 2
		is, os := nt*cin+winoPad, nt*cout+winoPad
		as, bs := kp*2*cin+2*winoPad, kp*2*strips*nr+2*winoPad
		a.gatherIn(im, sc, t0, t1, is)
		sc.mm = grow(sc.mm, w34Pos*os)
		a.gradOut(im, sc, t0, t1, os)
		sc.ab, sc.bb = grow16(sc.ab, w34Pos*as), grow16(sc.bb, w34Pos*bs)
		pairOperands(im, w34Pos, nt, cin, cout, sc.v, is, sc.mm, os, sc.zero, sc.ab, as, sc.bb, bs)
		pairProducts(im, w34Pos, kp, cin, cout, sc.ab, as, sc.bb, bs, du)
	}
}
