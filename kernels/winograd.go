package kernels

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// Winograd F(2x2, 3x3) convolution (Conv3x3Winograd), an alternative to
// the im2col + GEMM path of Conv3x3BiasAct for the same 3x3 "same"
// convolution.
//
// The output is cut into 2x2 tiles (the last row or column of tiles runs
// past the image when h or w is odd; those outputs are computed and
// dropped). Each tile needs the 4x4 input patch around it, d, with zeros
// outside the image. With the matrices of Lavin and Gray (2015)
//
//	B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//	G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//	A^T = [1 1 1 0; 0 1 -1 -1]
//
// a tile of one output channel is A^T [sum over cin of (G g G^T) .* (B^T d B)] A,
// g being the 3x3 kernel of that (cin, cout) pair. Per position e of the
// 4x4 transformed tile this is one matrix product over channels,
// M_e[tile][cout] = V_e[tile][cin] * U_e[cin][cout], so the convolution is 16
// GEMMs with K = cin instead of one with K = 9*cin: 16 multiply-adds per
// channel pair and tile of 4 outputs instead of 36, 2.25x fewer (1.97x on
// a 6x7 board, whose 42 cells take 12 tiles). The transforms are linear
// maps of the 16 patch values (B^T d B) and the 16 products (A^T m A);
// written as the Kronecker matrices winoBT2 (16x16) and winoAT2 (4x16)
// they are GEMMs too, over all tiles and channels of a chunk at once, so
// they run on the SIMD micro-kernels (as 1-D transforms in scalar Go they
// took 50-70% of the time and made Winograd slower than im2col). The
// transforms round in float32 on their own: results agree with the direct
// convolution to about 2e-7 of the absolute sum of an output's products
// (the tests allow 1e-5), not to the last bit, and not bit for bit with
// Conv3x3BiasAct.
//
// Work is split into chunks of winoChunk tiles; one goroutine gathers a
// chunk's patches, runs its 18 GEMMs and stores its outputs, so the
// transformed tiles stay in the core's caches. Chunks are shared out over
// the threads that other calls in flight leave idle, like gemm does.

// winoChunk is the number of tiles one goroutine handles at a time: with
// 64 channels its four scratch matrices (patches, transformed patches,
// products, output tiles) take 48 x 52 x 64 x 4 bytes, about 640 KiB, and
// the 16 GEMMs each read 12 KiB of transformed input (measured: 24 and 96
// tiles per chunk were within noise of 48).
const winoChunk = 48

// WinogradWeights transforms the [9*cin, cout] weight matrix of a 3x3
// convolution (layout of the package documentation) into the 16 matrices
// U_e = (G g G^T)_e, stored in dst as [16][cin][cout] (row-major, position
// e = 4*i+j of the 4x4 transformed kernel outermost). dst must hold
// 16*cin*cout values and must not overlap wts. Transform the weights once
// and reuse them for every Conv3x3Winograd call.
func WinogradWeights(wts []float32, cin, cout int, dst []float32) {
	if cin < 0 || cout < 0 {
		panic(fmt.Sprintf("kernels: WinogradWeights: negative size cin=%d cout=%d", cin, cout))
	}
	if len(wts) < 9*cin*cout {
		panic(fmt.Sprintf("kernels: WinogradWeights: weights have %d values, want %d", len(wts), 9*cin*cout))
	}
	if len(dst) < 16*cin*cout {
		panic(fmt.Sprintf("kernels: WinogradWeights: output has %d values, want %d", len(dst), 16*cin*cout))
	}
	plane := cin * cout
	for ci := range cin {
		for co := range cout {
			var g [3][3]float32
			for kh := range 3 {
				for kw := range 3 {
					g[kh][kw] = wts[((kh*3+kw)*cin+ci)*cout+co]
				}
			}
			// t = G g (4x3), then u = t G^T (4x4).
			var t [4][3]float32
			for c := range 3 {
				t[0][c] = g[0][c]
				t[1][c] = (g[0][c] + g[1][c] + g[2][c]) / 2
				t[2][c] = (g[0][c] - g[1][c] + g[2][c]) / 2
				t[3][c] = g[2][c]
			}
			for r := range 4 {
				u := [4]float32{
					t[r][0],
					(t[r][0] + t[r][1] + t[r][2]) / 2,
					(t[r][0] - t[r][1] + t[r][2]) / 2,
					t[r][2],
				}
				for c, v := range u {
					dst[(4*r+c)*plane+ci*cout+co] = v
				}
			}
		}
	}
}

