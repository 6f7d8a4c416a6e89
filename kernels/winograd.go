package kernels

import (
	"fmt"
	"iter"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"
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
// a 6x7 board, whose 42 cells take 12 tiles). The transforms (B^T d B
// of the 16 patch values, A^T m A of the 16 products) are additions and
// subtractions only, 32 and 24 per channel and tile, done in SIMD down a
// tile's channels (winoGatherIn<w>, which reads the patch from the image,
// and winoOutStore<w>, which adds bias and residual and stores the
// outputs in the same pass; as 1-D transforms per tile in scalar Go they took 50-70%
// of the time and made Winograd slower than im2col; as GEMMs with the
// 16x16 and 4x16 Kronecker matrices, most of whose entries are zero,
// they cost 11-14% more than the AVX2 loops on the AVX-512 EPYC). The
// transforms round in float32 on their own: results agree with the direct
// convolution to about 2e-7 of the absolute sum of an output's products
// (the tests allow 1e-5), not to the last bit, and not bit for bit with
// Conv3x3BiasAct.
//
// Work is split into chunks of winoChunk tiles; one goroutine transforms
// a chunk's patches (straight from the image with the SIMD kernels when
// cin is a multiple of 8, winoGatherInAVX2: 10-18% faster than gathering
// a copy first on the AVX-512 EPYC; else from a gathered copy), runs its
// 16 GEMMs, transforms back and stores its outputs, so the
// transformed tiles stay in the core's caches. Chunks are shared out over
// the threads that other calls in flight leave idle, like gemm does.

// winoChunk is the number of tiles one goroutine handles at a time: with
// 64 channels its four scratch matrices (patches, transformed patches,
// products, output tiles) take 48 x 52 x 64 x 4 bytes, about 640 KiB, and
// the 16 GEMMs each read 12 KiB of transformed input (measured: 24 and 96
// tiles per chunk were within noise of 48).
const winoChunk = 48

// checkTransform panics with fn's name where a transform of cin*cout
// kernels from src (srcPer values a kernel) to dst (dstPer values a
// kernel) has a negative size or too short a slice.
func checkTransform(fn string, cin, cout int, src []float32, srcPer int, srcName string, dst []float32, dstPer int) {
	switch {
	case cin < 0 || cout < 0:
		panic(fmt.Sprintf("kernels: %s: negative size cin=%d cout=%d", fn, cin, cout))
	case len(src) < srcPer*cin*cout:
		panic(fmt.Sprintf("kernels: %s: len(%s)=%d, want at least %d", fn, srcName, len(src), srcPer*cin*cout))
	case len(dst) < dstPer*cin*cout:
		panic(fmt.Sprintf("kernels: %s: output has %d values, want at least %d", fn, len(dst), dstPer*cin*cout))
	}
}

// WinogradWeights transforms the [9*cin, cout] weight matrix of a 3x3
// convolution (layout of the package documentation) into the 16 matrices
// U_e = (G g G^T)_e, stored in dst as [16][cin][cout] (row-major, position
// e = 4*i+j of the 4x4 transformed kernel outermost). dst must hold
// 16*cin*cout values and must not overlap wts. Transform the weights once
// and reuse them for every Conv3x3Winograd call.
func WinogradWeights(wts []float32, cin, cout int, dst []float32) {
	checkTransform("WinogradWeights", cin, cout, wts, 9, "wts", dst, 16)
	// Per input channel and block of up to 64 output channels, each
	// step a loop down contiguous columns: the 9 kernel rows and the 16
	// output rows are each read or written in one sequential run (one
	// pair at a time, the 25 rows plane apart fell on the same cache sets
	// and the loop cost 7% of a bfloat16 training step). Every value is
	// computed by the same operations in the same order as pair by pair.
	plane := cin * cout
	const blk = 64
	var t [4][3][blk]float32 // t = G g (4x3 per column)
	for ci := range cin {
		for c0 := 0; c0 < cout; c0 += blk {
			nb := min(blk, cout-c0)
			for c := range 3 {
				g0 := wts[(c*cin+ci)*cout+c0:][:nb]
				g1 := wts[((3+c)*cin+ci)*cout+c0:][:nb]
				g2 := wts[((6+c)*cin+ci)*cout+c0:][:nb]
				t0, t1, t2, t3 := t[0][c][:nb], t[1][c][:nb], t[2][c][:nb], t[3][c][:nb]
				for j := range nb {
					t0[j] = g0[j]
					t1[j] = (g0[j] + g1[j] + g2[j]) / 2
					t2[j] = (g0[j] - g1[j] + g2[j]) / 2
					t3[j] = g2[j]
				}
			}
			// u = t G^T (4x4).
			for r := range 4 {
				a, b, c := t[r][0][:nb], t[r][1][:nb], t[r][2][:nb]
				o := (4*r)*plane + ci*cout + c0
				u0, u1 := dst[o:][:nb], dst[o+plane:][:nb]
				u2, u3 := dst[o+2*plane:][:nb], dst[o+3*plane:][:nb]
				copy(u0, a)
				for j := range nb {
					u1[j] = (a[j] + b[j] + c[j]) / 2
					u2[j] = (a[j] - b[j] + c[j]) / 2
				}
				copy(u3, c)
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
	checkWinogradWeights(u, cin, cout)
	winograd(0, winoArgs{u: u}, "Conv3x3Winograd", src, batch, cin, h, w, cout, bias, residual, relu, dst)
}

// WinogradBF16 holds the transformed weights of a 3x3 convolution (see
// WinogradWeights) rounded to bfloat16 and packed for the BF16 kernels,
// one matrix U_e of cin x cout per position e of the 4x4 transformed
// tile. It is read-only after packing and safe for concurrent use.
type WinogradBF16 struct {
	cin, cout int
	u         [16]*BF16Matrix
}

// PackWinogradBF16 packs the transformed weights u (16*cin*cout values,
// as WinogradWeights writes them) for Conv3x3WinogradBF16.
func PackWinogradBF16(u []float32, cin, cout int) *WinogradBF16 {
	return RepackWinogradBF16(nil, u, cin, cout)
}

// RepackWinogradBF16 is PackWinogradBF16 into wb's memory when wb (which
// may be nil) holds weights of the same shape, else into new memory (see
// RepackBF16); it returns the packed weights.
func RepackWinogradBF16(wb *WinogradBF16, u []float32, cin, cout int) *WinogradBF16 {
	if cin < 0 || cout < 0 || len(u) < 16*cin*cout {
		panic(fmt.Sprintf("kernels: PackWinogradBF16: %d values for cin=%d cout=%d, want 16*cin*cout", len(u), cin, cout))
	}
	if wb == nil || wb.cin != cin || wb.cout != cout {
		wb = &WinogradBF16{cin: cin, cout: cout}
	}
	for e := range 16 {
		wb.u[e] = RepackBF16(wb.u[e], u[e*cin*cout:(e+1)*cin*cout], cin, cout)
	}
	return wb
}

// Conv3x3WinogradBF16 is Conv3x3Winograd with the 16 products over
// channels in bfloat16: the transformed image and the transformed weights
// u (PackWinogradBF16) are rounded to bfloat16 and the products summed in
// float32 (GemmBiasActBF16); the transforms run in float32. cin must be
// even. It allocates nothing in steady state except when it splits over
// threads.
func Conv3x3WinogradBF16(src []float32, batch, cin, h, w int, u *WinogradBF16, bias, residual []float32, relu bool, dst []float32) {
	checkWinogradBF16(u, cin)
	winograd(0, winoArgs{ub: u}, "Conv3x3WinogradBF16", src, batch, cin, h, w, u.cout, bias, residual, relu, dst)
}

// Conv3x3WinogradMoments is Conv3x3Winograd without bias, residual or
// activation, dst = conv3x3(src, wts), that also adds batch
// normalisation's statistics of dst per output channel j into s1 and s2:
// s1[j] += sum of e and s2[j] += sum of e*e over the batch*h*w outputs of
// channel j, with e = dst - shift[j]. The sums are taken in the output
// transform's store while the outputs are in registers (so training's
// forward does not read dst again for them): in float32 over the tiles of
// a chunk (winoChunk tiles, at most 4*winoChunk outputs per channel),
// then in float64 over the chunks in order, so the results do not depend
// on the thread count. shift should be near the channels' means (the
// running means of batch norm: the float32 sums of e*e then lose nothing
// that matters to the variance); shift, s1 and s2 need cout values.
func Conv3x3WinogradMoments(src []float32, batch, cin, h, w int, u []float32, cout int, shift []float32, s1, s2 []float64, dst []float32) {
	checkWinogradWeights(u, cin, cout)
	winoMoments(winoArgs{u: u}, "Conv3x3WinogradMoments", src, batch, cin, h, w, cout, shift, s1, s2, dst)
}

// Conv3x3WinogradBF16Moments is Conv3x3WinogradMoments with the products
// in bfloat16, as Conv3x3WinogradBF16 computes them.
func Conv3x3WinogradBF16Moments(src []float32, batch, cin, h, w int, u *WinogradBF16, shift []float32, s1, s2 []float64, dst []float32) {
	checkWinogradBF16(u, cin)
	winoMoments(winoArgs{ub: u}, "Conv3x3WinogradBF16Moments", src, batch, cin, h, w, u.cout, shift, s1, s2, dst)
}

// winoStatsPool holds the per-chunk float32 sums of winoMoments.
var winoStatsPool = sync.Pool{New: func() any { return new([]float32) }}

// winoMoments runs a Winograd convolution whose weights wg holds with
// the statistics of Conv3x3WinogradMoments.
func winoMoments(wg winoArgs, fn string, src []float32, batch, cin, h, w, cout int, shift []float32, s1, s2 []float64, dst []float32) {
	if len(shift) < cout || len(s1) < cout || len(s2) < cout {
		panic(fmt.Sprintf("kernels: %s: shift %d, sums %d %d, want cout=%d", fn, len(shift), len(s1), len(s2), cout))
	}
	if batch < 0 || h < 0 || w < 0 || cout < 0 {
		winograd(0, wg, fn, src, batch, cin, h, w, cout, nil, nil, false, dst) // panics
	}
	chunks := (batch*((h+1)/2)*((w+1)/2) + winoChunk - 1) / winoChunk
	bufp := winoStatsPool.Get().(*[]float32)
	*bufp = grow(*bufp, 2*chunks*cout)
	stats := *bufp
	clear(stats)
	wg.shift, wg.stats = shift[:cout], stats
	winograd(0, wg, fn, src, batch, cin, h, w, cout, nil, nil, false, dst)
	for c := range chunks {
		for j, v := range stats[2*c*cout : (2*c+1)*cout] {
			s1[j] += float64(v)
		}
		for j, v := range stats[(2*c+1)*cout : (2*c+2)*cout] {
			s2[j] += float64(v)
		}
	}
	winoStatsPool.Put(bufp)
}

func checkWinogradWeights(u []float32, cin, cout int) {
	if len(u) < 16*cin*cout {
		panic(fmt.Sprintf("kernels: Conv3x3Winograd: transformed weights have %d values, want %d (see WinogradWeights)", len(u), 16*cin*cout))
	}
}

func checkWinogradBF16(u *WinogradBF16, cin int) {
	if u.cin != cin || cin%2 != 0 {
		panic(fmt.Sprintf("kernels: Conv3x3WinogradBF16: weights for %d input channels, image has %d (must be even)", u.cin, cin))
	}
}

// checkImages panics with fn's name where a 3x3 convolution of batch NHWC
// images of h x w x cin (src) into cout channels has a negative size or
// too short an input; it returns batch*h*w.
func checkImages(fn string, batch, cin, h, w, cout int, src []float32) int {
	if batch < 0 || cin < 0 || h < 0 || w < 0 || cout < 0 {
		panic(fmt.Sprintf("kernels: %s: negative size batch=%d cin=%d h=%d w=%d cout=%d", fn, batch, cin, h, w, cout))
	}
	m := batch * h * w
	if len(src) < m*cin {
		panic(fmt.Sprintf("kernels: %s: image has %d values, want %d", fn, len(src), m*cin))
	}
	return m
}

// checkConv3x3 panics with fn's name where a 3x3 convolution of batch NHWC
// images of h x w x cin into cout channels has a negative size or too
// short a slice (bias and residual may be nil); it returns batch*h*w.
func checkConv3x3(fn string, batch, cin, h, w, cout int, src, dst, bias, residual []float32) int {
	m := checkImages(fn, batch, cin, h, w, cout, src)
	switch {
	case len(dst) < m*cout:
		panic(fmt.Sprintf("kernels: %s: output has %d values, want %d", fn, len(dst), m*cout))
	case bias != nil && len(bias) < cout:
		panic(fmt.Sprintf("kernels: %s: len(bias)=%d < cout=%d", fn, len(bias), cout))
	case residual != nil && len(residual) < m*cout:
		panic(fmt.Sprintf("kernels: %s: residual has %d values, want %d", fn, len(residual), m*cout))
	}
	return m
}

// checkWeightGrad panics with fn's name where the weight gradient of a 3x3
// convolution of batch NHWC images of h x w x cin (src) with output
// gradient dy (cout channels) into du (pos transformed values a kernel)
// has a negative size or too short a slice; it returns batch*h*w.
func checkWeightGrad(fn string, batch, cin, h, w, cout int, src, dy, du []float32, pos int) int {
	m := checkImages(fn, batch, cin, h, w, cout, src)
	switch {
	case len(dy) < m*cout:
		panic(fmt.Sprintf("kernels: %s: output gradient has %d values, want %d", fn, len(dy), m*cout))
	case len(du) < pos*cin*cout:
		panic(fmt.Sprintf("kernels: %s: du has %d values, want %d", fn, len(du), pos*cin*cout))
	}
	return m
}

// winograd checks and runs a Winograd convolution whose weights wg
// already holds (u or ub); fn names the caller in panics.
func winograd(limit int, wg winoArgs, fn string, src []float32, batch, cin, h, w, cout int, bias, residual []float32, relu bool, dst []float32) {
	m := checkConv3x3(fn, batch, cin, h, w, cout, src, dst, bias, residual)
	if m == 0 || cout == 0 {
		return
	}
	wg.src, wg.cin, wg.h, wg.w, wg.th, wg.tw = src, cin, h, w, (h+1)/2, (w+1)/2
	wg.cout, wg.bias, wg.residual, wg.relu, wg.dst = cout, bias, residual, relu, dst
	tiles := batch * wg.th * wg.tw
	chunks := (tiles + winoChunk - 1) / winoChunk
	// Like gemm, use only the threads other calls in flight leave idle,
	// and only when each gets about minWorkPerThread multiply-adds.
	busy := int(callsInFlight.Add(1))
	defer callsInFlight.Add(-1)
	work := tiles * 16 * cin * cout
	nt := min(threadsOf(limit)-busy+1, max(1, work/minWorkPerThread), chunks)
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
	runChunks(nt, chunks, func(c int) { p.chunk(c*winoChunk, min((c+1)*winoChunk, tiles)) })
}

// runChunks calls run(0), ..., run(chunks-1) on nt goroutines, the
// caller's included, each taking the next chunk no other has taken, and
// returns when all have returned. run must be safe for concurrent calls
// on distinct chunks.
func runChunks(nt, chunks int, run func(c int)) {
	var next atomic.Int64
	drain := func() {
		for {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			run(c)
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
	th, tw         int           // tiles down and across one image
	u              []float32     // float32 transformed weights, or
	ub             *WinogradBF16 // bfloat16 ones
	cout           int
	bias, residual []float32
	relu           bool
	dst            []float32
	// With stats non-nil (Conv3x3WinogradMoments; no bias, residual or
	// activation), chunk c adds its outputs' sums of e = dst - shift and
	// e*e per channel into stats[2c*cout:] and stats[(2c+1)*cout:].
	shift, stats []float32
}

// winoScratch is one goroutine's working memory for a chunk of nt tiles.
// Matrices indexed by a tile position (16 of the 4x4 patch or transformed
// tile, 4 of the 2x2 output tile) hold one row per position of nt*ch
// values, tile major and channel minor, at a stride padded by winoPad so
// that the rows do not all fall on the same cache sets.
type winoScratch struct {
	d  []float32 // input patches, [16][nt*cin]
	v  []float32 // transformed input, [16][nt*cin]
	vb []uint16  // the same in bfloat16 (Conv3x3WinogradBF16)
	// ab and bb are gradChunkBF16's operands in pair rows.
	ab, bb []uint16
	amx    amxScratch // the AMX paths' plan and operands
	mm     []float32  // products, [16][nt*cout]
	zero   []float32  // max(cin, cout) zeros: padding, a missing bias or residual
	sink   []float32  // cout values written for output pixels outside the image
	// tab is winoArgs.table's for images of tabHW (h, w).
	tab   []int32
	tabHW [2]int
}

// winoPad is the padding of a scratch row, in floats (one cache line).
const winoPad = 16

var winoPool = sync.Pool{New: func() any { return new(winoScratch) }}

// winoIn applies the input transform to n columns: for each column j,
// the 4x4 patch d[p*ds+j] (p = 4*row+column) becomes v[e*vs+j] = (B^T d
// B)[e] (e = 4*k+l), first down the columns (s = B^T d), then along the
// rows. The SIMD implementations do whole vectors of columns with the
// same additions in the same order (winoInAVX2), so every implementation
// gets the same bits.
func winoIn(im *impl, v []float32, vs int, d []float32, ds int, n int) {
	j := 0
	if im.avx2Loops && n >= 8 {
		j = n / 8 * 8
		winoInAVX2(&v[0], vs, &d[0], ds, j)
	}
	for ; j < n; j++ {
		for k := range 4 {
			var s [4]float32
			for q := range 4 {
				d0, d1, d2, d3 := d[q*ds+j], d[(4+q)*ds+j], d[(8+q)*ds+j], d[(12+q)*ds+j]
				switch k {
				case 0:
					s[q] = d0 - d2
				case 1:
					s[q] = d1 + d2
				case 2:
					s[q] = d2 - d1
				default:
					s[q] = d1 - d3
				}
			}
			v[(4*k)*vs+j] = s[0] - s[2]
			v[(4*k+1)*vs+j] = s[1] + s[2]
			v[(4*k+2)*vs+j] = s[2] - s[1]
			v[(4*k+3)*vs+j] = s[1] - s[3]
		}
	}
}

// winoOutStore applies the output transform to one tile and stores it:
// for each column c < len(bias), the 4x4 products m[e*ms+c] become the
// 2x2 outputs y_q = (A^T m A)[q] (q = 2*row+column; first down the
// columns, then along the rows), and out[q][c] = max(y_q + bias[c] +
// res[q][c], lo), the sum unless lo is greater (so NaN and -0 pass
// through). res[q] may be out[q]. winoOutStoreAVX2 and
// winoOutStoreAVX512 do the same operations in the same order.
func winoOutStore(im *impl, m []float32, ms int, out, res *[4][]float32, bias []float32, lo float32) {
	n := len(bias)
	j := 0
	var op, rp [4]*float32
	simd := func(k int, f func(m *float32, ms int, out, res *[4]*float32, bias *float32, lo float32, n int)) {
		for q := range 4 {
			op[q], rp[q] = &out[q][j], &res[q][j]
		}
		f(&m[j], ms, &op, &rp, &bias[j], lo, k)
		j += k
	}
	if im.avx512Loops && n >= 16 {
		simd(n/16*16, winoOutStoreAVX512)
	}
	if im.avx2Loops && n-j >= 8 {
		simd((n-j)/8*8, winoOutStoreAVX2)
	}
	for ; j < n; j++ {
		for q, v := range winoOutColumn(m, ms, j) {
			v = v + bias[j] + res[q][j]
			if v < lo {
				v = lo
			}
			out[q][j] = v
		}
	}
}

// winoOutColumn returns column j of one tile's output transform, y_q =
// (A^T m A)[q] for q = 0..3 from the 4x4 products m[e*ms+j], with the
// additions in the order of the SIMD loops (kernels/_generate's
// winoOutTransform): rows 0+1+2 (or 1-2-3) tap by tap, then those taps
// the same way.
func winoOutColumn(m []float32, ms, j int) (y [4]float32) {
	for a := range 2 {
		var t [4]float32
		for q := range 4 {
			m0, m1, m2, m3 := m[q*ms+j], m[(4+q)*ms+j], m[(8+q)*ms+j], m[(12+q)*ms+j]
			if a == 0 {
				t[q] = m0 + m1 + m2
			} else {
				t[q] = m1 - m2 - m3
			}
		}
		y[2*a], y[2*a+1] = t[0]+t[1]+t[2], t[1]-t[2]-t[3]
	}
	return y
}

// winoOutStats applies the output transform to one tile, stores it as
// it is and sums it for batch norm: for each column c < len(shift), the
// 4x4 products m[e*ms+c] become the 2x2 outputs y_q = (A^T m A)[q]
// (winoOutColumn), out[q][c] = y_q, and with e_q = (y_q -
// shift[c]) AND keep[q] (all ones, or zero for an output outside the
// image), s1[c] += ((e_0 + e_1) + e_2) + e_3 and s2[c] += ((e_0*e_0 +
// e_1*e_1) + e_2*e_2) + e_3*e_3 in float32. winoOutStatsAVX2 and
// winoOutStatsAVX512 do the same operations in the same order.
func winoOutStats(im *impl, m []float32, ms int, out *[4][]float32, keep *[4]uint32, shift, s1, s2 []float32) {
	n := len(shift)
	j := 0
	var op [4]*float32
	simd := func(k int, f func(m *float32, ms int, out *[4]*float32, keep *[4]uint32, shift, s1, s2 *float32, n int)) {
		for q := range 4 {
			op[q] = &out[q][j]
		}
		f(&m[j], ms, &op, keep, &shift[j], &s1[j], &s2[j], k)
		j += k
	}
	if im.avx512Loops && n >= 16 {
		simd(n/16*16, winoOutStatsAVX512)
	}
	if im.avx2Loops && n-j >= 8 {
		simd((n-j)/8*8, winoOutStatsAVX2)
	}
	for ; j < n; j++ {
		var sum, sq float32
		for q, v := range winoOutColumn(m, ms, j) {
			out[q][j] = v
			e := math.Float32frombits(math.Float32bits(v-shift[j]) & keep[q])
			if q == 0 {
				sum, sq = e, float32(e*e)
				continue
			}
			sum += e
			sq += float32(e * e)
		}
		s1[j] += sum
		s2[j] += sq
	}
}

// grow returns x resliced to n values, reallocated when too small.
func grow(x []float32, n int) []float32 {
	if cap(x) < n {
		return make([]float32, n)
	}
	return x[:n]
}

// chunk computes the output tiles [t0, t1) (tile index (n*th+ty)*tw+tx):
// gather the input patches, transform them, multiply by the transformed
// weights (16 GEMMs), transform back and store.
func (a *winoArgs) chunk(t0, t1 int) {
	sc := winoPool.Get().(*winoScratch)
	nt := t1 - t0
	cin, cout := a.cin, a.cout
	is, os := nt*cin+winoPad, nt*cout+winoPad // row strides
	sc.mm = grow(sc.mm, 16*os)
	if cap(sc.zero) < max(cin, cout) {
		sc.zero = make([]float32, max(cin, cout))
	}
	sc.sink = grow(sc.sink, cout)
	im := cur.Load()
	bf16 := a.ub != nil
	if bf16 {
		sc.vb = grow16(sc.vb, 16*is)
	}
	rounded := a.transformIn(im, sc, &sc.v, t0, t1, is, bf16)
	if bf16 && im.amx && amxFits(a.ub.u[0]) {
		p := &sc.amx.plan
		p.start(nt, a.ub.u[0], cin, cout, false)
		for e := range 16 {
			if !rounded {
				convertBF16(im, sc.vb[e*is:e*is+nt*cin], sc.v[e*is:e*is+nt*cin])
			}
			p.addGemm(nt, sc.vb[e*is:], a.ub.u[e], sc.mm[e*os:])
		}
		p.run()
	} else if bf16 {
		ts := scratchPool.Get().(*scratch)
		for e := range 16 {
			if !rounded {
				convertBF16(im, sc.vb[e*is:e*is+nt*cin], sc.v[e*is:e*is+nt*cin])
			}
			g := bf16Args{im: im, b: a.ub.u[e], c: sc.mm[e*os:], ldc: cout}
			g.rows(0, nt, sc.vb[e*is:], cin, ts)
		}
		scratchPool.Put(ts)
	} else {
		for e := range 16 {
			gemmOne(im, nt, cout, cin, sc.v[e*is:], cin, a.u[e*cin*cout:], cout, sc.mm[e*os:], cout)
		}
	}
	bias, lo := sc.zero[:cout], float32(math.Inf(-1))
	if a.bias != nil {
		bias = a.bias[:cout]
	}
	if a.relu {
		lo = 0
	}
	tab, per := a.table(sc), a.th*a.tw
	n, p := t0/per, t0%per
	hw := a.h * a.w
	var out, res [4][]float32 // on the stack: no write barriers
	// With cout a whole number of vectors, the SIMD stores run on a run of
	// tiles of one image per call, building the output pointers from the
	// tile table themselves (through outputs and the slices of
	// winoOutStore and winoOutStats, the pointers cost 5-7% of a training
	// step of the 32x4 Connect Four net, and one call per tile with
	// pointers built in Go per tile another 3%).
	lanes := 0
	switch {
	case im.avx512Loops && cout%16 == 0:
		lanes = 16
	case im.avx2Loops && cout%8 == 0:
		lanes = 8
	}
	var keep [4]uint32
	if a.stats != nil {
		c := t0 / winoChunk
		s1, s2 := a.stats[2*c*cout:][:cout], a.stats[(2*c+1)*cout:][:cout]
		if lanes != 0 {
			// Run by run of the tiles of one image: the loops take the
			// tile table's rows and build the pointers themselves.
			for r := range imageRuns(t0, t1, per) {
				mt, dst, row := &sc.mm[(r.t-t0)*cout], &a.dst[r.n*hw*cout], &tab[20*r.p]
				if lanes == 16 {
					winoStatsTilesAVX512(mt, os, dst, row, &sc.sink[0], &a.shift[0], &s1[0], &s2[0], cout, r.k)
				} else {
					winoStatsTilesAVX2(mt, os, dst, row, &sc.sink[0], &a.shift[0], &s1[0], &s2[0], cout, r.k)
				}
			}
			winoPool.Put(sc)
			return
		}
		for t := t0; t < t1; t++ {
			a.outputs(tab, n, p, &out, &res, sc.sink[:cout], sc.zero[:cout])
			for q, o := range tab[20*p+16:][:4] {
				keep[q] = ^uint32(0)
				if o < 0 {
					keep[q] = 0
				}
			}
			winoOutStats(im, sc.mm[(t-t0)*cout:], os, &out, &keep, a.shift, s1, s2)
			if p++; p == per {
				n, p = n+1, 0
			}
		}
		winoPool.Put(sc)
		return
	}
	if lanes != 0 {
		for r := range imageRuns(t0, t1, per) {
			mt, dst, row := &sc.mm[(r.t-t0)*cout], &a.dst[r.n*hw*cout], &tab[20*r.p]
			var res *float32
			if a.residual != nil {
				res = &a.residual[r.n*hw*cout]
			}
			if lanes == 16 {
				winoStoreTilesAVX512(mt, os, dst, res, row, &sc.sink[0], &sc.zero[0], &bias[0], lo, cout, r.k)
			} else {
				winoStoreTilesAVX2(mt, os, dst, res, row, &sc.sink[0], &sc.zero[0], &bias[0], lo, cout, r.k)
			}
		}
		winoPool.Put(sc)
		return
	}
	for t := t0; t < t1; t++ {
		a.outputs(tab, n, p, &out, &res, sc.sink[:cout], sc.zero[:cout])
		winoOutStore(im, sc.mm[(t-t0)*cout:], os, &out, &res, bias, lo)
		if p++; p == per {
			n, p = n+1, 0
		}
	}
	winoPool.Put(sc)
}

// transformIn writes the transformed input patches of tiles [t0, t1)
// into *v, sc.v or sc.mm ([16][nt*cin] at row stride is; sc.zero holds at
// least cin zeros), or into sc.vb already
// rounded to bfloat16 when bf16 is set and the kernels can (it then
// returns true).
func (a *winoArgs) transformIn(im *impl, sc *winoScratch, v *[]float32, t0, t1, is int, bf16 bool) (rounded bool) {
	cin, nt := a.cin, t1-t0
	tab, per := a.table(sc), a.th*a.tw
	n, p := t0/per, t0%per
	var taps [16]*float32 // on the stack: no write barriers
	switch {
	case im.avx2Loops && cin%8 == 0:
		// Straight from the image: no gathered copy.
		rounded = bf16 && im.bf16 != nil && im.avx512Loops && cin%16 == 0
		if !rounded {
			*v = grow(*v, 16*is)
		}
		// Run by run of the tiles of one image: the loops take the tile
		// table's rows and build each tile's pointers themselves.
		hw := a.h * a.w
		for r := range imageRuns(t0, t1, per) {
			img, row, z := &a.src[r.n*hw*cin], &tab[20*r.p], &sc.zero[0]
			switch {
			case rounded:
				winoGatherTilesBF16AVX512(&sc.vb[(r.t-t0)*cin], is, img, row, z, cin, r.k)
			case im.avx512Loops && cin%16 == 0:
				winoGatherTilesAVX512(&(*v)[(r.t-t0)*cin], is, img, row, z, cin, r.k)
			default:
				winoGatherTilesAVX2(&(*v)[(r.t-t0)*cin], is, img, row, z, cin, r.k)
			}
		}
	default:
		sc.d = grow(sc.d, 16*is)
		*v = grow(*v, 16*is)
		for t := t0; t < t1; t++ {
			a.taps(tab, n, p, &taps, sc.zero[:cin])
			if p++; p == per {
				n, p = n+1, 0
			}
			for q, src := range taps {
				copy(sc.d[q*is+(t-t0)*cin:][:cin], unsafe.Slice(src, cin))
			}
		}
		winoIn(im, *v, is, sc.d, is, nt*cin)
	}
	return rounded
}

// tileRun is a run of k tiles of one image, from tile t of the batch:
// image n, the first tile at position p of the image.
type tileRun struct{ t, k, n, p int }

// imageRuns yields tiles [t0, t1) of a batch of images with per tile
// positions each as runs that stay within one image: what the
// run-of-tiles loops (winoGatherTiles<w>, winoStoreTiles<w>,
// winoStatsTiles<w>) take in one call.
func imageRuns(t0, t1, per int) iter.Seq[tileRun] {
	return func(yield func(tileRun) bool) {
		n, p := t0/per, t0%per
		for t := t0; t < t1; {
			k := min(t1-t, per-p)
			if !yield(tileRun{t, k, n, p}) {
				return
			}
			t += k
			n, p = n+1, 0
		}
	}
}

// gemmOne runs C = A*B on the calling goroutine alone with implementation
// im (the chunks are the unit of parallelism here).
func gemmOne(im *impl, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if directGemm(im, false, m, n, k, a, lda, b, ldb, false, c, ldc) {
		return
	}
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

// table returns, for the tile positions p of one image (th*tw, row
// major), 20 pixel indices y*w+x per position, or -1: the 16 of its 4x4
// input patch (4*row+column; -1 outside the image) and the 4 of its output tile
// (2*row+column; -1 outside the image). Every image of a batch has the
// same geometry, so the table is built once per scratch and geometry
// instead of bounds-checking 20 pixels per tile (7% of a training step
// of the 32x4 Connect Four net).
func (a *winoArgs) table(sc *winoScratch) []int32 {
	per := a.th * a.tw
	if sc.tabHW == [2]int{a.h, a.w} && len(sc.tab) == 20*per {
		return sc.tab
	}
	if cap(sc.tab) < 20*per {
		sc.tab = make([]int32, 20*per)
	}
	tab := sc.tab[:20*per]
	for p := range per {
		y0, x0 := 2*(p/a.tw)-1, 2*(p%a.tw)-1
		for i := range 4 {
			for j := range 4 {
				y, x := y0+i, x0+j
				o := int32(-1)
				if y >= 0 && y < a.h && x >= 0 && x < a.w {
					o = int32(y*a.w + x)
				}
				tab[20*p+4*i+j] = o
			}
		}
		for q := range 4 {
			y, x := y0+1+q/2, x0+1+q%2
			o := int32(-1)
			if y < a.h && x < a.w {
				o = int32(y*a.w + x)
			}
			tab[20*p+16+q] = o
		}
	}
	sc.tab, sc.tabHW = tab, [2]int{a.h, a.w}
	return tab
}

// taps points taps[q] at pixel q (4*row+column) of the 4x4 input patch of
// tile position p of image n, or at zero (cin zeros) where table (a's)
// says -1.
func (a *winoArgs) taps(tab []int32, n, p int, taps *[16]*float32, zero []float32) {
	cin := a.cin
	img := a.src[n*a.h*a.w*cin:]
	for q, o := range tab[20*p:][:16] {
		if o < 0 {
			taps[q] = &zero[0]
		} else {
			taps[q] = &img[int(o)*cin]
		}
	}
}

// outputs points out[q] at output pixel q (2*row+column) of tile position
// p of image n, or at sink where the pixel lies outside the image, and
// res[q] at the pixel's residual, or at zero (cout zeros) where there is
// none; tab is a.table's.
func (a *winoArgs) outputs(tab []int32, n, p int, out, res *[4][]float32, sink, zero []float32) {
	cout := a.cout
	base := n * a.h * a.w
	for q, o := range tab[20*p+16:][:4] {
		if o < 0 {
			out[q], res[q] = sink, zero
			continue
		}
		off := (base + int(o)) * cout
		out[q], res[q] = a.dst[off:off+cout], zero
		if a.residual != nil {
			res[q] = a.residual[off : off+cout]
		}
	}
}
