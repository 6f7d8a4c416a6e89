package kernels

import "fmt"

// The fused 3x3 convolution (Conv3x3BiasAct).
//
// A convolution through Im2Col3x3 + GemmBiasAct writes the whole im2col
// matrix (9 times the input) and reads it back: at batch 256 that is tens of
// megabytes per layer through DRAM, and the copy runs on one goroutine while
// the GEMM runs on all of them. Here each goroutine expands only convBlock
// rows at a time into its own scratch buffer, which stays in L1/L2, and
// multiplies them at once, so the im2col matrix never leaves the core's
// caches and its construction is split across threads with the GEMM.
// Results are identical to Im2Col3x3 + GemmBiasAct on the same
// implementation (same kernels, same summation order).

// convBlockBytes is the target size of one expanded block of im2col rows:
// small enough to stay in L1/L2 next to the weights while the micro-kernels
// read it.
const convBlockBytes = 32 << 10

// convArgs describes the image side of a fused convolution.
type convArgs struct {
	src      []float32
	ch, h, w int
}

// Conv3x3BiasAct computes a 3x3 "same" convolution (stride 1, zero padding
// 1) of the NHWC batch src (batch*h*w*cin values) followed by the fused
// epilogue of GemmBiasAct:
//
//	dst = act(Im2Col3x3(src) * wts + bias + residual)
//
// with wts the [9*cin, cout] weight matrix of the package documentation,
// dst and residual NHWC [batch*h*w, cout] (residual may be nil or exactly
// dst; bias may be nil, else len >= cout) and act max(x, 0) when relu is
// set. It equals Im2Col3x3 followed by GemmBiasAct(batch*h*w, cout, 9*cin,
// cols, 9*cin, wts, cout, bias, residual, relu, dst, cout) up to float32
// rounding, without materialising the im2col matrix. dst must not overlap
// src or wts. It allocates nothing in steady state.
func Conv3x3BiasAct(src []float32, batch, cin, h, w int, wts []float32, cout int, bias, residual []float32, relu bool, dst []float32) {
	conv3x3BiasAct(0, src, batch, cin, h, w, wts, cout, bias, residual, relu, dst)
}

// conv3x3BiasAct is Conv3x3BiasAct on a thread budget (see Team).
func conv3x3BiasAct(limit int, src []float32, batch, cin, h, w int, wts []float32, cout int, bias, residual []float32, relu bool, dst []float32) {
	if batch < 0 || cin < 0 || h < 0 || w < 0 || cout < 0 {
		panic(fmt.Sprintf("kernels: Conv3x3BiasAct: negative size batch=%d cin=%d h=%d w=%d cout=%d", batch, cin, h, w, cout))
	}
	m := batch * h * w
	if len(src) < m*cin {
		panic(fmt.Sprintf("kernels: Conv3x3BiasAct: image has %d values, want %d", len(src), m*cin))
	}
	if len(wts) < 9*cin*cout {
		panic(fmt.Sprintf("kernels: Conv3x3BiasAct: weights have %d values, want %d", len(wts), 9*cin*cout))
	}
	if len(dst) < m*cout {
		panic(fmt.Sprintf("kernels: Conv3x3BiasAct: output has %d values, want %d", len(dst), m*cout))
	}
	if bias != nil && len(bias) < cout {
		panic(fmt.Sprintf("kernels: Conv3x3BiasAct: len(bias)=%d < cout=%d", len(bias), cout))
	}
	if residual != nil && len(residual) < m*cout {
		panic(fmt.Sprintf("kernels: Conv3x3BiasAct: residual has %d values, want %d", len(residual), m*cout))
	}
	if m == 0 || cout == 0 {
		return
	}
	k := 9 * cin
	cv := convArgs{src: src, ch: cin, h: h, w: w}
	gemmConv(limit, m, cout, k, wts, cout, bias, residual, relu, dst, cout, cv)
}

// convRows computes rows [lo, hi) of the convolution g describes (g.a is
// unset: the rows of A are expanded block by block into scratch).
func (g *gemmArgs) convRows(lo, hi int) {
	sc := scratchPool.Get().(*scratch)
	mr := 4
	if g.ts != nil {
		mr = g.ts.mr
	}
	blk := max(mr, convBlockBytes/4/max(g.k, 1)/mr*mr)
	if need := min(blk, hi-lo) * g.k; cap(sc.cols) < need {
		sc.cols = make([]float32, need)
	}
	cv := g.conv
	sub := *g
	sub.conv = convArgs{}
	sub.lda = g.k
	for r0 := lo; r0 < hi; r0 += blk {
		r1 := min(r0+blk, hi)
		cols := sc.cols[:(r1-r0)*g.k]
		im2colRows(cv.src, cv.ch, cv.h, cv.w, r0, r1, g.k, cols)
		sub.a = cols
		sub.c = g.c[r0*g.ldc:]
		if g.residual != nil {
			sub.residual = g.residual[r0*g.ldc:]
		}
		sub.runRows(0, r1-r0)
	}
	scratchPool.Put(sc)
}

// im2colRows writes rows [r0, r1) of the im2col matrix of the NHWC batch
// src (see Im2Col3x3) into dst, (r1-r0) rows of rowLen >= 9*ch values, the
// values after the first 9*ch of a row set to zero. Where the three
// horizontal taps of a kernel row are all inside the image they are one
// contiguous run of 3*ch values in src and are copied at once.
func im2colRows[T float32 | uint16](src []T, ch, h, w, r0, r1, rowLen int, dst []T) {
	hw := h * w
	for r := r0; r < r1; r++ {
		n, p := r/hw, r%hw
		y, x := p/w, p%w
		row := dst[(r-r0)*rowLen : (r-r0+1)*rowLen]
		clear(row[9*ch:])
		img := src[n*hw*ch : (n+1)*hw*ch]
		for kh := range 3 {
			yy := y + kh - 1
			d := row[kh*3*ch : (kh+1)*3*ch]
			if yy < 0 || yy >= h {
				clear(d)
				continue
			}
			o := (yy*w + x - 1) * ch
			if x >= 1 && x+1 < w {
				copy(d, img[o:o+3*ch])
				continue
			}
			for kw := range 3 {
				xx := x + kw - 1
				dd := d[kw*ch : (kw+1)*ch]
				if xx < 0 || xx >= w {
					clear(dd)
					continue
				}
				copy(dd, img[o+kw*ch:o+(kw+1)*ch])
			}
		}
	}
}