// Conv3x3Winograd computes the same convolution and fused epilogue as
// Conv3x3BiasAct,
//
//	dst = act(conv3x3(src, wts) + bias + residual)
//
// by Winograd's F(2x2, 3x3) algorithm, with u the transformed weights
// WinogradWeights wrote for wts (16*cin*cout values). src is an NHWC batch
// (batch*h*w*cin values), dst and residual NHWC [batch*h*w, cout]; residual
// may be nil or exactly dst, bias may be nil (else len >= cout), and act is
// max(x, 0) when relu is set. dst must not overlap src or u. Results agree
// with Conv3x3BiasAct to float32 rounding of the transforms (see above).
// It allocates nothing in steady state except when it splits over threads.
func Conv3x3Winograd(src []float32, batch, cin, h, w int, u []float32, cout int, bias, residual []float32, relu bool, dst []float32) {
	if batch < 0 || cin < 0 || h < 0 || w < 0 || cout < 0 {
		panic(fmt.Sprintf("kernels: Conv3x3Winograd: negative size batch=%d cin=%d h=%d w=%d cout=%d", batch, cin, h, w, cout))
	}
	m := batch * h * w
	if len(src) < m*cin {
		panic(fmt.Sprintf("kernels: Conv3x3Winograd: image has %d values, want %d", len(src), m*cin))
	}
	if len(u) < 16*cin*cout {
		panic(fmt.Sprintf("kernels: Conv3x3Winograd: transformed weights have %d values, want %d (see WinogradWeights)", len(u), 16*cin*cout))
	}
	if len(dst) < m*cout {
		panic(fmt.Sprintf("kernels: Conv3x3Winograd: output has %d values, want %d", len(dst), m*cout))
	}
	if bias != nil && len(bias) < cout {
		panic(fmt.Sprintf("kernels: Conv3x3Winograd: len(bias)=%d < cout=%d", len(bias), cout))
	}
	if residual != nil && len(residual) < m*cout {
		panic(fmt.Sprintf("kernels: Conv3x3Winograd: residual has %d values, want %d", len(residual), m*cout))
	}
	if m == 0 || cout == 0 {
		return
	}
	wg := winoArgs{src: src, cin: cin, h: h, w: w, th: (h + 1) / 2, tw: (w + 1) / 2,
		u: u, cout: cout, bias: bias, residual: residual, relu: relu, dst: dst}
	tiles := batch * wg.th * wg.tw
	chunks := (tiles + winoChunk - 1) / winoChunk
	// Like gemm, use only the threads other calls in flight leave idle,
	// and only when each gets about minWorkPerThread multiply-adds.
	busy := int(callsInFlight.Add(1))
	defer callsInFlight.Add(-1)
	work := tiles * 16 * cin * cout
	nt := min(Threads()-busy+1, max(1, work/minWorkPerThread), chunks)
	if nt <= 1 {
		for c := range chunks {
			wg.chunk(c*winoChunk, min((c+1)*winoChunk, tiles))
		}
		return
	}
	wg.parallel(nt, chunks, tiles)
}

// parallel runs the chunks on nt goroutines, the caller's included. It
// works on a heap copy of a so that the caller's stays on the stack on the
// single-threaded path.
func (a *winoArgs) parallel(nt, chunks, tiles int) {
	p := new(winoArgs)
	*p = *a
	var next atomic.Int64
	drain := func() {
		for {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			p.chunk(c*winoChunk, min((c+1)*winoChunk, tiles))
		}
	}
	var done sync.WaitGroup
	for range nt - 1 {
		done.Go(drain)
	}
	drain()
	done.Wait()
}

// winoArgs is one Conv3x3Winograd call, shared read-only by its goroutines.
type winoArgs struct {
	src            []float32
	cin, h, w      int
	th, tw         int // tiles down and across one image
	u              []float32
	cout           int
	bias, residual []float32
	relu           bool
	dst            []float32
}

// winoScratch is one goroutine's working memory for a chunk of nt tiles.
// Matrices indexed by a tile position (16 of the 4x4 patch or transformed
// tile, 4 of the 2x2 output tile) hold one row per position of nt*ch
// values, tile major and channel minor, at a stride padded by winoPad so
// that the rows do not all fall on the same cache sets.
type winoScratch struct {
	d    []float32 // input patches, [16][nt*cin]
	v    []float32 // transformed input, [16][nt*cin]
	mm   []float32 // products, [16][nt*cout]
	y    []float32 // output tiles, [4][nt*cout]
	zero []float32 // max(cin, cout) zeros: padding, a missing bias or residual
}

// winoPad is the padding of a scratch row, in floats (one cache line).
const winoPad = 16

var winoPool = sync.Pool{New: func() any { return new(winoScratch) }}

// Kronecker products of the transform matrices, so that each transform of
// a chunk is one GEMM over all its tiles and channels: with the patch d
// flattened to 16 values (4*k+l for row k, column l), B^T d B flattened is
// winoBT2 * d, and A^T m A flattened (2*a+b) is winoAT2 * m.
var winoBT2, winoAT2 = kron4(
	[4][4]float32{{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
), kron2([2][4]float32{{1, 1, 1, 0}, {0, 1, -1, -1}})

// kron4 returns the 16x16 row-major matrix K[4i+j][4k+l] = b[i][k]*b[j][l].
func kron4(b [4][4]float32) []float32 {
	k := make([]float32, 256)
	for i := range 4 {
		for j := range 4 {
			for p := range 4 {
				for q := range 4 {
					k[(4*i+j)*16+4*p+q] = b[i][p] * b[j][q]
				}
			}
		}
	}
	return k
}

// kron2 returns the 4x16 row-major matrix K[2a+b][4i+j] = t[a][i]*t[b][j].
func kron2(t [2][4]float32) []float32 {
	k := make([]float32, 64)
	for a := range 2 {
		for b := range 2 {
			for i := range 4 {
				for j := range 4 {
					k[(2*a+b)*16+4*i+j] = t[a][i] * t[b][j]
				}
			}
		}
	}
	return k
}

// grow returns x resliced to n values, reallocated when too small.
func grow(x []float32, n int) []float32 {
	if cap(x) < n {
		return make([]float32, n)
	}
	return x[:n]
}

// chunk computes the output tiles [t0, t1) (tile index (n*th+ty)*tw+tx):
// gather the input patches, transform them (one GEMM), multiply by the
// transformed weights (16 GEMMs), transform back (one GEMM) and store.
func (a *winoArgs) chunk(t0, t1 int) {
	sc := winoPool.Get().(*winoScratch)
	nt := t1 - t0
	cin, cout := a.cin, a.cout
	is, os := nt*cin+winoPad, nt*cout+winoPad // row strides
	sc.d = grow(sc.d, 16*is)
	sc.v = grow(sc.v, 16*is)
	sc.mm = grow(sc.mm, 16*os)
	sc.y = grow(sc.y, 4*os)
	if cap(sc.zero) < max(cin, cout) {
		sc.zero = make([]float32, max(cin, cout))
	}
	for t := t0; t < t1; t++ {
		a.gather(t, sc.d[(t-t0)*cin:], is, sc.zero[:cin])
	}
	im := cur.Load()
	gemmOne(im, 16, nt*cin, 16, winoBT2, 16, sc.d, is, sc.v, is)
	for e := range 16 {
		gemmOne(im, nt, cout, cin, sc.v[e*is:], cin, a.u[e*cin*cout:], cout, sc.mm[e*os:], cout)
	}
	gemmOne(im, 4, nt*cout, 16, winoAT2, 16, sc.mm, os, sc.y, os)
	for t := t0; t < t1; t++ {
		a.store(t, sc.y[(t-t0)*cout:], os, sc.zero[:cout])
	}
	winoPool.Put(sc)
}

// gemmOne runs C = A*B on the calling goroutine alone with implementation
// im (the chunks are the unit of parallelism here).
func gemmOne(im *impl, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	j := jobPool.Get().(*job)
	j.gemmArgs = gemmArgs{m: m, n: n, k: k, alpha: 1, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, im: im}
	j.ts = im.tilesFor(n)
	var bufp *[]float32
	if j.ts != nil {
		bufp = j.gemmArgs.prepareBlocked()
	}
	j.runRows(0, m)
	if bufp != nil {
		bpPool.Put(bufp)
	}
	j.gemmArgs = gemmArgs{}
	jobPool.Put(j)
}

// gather copies the 4x4 input patch of tile t, zeros outside the image,
// into d: patch pixel p (4*row+column) goes to d[p*stride : p*stride+cin].
func (a *winoArgs) gather(t int, d []float32, stride int, zero []float32) {
	cin := a.cin
	per := a.th * a.tw
	n, p := t/per, t%per
	y0, x0 := 2*(p/a.tw)-1, 2*(p%a.tw)-1
	img := a.src[n*a.h*a.w*cin:]
	for i := range 4 {
		y := y0 + i
		for j := range 4 {
			x := x0 + j
			dst := d[(4*i+j)*stride : (4*i+j)*stride+cin]
			if y < 0 || y >= a.h || x < 0 || x >= a.w {
				copy(dst, zero)
				continue
			}
			o := (y*a.w + x) * cin
			copy(dst, img[o:o+cin])
		}
	}
}

// store writes the output pixels of tile t that lie inside the image:
// pixel q (2*row+column) of the tile is y[q*stride : q*stride+cout], to
// which it adds bias and residual before the ReLU (zero holds cout zeros,
// the bias or residual when there is none). The residual is read
// before dst is written, so it may be dst itself.
func (a *winoArgs) store(t int, y []float32, stride int, zero []float32) {
	cout := a.cout
	per := a.th * a.tw
	n, p := t/per, t%per
	y0, x0 := 2*(p/a.tw), 2*(p%a.tw)
	bias, lo := zero, float32(math.Inf(-1))
	if a.bias != nil {
		bias = a.bias[:cout]
	}
	if a.relu {
		lo = 0
	}
	for q := range 4 {
		yy, xx := y0+q/2, x0+q%2
		if yy >= a.h || xx >= a.w {
			continue
		}
		o := ((n*a.h+yy)*a.w + xx) * cout
		res := zero
		if a.residual != nil {
			res = a.residual[o : o+cout]
		}
		winoFinish(y[q*stride:q*stride+cout], bias, res, lo, a.dst[o:o+cout])
	}
}

// winoFinish sets out[c] = max(y[c] + bias[c] + res[c], lo), the sum
// unless lo is greater (so NaN and -0 pass through, as in finishAVX2,
// which does the channels in multiples of 8 when the implementation has
// it); res may be out.
func winoFinish(y, bias, res []float32, lo float32, out []float32) {
	n := len(out)
	y, bias, res = y[:n], bias[:n], res[:n]
	c := 0
	if cur.Load().sum9 && n >= 8 {
		c = n / 8 * 8
		finishVec(&out[0], &y[0], &bias[0], &res[0], lo, c)
	}
	for ; c < n; c++ {
		v := y[c] + bias[c] + res[c]
		if v < lo {
			v = lo
		}
		out[c] = v
	}
}
