package kernels

import (
	"fmt"
	"math"
	"sync"
	"unsafe"
)

// Winograd F(3x4, 3x3): the same 3x3 "same" convolution as
// Conv3x3Winograd with larger tiles, 3 output rows by 4 output columns
// from a 5x6 input patch, F(3,3) down the columns by F(4,3) along the
// rows (issue 42). On Connect Four's 6x7 board 4 tiles cover an image
// (2 down, 2 across; 5 of their 48 outputs fall outside and are dropped)
// with 30 products per tile and channel pair: 120 per image and pair
// against F(2x2,3x3)'s 12 tiles of 16, 192 (-37.5%).
//
// The matrices come from the Toom-Cook construction that Lavin and Gray
// (2015, "Fast Algorithms for Convolutional Neural Networks") use: F(m, 3)
// evaluates at n-1 = m+1 finite points and infinity. F(4,3) is their
// published F(4x4,3x3)'s 1-D factor, points 0, 1, -1, 2, -2 and infinity:
//
//	B4^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
//	G4   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
//	A4^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
//
// F(3,3) takes the points 0, 1, -1, 1/2 and infinity (1/2 rather than 2:
// the same worst float32 error in kernels/testdata/winotiles, and every
// point within [-1, 1]). The construction gives B^T rows (1/2, -1, -1/2,
// 1, 0), (0, -1/2, 1/2, 1, 0), (0, 1/2, -3/2, 1, 0), (0, -1, 0, 1, 0),
// (0, 1/2, -1, -1/2, 1), G rows (2, 0, 0), (1, 1, 1), (-1/3, 1/3, -1/3),
// (-8/3, -4/3, -2/3), (0, 0, 1) and A^T rows (1, 1, 1, 1, 0), (0, 1, -1,
// 1/2, 0), (0, 1, 1, 1/4, 1). Scaling B^T's row k by b_k, G's row k by
// g_k and A^T's column k by a_k with b_k g_k a_k = 1 leaves the algorithm
// unchanged; with powers of two only (b = 2, 2, 2, 1, 2; a = 1, 1, 1, 4,
// 1) it also leaves every float32 rounding unchanged, and B^T and A^T
// become integers:
//
//	B3^T = [1 -2 -1 2 0; 0 -1 1 2 0; 0 1 -3 2 0; 0 -1 0 1 0; 0 1 -2 -1 2]
//	G3   = [1 0 0; 1/2 1/2 1/2; -1/6 1/6 -1/6; -2/3 -1/3 -1/6; 0 0 1/2]
//	A3^T = [1 1 1 4 0; 0 1 -1 2 0; 0 1 1 1 1]
//
// A tile of output channel co is A3^T [sum over ci of U .* V] A4 with U =
// G3 g G4^T (5x6; g the 3x3 kernel of the pair (ci, co), rows down the
// image) and V = B3^T d B4 (d the 5x6 input patch of channel ci, zeros
// outside the image, its top left pixel one up and one left of the
// tile's). As for F(2x2), per position e = 6*i+j of the 5x6 transformed
// tile the sum over channels is a GEMM, M_e[tile][cout] =
// V_e[tile][cin] * U_e[cin][cout], 30 of them per chunk of tiles, on the
// same micro-kernels.
//
// The weight gradient follows as for F(2x2) (winograd_grad.go): dM = A3
// dY A4^T (5x6 from the tile's 3x4 output gradient, zero for outputs
// outside the image), dU_e = sum over tiles of V_e^T dM_e, dg = G3^T dU
// G4.
//
// Float32 error: kernels/testdata/winotiles measured 1.0-1.4e-6 of the
// absolute sum of an output's products at worst (F(2x2): 1.5e-7; the
// tests allow 1e-5 for both). With bfloat16 operands it is 3.7-3.8x
// F(2x2)'s on average (Conv3x3Winograd34BF16, winograd34_bf16.go, for
// bfloat16 training, where a held-out-loss run measured what it costs).
//
// The transforms run down a tile's channels: with AVX2 or AVX-512 in
// the loops of kernels/_generate/wino34.go (w34GatherIn<w>, reading the
// patch straight from the image, w34OutStore<w>, w34OutStats<w>,
// w34GradOut<w>), which do the portable Go loops' operations in the same
// order and so give the same bits; elsewhere, and for channel counts
// that are not a whole number of vectors, in Go. The products run on the
// GEMM micro-kernels of the implementation in use (in bfloat16 on the BF16
// ones). nets trains with it, in float32 and in bfloat16, where it
// measures faster than F(2x2) (nets' wino34Pays: the Connect Four board).

const (
	w34Pos   = 30               // positions of the 5x6 transformed tile, e = 6*i+j
	w34Outs  = 12               // outputs of a 3x4 tile, q = 4*row+column
	w34Entry = w34Pos + w34Outs // tile table entries per tile position
)

// w34Chunk is the number of tiles one goroutine handles at a time in the
// forward pass: 16 tiles of 12 outputs are as many outputs as
// winoChunk's 48 of 4 (a choice, not a measurement).
const w34Chunk = 16

// w34ChunkTiles returns the tiles of one forward chunk of cout output
// channels with weights wg (float32 or bfloat16) on implementation im:
// w34Chunk, or in bfloat16 a whole number of the products' row tiles:
// amxW34Chunk on AMX tiles (amxFits), else 18 for the BF16 micro-kernel's
// 6-row tiles of 64-column strips (16 left a tail of 4 rows, a third of
// the 64x5 Connect Four net's row tiles, each row of it at 1.85x the cost
// of a whole tile's in pprof). Without AMX it depends on cout only
// (bf16StripWidth), so that every implementation but AMX sums batch
// norm's moments over the same chunks.
func w34ChunkTiles(wg *w34Args, im *impl, cout int) int {
	switch {
	case wg.ub == nil:
		return w34Chunk
	case im.amx && amxFits(wg.ub.u[0]):
		return amxW34Chunk
	case bf16StripWidth(cout) == 64:
		return 18
	}
	return w34Chunk
}

// amxW34Chunk is the forward chunk on AMX tiles: two whole 16-row blocks
// (a tail block costs a whole one's time and a second tile
// configuration).
const amxW34Chunk = 32

// w34GradChunk is the number of tiles, the GEMMs' K, of one pass of
// Conv3x3Winograd34WeightGrad: 32 tiles of 12 outputs, as many outputs as
// winoGradChunk's 96 of 4 (a choice, not a measurement).
const w34GradChunk = 32

// WinogradWeights34 transforms the [9*cin, cout] weight matrix of a 3x3
// convolution (layout of the package documentation) into the 30 matrices
// U_e = (G3 g G4^T)_e of F(3x4,3x3), stored in dst as [30][cin][cout]
// (position e = 6*i+j of the 5x6 transformed kernel outermost). dst must
// hold 30*cin*cout values and must not overlap wts.
func WinogradWeights34(wts []float32, cin, cout int, dst []float32) {
	checkTransform("WinogradWeights34", cin, cout, wts, 9, "wts", dst, w34Pos)
	// Per input channel and block of up to 64 output channels, each
	// step a loop down contiguous columns (see WinogradWeights): t = G3 g
	// (5x3 per column), then U = t G4^T, every value by the operations
	// of w34WeightColumn in its order (TestWinogradWeights34Columns).
	// The SIMD loops (w34WeightsG<w>, w34WeightsGT<w>) take the whole
	// vectors of a block, the Go loops the rest: the scalar divisions
	// by 6 and 24 took 5% of the 64x5 Connect Four net's bfloat16 step.
	plane := cin * cout
	const blk = 64
	var t [5][3][blk]float32
	lanes := w34WeightLanes(cur.Load())
	for ci := range cin {
		for c0 := 0; c0 < cout; c0 += blk {
			nb := min(blk, cout-c0)
			vec := nb / max(lanes, 1) * lanes // columns for the SIMD loops
			for c := range 3 {
				g0 := wts[(c*cin+ci)*cout+c0:][:nb]
				g1 := wts[((3+c)*cin+ci)*cout+c0:][:nb]
				g2 := wts[((6+c)*cin+ci)*cout+c0:][:nb]
				t0, t1, t2 := t[0][c][:nb], t[1][c][:nb], t[2][c][:nb]
				t3, t4 := t[3][c][:nb], t[4][c][:nb]
				if vec > 0 {
					g, tp := [3]*float32{&g0[0], &g1[0], &g2[0]}, [5]*float32{&t0[0], &t1[0], &t2[0], &t3[0], &t4[0]}
					if lanes == 16 {
						w34WeightsGAVX512(&g, &tp, vec)
					} else {
						w34WeightsGAVX2(&g, &tp, vec)
					}
				}
				for j := vec; j < nb; j++ {
					t0[j] = g0[j]
					t1[j] = (g0[j] + g1[j] + g2[j]) / 2
					t2[j] = -(g0[j] - g1[j] + g2[j]) / 6
					t3[j] = -(4*g0[j] + 2*g1[j] + g2[j]) / 6
					t4[j] = g2[j] / 2
				}
			}
			for i := range 5 {
				a, b, c := t[i][0][:nb], t[i][1][:nb], t[i][2][:nb]
				o := (6*i)*plane + ci*cout + c0
				u0, u1, u2 := dst[o:][:nb], dst[o+plane:][:nb], dst[o+2*plane:][:nb]
				u3, u4, u5 := dst[o+3*plane:][:nb], dst[o+4*plane:][:nb], dst[o+5*plane:][:nb]
				if vec > 0 {
					tp := [3]*float32{&a[0], &b[0], &c[0]}
					up := [6]*float32{&u0[0], &u1[0], &u2[0], &u3[0], &u4[0], &u5[0]}
					if lanes == 16 {
						w34WeightsGTAVX512(&tp, &up, vec)
					} else {
						w34WeightsGTAVX2(&tp, &up, vec)
					}
				}
				for j := vec; j < nb; j++ {
					u0[j] = a[j] / 4
					u1[j] = -(a[j] + b[j] + c[j]) / 6
					u2[j] = -(a[j] - b[j] + c[j]) / 6
					u3[j] = (a[j] + 2*b[j] + 4*c[j]) / 24
					u4[j] = (a[j] - 2*b[j] + 4*c[j]) / 24
					u5[j] = c[j]
				}
			}
		}
	}
}

// w34WeightLanes returns the vector width of im's weight-transform loops
// (w34Weights*<w>), 0 for none.
func w34WeightLanes(im *impl) int {
	switch {
	case im.avx512Loops:
		return 16
	case im.avx2Loops:
		return 8
	}
	return 0
}

// w34WeightColumn returns U = G3 g G4^T (5x6, e = 6*i+j) of one 3x3 kernel
// g (3*kh+kw): t = G3 g down the kernel's columns, then t G4^T along
// the rows.
func w34WeightColumn(g *[9]float32) (u [w34Pos]float32) {
	var t [5][3]float32
	for c := range 3 {
		g0, g1, g2 := g[c], g[3+c], g[6+c]
		t[0][c] = g0
		t[1][c] = (g0 + g1 + g2) / 2
		t[2][c] = -(g0 - g1 + g2) / 6
		t[3][c] = -(4*g0 + 2*g1 + g2) / 6
		t[4][c] = g2 / 2
	}
	for i := range 5 {
		g0, g1, g2 := t[i][0], t[i][1], t[i][2]
		u[6*i] = g0 / 4
		u[6*i+1] = -(g0 + g1 + g2) / 6
		u[6*i+2] = -(g0 - g1 + g2) / 6
		u[6*i+3] = (g0 + 2*g1 + 4*g2) / 24
		u[6*i+4] = (g0 - 2*g1 + 4*g2) / 24
		u[6*i+5] = g2
	}
	return u
}

// WinogradWeights34Grad is the adjoint of WinogradWeights34: given du, the
// gradient of the transformed weights ([30][cin][cout], as
// Conv3x3Winograd34WeightGrad accumulates it), it writes the gradient of
// the [9*cin, cout] weights, dw[((kh*3+kw)*cin+ci)*cout+co] = (G3^T du
// G4)[kh][kw] of the pair (ci, co), over dw's first 9*cin*cout values.
func WinogradWeights34Grad(du []float32, cin, cout int, dw []float32) {
	checkTransform("WinogradWeights34Grad", cin, cout, du, w34Pos, "du", dw, 9)
	// As WinogradWeights34: t = G3^T du (3x6 per column), then t G4,
	// every value by the operations of w34WeightGradColumn in its order.
	// The SIMD loops (w34WeightsGradG<w>, w34WeightsGradGT<w>) take the
	// whole vectors of a block, as in WinogradWeights34.
	plane := cin * cout
	const blk = 64
	var t [3][6][blk]float32
	lanes := w34WeightLanes(cur.Load())
	for ci := range cin {
		for c0 := 0; c0 < cout; c0 += blk {
			nb := min(blk, cout-c0)
			vec := nb / max(lanes, 1) * lanes // columns for the SIMD loops
			for c := range 6 {
				o := c*plane + ci*cout + c0
				u1, u2 := du[o+6*plane:][:nb], du[o+12*plane:][:nb]
				u0, u3, u4 := du[o:][:nb], du[o+18*plane:][:nb], du[o+24*plane:][:nb]
				t0, t1, t2 := t[0][c][:nb], t[1][c][:nb], t[2][c][:nb]
				if vec > 0 {
					up, tp := [5]*float32{&u0[0], &u1[0], &u2[0], &u3[0], &u4[0]}, [3]*float32{&t0[0], &t1[0], &t2[0]}
					if lanes == 16 {
						w34WeightsGradGAVX512(&up, &tp, vec)
					} else {
						w34WeightsGradGAVX2(&up, &tp, vec)
					}
				}
				for j := vec; j < nb; j++ {
					t0[j] = u0[j] + u1[j]/2 - u2[j]/6 - 2*u3[j]/3
					t1[j] = u1[j]/2 + u2[j]/6 - u3[j]/3
					t2[j] = u1[j]/2 - u2[j]/6 - u3[j]/6 + u4[j]/2
				}
			}
			for k := range 3 {
				t0, t1, t2 := t[k][0][:nb], t[k][1][:nb], t[k][2][:nb]
				t3, t4, t5 := t[k][3][:nb], t[k][4][:nb], t[k][5][:nb]
				o := (3*k*cin+ci)*cout + c0
				g0, g1, g2 := dw[o:][:nb], dw[o+plane:][:nb], dw[o+2*plane:][:nb]
				if vec > 0 {
					tp := [6]*float32{&t0[0], &t1[0], &t2[0], &t3[0], &t4[0], &t5[0]}
					gp := [3]*float32{&g0[0], &g1[0], &g2[0]}
					if lanes == 16 {
						w34WeightsGradGTAVX512(&tp, &gp, vec)
					} else {
						w34WeightsGradGTAVX2(&tp, &gp, vec)
					}
				}
				for j := vec; j < nb; j++ {
					g0[j] = t0[j]/4 - (t1[j]+t2[j])/6 + (t3[j]+t4[j])/24
					g1[j] = (t2[j]-t1[j])/6 + (t3[j]-t4[j])/12
					g2[j] = (t3[j]+t4[j]-t1[j]-t2[j])/6 + t5[j]
				}
			}
		}
	}
}

// w34WeightGradColumn returns G3^T du G4 (3x3, 3*kh+kw) of one pair's
// transformed-weight gradient du (5x6): t = G3^T du down the columns,
// then t G4 along the rows.
func w34WeightGradColumn(du *[w34Pos]float32) (g [9]float32) {
	var t [3][6]float32
	for c := range 6 {
		u0, u1, u2, u3, u4 := du[c], du[6+c], du[12+c], du[18+c], du[24+c]
		t[0][c] = u0 + u1/2 - u2/6 - 2*u3/3
		t[1][c] = u1/2 + u2/6 - u3/3
		t[2][c] = u1/2 - u2/6 - u3/6 + u4/2
	}
	for k := range 3 {
		t0, t1, t2, t3, t4, t5 := t[k][0], t[k][1], t[k][2], t[k][3], t[k][4], t[k][5]
		g[3*k] = t0/4 - (t1+t2)/6 + (t3+t4)/24
		g[3*k+1] = (t2-t1)/6 + (t3-t4)/12
		g[3*k+2] = (t3+t4-t1-t2)/6 + t5
	}
	return g
}

// Conv3x3Winograd34 computes the same convolution and fused epilogue as
// Conv3x3Winograd,
//
//	dst = act(conv3x3(src, wts) + bias + residual)
//
// by F(3x4,3x3), with u the transformed weights WinogradWeights34 wrote
// for wts (30*cin*cout values). src is an NHWC batch (batch*h*w*cin
// values), dst and residual NHWC [batch*h*w, cout]; residual may be nil
// or exactly dst, bias may be nil (else len >= cout), and act is max(x,
// 0) when relu is set. dst must not overlap src or u. Results agree with
// the direct convolution to float32 rounding of the transforms (see
// above). It allocates nothing in steady state except when it splits
// over threads.
func Conv3x3Winograd34(src []float32, batch, cin, h, w int, u []float32, cout int, bias, residual []float32, relu bool, dst []float32) {
	checkWinograd34Weights(u, cin, cout)
	winograd34(0, w34Args{u: u}, "Conv3x3Winograd34", src, batch, cin, h, w, cout, bias, residual, relu, dst)
}

// Conv3x3Winograd34Moments is Conv3x3Winograd34 without bias, residual or
// activation, dst = conv3x3(src, wts), that also adds batch
// normalisation's statistics of dst per output channel j into s1 and s2,
// as Conv3x3WinogradMoments does: s1[j] += sum of e and s2[j] += sum of
// e*e with e = dst - shift[j] over the outputs inside the image, in
// float32 over the tiles of a chunk (w34ChunkTiles, in tile order, each
// tile's 12 outputs in order), then in float64 over the chunks in order,
// so the results do not depend on the thread count. shift, s1 and s2
// need cout values.
func Conv3x3Winograd34Moments(src []float32, batch, cin, h, w int, u []float32, cout int, shift []float32, s1, s2 []float64, dst []float32) {
	checkWinograd34Weights(u, cin, cout)
	w34Moments(w34Args{u: u}, "Conv3x3Winograd34Moments", src, batch, cin, h, w, cout, shift, s1, s2, dst)
}

// w34Moments runs an F(3x4) convolution whose weights wg holds with the
// statistics of Conv3x3Winograd34Moments; fn names the caller in panics.
func w34Moments(wg w34Args, fn string, src []float32, batch, cin, h, w, cout int, shift []float32, s1, s2 []float64, dst []float32) {
	if len(shift) < cout || len(s1) < cout || len(s2) < cout {
		panic(fmt.Sprintf("kernels: %s: shift %d, sums %d %d, want cout=%d", fn, len(shift), len(s1), len(s2), cout))
	}
	if batch < 0 || h < 0 || w < 0 || cout < 0 {
		winograd34(0, wg, fn, src, batch, cin, h, w, cout, nil, nil, false, dst) // panics
	}
	if wg.im == nil {
		wg.im = cur.Load()
	}
	ct := w34ChunkTiles(&wg, wg.im, cout)
	chunks := (batch*((h+2)/3)*((w+3)/4) + ct - 1) / ct
	bufp := winoStatsPool.Get().(*[]float32)
	*bufp = grow(*bufp, 2*chunks*cout)
	stats := *bufp
	clear(stats)
	wg.shift, wg.stats = shift[:cout], stats
	winograd34(0, wg, fn, src, batch, cin, h, w, cout, nil, nil, false, dst)
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

func checkWinograd34Weights(u []float32, cin, cout int) {
	if len(u) < w34Pos*cin*cout {
		panic(fmt.Sprintf("kernels: Conv3x3Winograd34: transformed weights have %d values, want %d (see WinogradWeights34)", len(u), w34Pos*cin*cout))
	}
}

// w34Args is one F(3x4) call, shared read-only by its goroutines.
type w34Args struct {
	src            []float32
	cin, h, w      int
	th, tw         int             // tiles down and across one image
	u              []float32       // float32 transformed weights, or
	ub             *Winograd34BF16 // bfloat16 ones
	cout           int
	bias, residual []float32
	relu           bool
	dst            []float32 // the output; the output gradient in the weight gradient
	// With stats non-nil (Conv3x3Winograd34Moments), chunk c adds its
	// outputs' sums of e = dst - shift and e*e per channel into
	// stats[2c*cout:] and stats[(2c+1)*cout:].
	shift, stats []float32
	// im is the implementation the whole call runs on (loaded once, so
	// that the chunks and the moments' layout agree).
	im *impl
}

// w34Scratch is one goroutine's working memory for a chunk of nt tiles:
// matrices indexed by a tile position (30 of the 5x6 patch or transformed
// tile) hold one row per position of nt*ch values, tile major and channel
// minor, at a stride padded by winoPad.
type w34Scratch struct {
	d  []float32 // input patches, [30][nt*cin]
	v  []float32 // transformed input, [30][nt*cin]
	vb []uint16  // the same in bfloat16 (Conv3x3Winograd34BF16)
	// ab and bb are Conv3x3Winograd34WeightGradBF16's operands in pair
	// rows (pairOperands).
	ab, bb []uint16
	amx    amxScratch // the AMX paths' plan and operands
	mm     []float32  // products or transformed output gradients, [30][nt*cout]
	zero   []float32  // max(cin, cout) zeros: padding, a missing bias or residual
	sink   []float32  // cout values written for output pixels outside the image
	// tab is w34Args.table's for images of tabHW (h, w).
	tab   []int32
	tabHW [2]int
}

var w34Pool = sync.Pool{New: func() any { return new(w34Scratch) }}

// winograd34 checks and runs an F(3x4) convolution whose weights wg
// already holds; fn names the caller in panics.
func winograd34(limit int, wg w34Args, fn string, src []float32, batch, cin, h, w, cout int, bias, residual []float32, relu bool, dst []float32) {
	m := checkConv3x3(fn, batch, cin, h, w, cout, src, dst, bias, residual)
	if m == 0 || cout == 0 {
		return
	}
	wg.src, wg.cin, wg.h, wg.w, wg.th, wg.tw = src, cin, h, w, (h+2)/3, (w+3)/4
	wg.cout, wg.bias, wg.residual, wg.relu, wg.dst = cout, bias, residual, relu, dst
	tiles := batch * wg.th * wg.tw
	if wg.im == nil {
		wg.im = cur.Load()
	}
	ct := w34ChunkTiles(&wg, wg.im, cout)
	chunks := (tiles + ct - 1) / ct
	// As winograd: only the threads other calls in flight leave idle,
	// and only when each gets about minWorkPerThread multiply-adds.
	busy := int(callsInFlight.Add(1))
	defer callsInFlight.Add(-1)
	work := tiles * w34Pos * cin * cout
	nt := min(threadsOf(limit)-busy+1, max(1, work/minWorkPerThread), chunks)
	if nt <= 1 {
		for c := range chunks {
			wg.chunk(c*ct, min((c+1)*ct, tiles))
		}
		return
	}
	p := new(w34Args) // shared with the other goroutines
	*p = wg
	runChunks(nt, chunks, func(c int) { p.chunk(c*ct, min((c+1)*ct, tiles)) })
}

// table returns, for the tile positions p of one image (th*tw, row
// major), w34Entry pixel indices y*w+x per position, or -1 outside the
// image: the 30 of its 5x6 input patch (6*row+column) and the 12 of its
// 3x4 output tile (4*row+column). It is built once per scratch and
// geometry.
func (a *w34Args) table(sc *w34Scratch) []int32 {
	per := a.th * a.tw
	if sc.tabHW == [2]int{a.h, a.w} && len(sc.tab) == w34Entry*per {
		return sc.tab
	}
	if cap(sc.tab) < w34Entry*per {
		sc.tab = make([]int32, w34Entry*per)
	}
	tab := sc.tab[:w34Entry*per]
	pixel := func(y, x int) int32 {
		if y < 0 || y >= a.h || x < 0 || x >= a.w {
			return -1
		}
		return int32(y*a.w + x)
	}
	for p := range per {
		y0, x0 := 3*(p/a.tw), 4*(p%a.tw) // the tile's top left output
		row := tab[w34Entry*p:][:w34Entry]
		for i := range 5 {
			for j := range 6 {
				row[6*i+j] = pixel(y0-1+i, x0-1+j)
			}
		}
		for r := range 3 {
			for c := range 4 {
				row[w34Pos+4*r+c] = pixel(y0+r, x0+c)
			}
		}
	}
	sc.tab, sc.tabHW = tab, [2]int{a.h, a.w}
	return tab
}

// gatherIn writes the transformed input patches of tiles [t0, t1) into
// sc.v ([30][nt*cin] at row stride is): with the SIMD loops when cin is a
// whole number of vectors, straight from the image, else through the
// gathered copy sc.d and w34In.
func (a *w34Args) gatherIn(im *impl, sc *w34Scratch, t0, t1, is int) {
	a.gatherInTo(im, sc, t0, t1, is, false)
}

// gatherInTo is gatherIn that, when bf16 is set and the AVX-512 BF16 loops
// can (cin a multiple of 16), writes the transform rounded to bfloat16
// into sc.vb (the same row strides, is) instead, with the rounding in the
// transform's store (w34GatherTilesBF16AVX512: ToBF16's values, without a
// pass of its own over sc.v); it reports whether it did.
func (a *w34Args) gatherInTo(im *impl, sc *w34Scratch, t0, t1, is int, bf16 bool) (rounded bool) {
	cin, nt := a.cin, t1-t0
	sc.v = grow(sc.v, w34Pos*is)
	rounded = bf16 && im.avx512Loops && im.bf16 != nil && cin%16 == 0
	if rounded {
		sc.vb = grow16(sc.vb, w34Pos*is)
	}
	tab, per, hw := a.table(sc), a.th*a.tw, a.h*a.w
	zero := sc.zero[:cin]
	if im.avx2Loops && cin%8 == 0 {
		// Run by run of the tiles of one image: the loops take the tile
		// table's rows and build each tile's pointers themselves, and
		// fetch the next image into the cache, a share per tile, while
		// this one is transformed (the loads of rows not seen before
		// stalled the loop: 20% of the 32x4 Connect Four net's float32
		// training step).
		img := hw * cin
		pfl := (img/16 + per - 1) / per // cache lines per tile
		for r := range imageRuns(t0, t1, per) {
			src, row, z := &a.src[r.n*img], &tab[w34Entry*r.p], &zero[0]
			pf, lines := z, 0
			if (r.n+2)*img <= len(a.src) {
				pf, lines = &a.src[(r.n+1)*img+min(r.p*pfl*16, img-1)], pfl
			}
			switch {
			case rounded:
				w34GatherTilesBF16AVX512(&sc.v[(r.t-t0)*cin], is, &sc.vb[(r.t-t0)*cin], is, src, row, z, cin, r.k, pf, lines)
			case im.avx512Loops && cin%16 == 0:
				w34GatherTilesAVX512(&sc.v[(r.t-t0)*cin], is, src, row, z, cin, r.k, pf, lines)
			default:
				w34GatherTilesAVX2(&sc.v[(r.t-t0)*cin], is, src, row, z, cin, r.k, pf, lines)
			}
		}
		return rounded
	}
	sc.d = grow(sc.d, w34Pos*is)
	for t := t0; t < t1; t++ {
		img := a.src[(t/per)*hw*cin:]
		for q, o := range tab[w34Entry*(t%per):][:w34Pos] {
			px := zero
			if o >= 0 {
				px = img[int(o)*cin:][:cin]
			}
			copy(sc.d[q*is+(t-t0)*cin:][:cin], px)
		}
	}
	w34In(sc.v, is, sc.d, is, nt*cin)
	return false
}

// w34In applies the input transform to n columns: for each column j, the
// 5x6 patch d[p*ds+j] (p = 6*row+column) becomes v[e*vs+j] = (B3^T d
// B4)[e] (e = 6*k+l), first down the columns (s = B3^T d), then along the
// rows. Products by 3 and 5 are rounded on their own (float32(...): no
// fused multiply-add), as w34GatherIn<w> computes them; the other products
// are by powers of two, exact.
func w34In(v []float32, vs int, d []float32, ds int, n int) {
	for j := range n {
		var s [5][6]float32
		for c := range 6 {
			d0, d1, d2, d3, d4 := d[c*ds+j], d[(6+c)*ds+j], d[(12+c)*ds+j], d[(18+c)*ds+j], d[(24+c)*ds+j]
			s[0][c] = (d0 - d2) + 2*(d3-d1)
			s[1][c] = (d2 - d1) + 2*d3
			s[2][c] = (d1 - float32(3*d2)) + 2*d3
			s[3][c] = d3 - d1
			s[4][c] = (d1 - 2*d2) + (2*d4 - d3)
		}
		for k := range 5 {
			s0, s1, s2, s3, s4, s5 := s[k][0], s[k][1], s[k][2], s[k][3], s[k][4], s[k][5]
			o := 6 * k * vs
			v[o+j] = (4*s0 - float32(5*s2)) + s4
			v[o+vs+j] = (s3 + s4) - 4*(s1+s2)
			v[o+2*vs+j] = (s4 - s3) + 4*(s1-s2)
			v[o+3*vs+j] = (s4 - s2) + 2*(s3-s1)
			v[o+4*vs+j] = (s4 - s2) - 2*(s3-s1)
			v[o+5*vs+j] = (4*s1 - float32(5*s3)) + s5
		}
	}
}

// w34OutColumn returns column j of one tile's output transform, y =
// (A3^T m A4) (3x4, q = 4*row+column) from the 5x6 products m[e*ms+j]:
// down the columns, then along the rows.
func w34OutColumn(m []float32, ms, j int) (y [w34Outs]float32) {
	var t [3][6]float32
	for c := range 6 {
		m0, m1, m2, m3, m4 := m[c*ms+j], m[(6+c)*ms+j], m[(12+c)*ms+j], m[(18+c)*ms+j], m[(24+c)*ms+j]
		t[0][c] = (m0 + m1) + (m2 + 4*m3)
		t[1][c] = (m1 - m2) + 2*m3
		t[2][c] = (m1 + m2) + (m3 + m4)
	}
	for r := range 3 {
		t0, t1, t2, t3, t4, t5 := t[r][0], t[r][1], t[r][2], t[r][3], t[r][4], t[r][5]
		p, q := t1+t2, t1-t2
		u, v := t3+t4, t3-t4
		y[4*r] = (t0 + p) + u
		y[4*r+1] = q + 2*v
		y[4*r+2] = p + 4*u
		y[4*r+3] = (q + 8*v) + t5
	}
	return y
}

// chunk computes the output tiles [t0, t1) (tile index (n*th+ty)*tw+tx):
// gather and transform the input patches, multiply by the transformed
// weights (30 GEMMs), transform back and store (or store and sum).
func (a *w34Args) chunk(t0, t1 int) {
	sc := w34Pool.Get().(*w34Scratch)
	defer w34Pool.Put(sc)
	nt := t1 - t0
	cin, cout := a.cin, a.cout
	is, os := nt*cin+winoPad, nt*cout+winoPad
	if cap(sc.zero) < max(cin, cout) {
		sc.zero = make([]float32, max(cin, cout))
	}
	sc.mm = grow(sc.mm, w34Pos*os)
	sc.sink = grow(sc.sink, cout)
	im := a.im
	rounded := a.gatherInTo(im, sc, t0, t1, is, a.ub != nil)
	if a.ub != nil {
		a.productsBF16(im, sc, nt, is, os, rounded)
	} else {
		for e := range w34Pos {
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
	var s1, s2 []float32
	if a.stats != nil {
		c := t0 / w34ChunkTiles(a, a.im, cout)
		s1, s2 = a.stats[2*c*cout:][:cout], a.stats[(2*c+1)*cout:][:cout]
	}
	tab, per, hw := a.table(sc), a.th*a.tw, a.h*a.w
	var out, res [w34Outs]*float32 // on the stack: no write barriers
	var keep [w34Outs]uint32
	img := hw * cout // values of one output image
	for t := t0; t < t1; t++ {
		base := (t / per) * hw
		if next := (base + hw) * cout; im.avx2Loops && next+img <= len(a.dst) {
			// As gatherIn: the next image's outputs and residual.
			w34Prefetch(a.dst[next:][:img], t%per, per)
			if a.residual != nil {
				w34Prefetch(a.residual[next:][:img], t%per, per)
			}
		}
		for q, o := range tab[w34Entry*(t%per)+w34Pos:][:w34Outs] {
			if o < 0 {
				out[q], res[q], keep[q] = &sc.sink[0], &sc.zero[0], 0
				continue
			}
			k := (base + int(o)) * cout
			out[q], res[q], keep[q] = &a.dst[k], &sc.zero[0], ^uint32(0)
			if a.residual != nil {
				res[q] = &a.residual[k]
			}
		}
		m := sc.mm[(t-t0)*cout:]
		if a.stats != nil {
			w34OutStats(im, m, os, &out, &keep, a.shift, s1, s2)
		} else {
			w34OutStore(im, m, os, &out, &res, bias, lo)
		}
	}
}

// w34Prefetch fetches share k of parts of x into the cache (whole cache
// lines, PREFETCHT0, four runs of lines of a quarter of the share each):
// a loop over the parts tiles of an image calls it with the next image,
// one share per tile (fetching a whole image at once stalled on the
// prefetches). It needs the SIMD loops (prefetch4).
func w34Prefetch(x []float32, k, parts int) {
	n := len(x)
	lo, hi := k*n/parts, (k+1)*n/parts
	if hi <= lo {
		return
	}
	q := (hi - lo + 3) / 4
	var p [4]*float32
	for i := range p {
		p[i] = &x[min(lo+i*q, n-1)]
	}
	prefetch4(&p, (4*q+63)/64)
}

// w34At returns p advanced by j float32s.
func w34At(p *float32, j int) *float32 { return (*float32)(unsafe.Add(unsafe.Pointer(p), 4*j)) }

// w34Shifted returns the pointers of p, each advanced by j float32s.
func w34Shifted(p *[w34Outs]*float32, j int) (s [w34Outs]*float32) {
	for q := range p {
		s[q] = w34At(p[q], j)
	}
	return s
}

// w34OutStore applies the output transform to one tile and stores it: for
// each column j < len(bias) of the 30 products m[e*ms+j], the 12 outputs
// y_q (w34OutColumn) become out[q][j] = max(y_q + bias[j] + res[q][j],
// lo), the sum unless lo is greater (so NaN and -0 pass through). out[q]
// and res[q] point at len(bias) values; res[q] may be out[q].
// w34OutStoreAVX2 and w34OutStoreAVX512 do the same operations in the
// same order.
func w34OutStore(im *impl, m []float32, ms int, out, res *[w34Outs]*float32, bias []float32, lo float32) {
	n, j := len(bias), 0
	if im.avx512Loops && n >= 16 {
		j = n / 16 * 16
		w34OutStoreAVX512(&m[0], ms, out, res, &bias[0], lo, j)
	}
	if im.avx2Loops && n-j >= 8 {
		k := (n - j) / 8 * 8
		o, r := w34Shifted(out, j), w34Shifted(res, j)
		w34OutStoreAVX2(&m[j], ms, &o, &r, &bias[j], lo, k)
		j += k
	}
	for ; j < n; j++ {
		for q, y := range w34OutColumn(m, ms, j) {
			v := y + bias[j] + *w34At(res[q], j)
			if v < lo {
				v = lo
			}
			*w34At(out[q], j) = v
		}
	}
}

// w34OutStats applies the output transform to one tile, stores it as it
// is and sums it for batch norm: for each column j < len(shift) of the
// 30 products m[e*ms+j], the 12 outputs y_q (w34OutColumn) become
// out[q][j] = y_q, and with e_q = (y_q - shift[j]) AND keep[q] (all ones,
// or zero for an output outside the image), s1[j] += e_0 + ... + e_11 and
// s2[j] += e_0*e_0 + ... + e_11*e_11, summed in order in float32 before
// the addition to s1 and s2. w34OutStatsAVX2 and w34OutStatsAVX512 do the
// same operations in the same order.
func w34OutStats(im *impl, m []float32, ms int, out *[w34Outs]*float32, keep *[w34Outs]uint32, shift, s1, s2 []float32) {
	n, j := len(shift), 0
	if im.avx512Loops && n >= 16 {
		j = n / 16 * 16
		w34OutStatsAVX512(&m[0], ms, out, keep, &shift[0], &s1[0], &s2[0], j)
	}
	if im.avx2Loops && n-j >= 8 {
		k := (n - j) / 8 * 8
		o := w34Shifted(out, j)
		w34OutStatsAVX2(&m[j], ms, &o, keep, &shift[j], &s1[j], &s2[j], k)
		j += k
	}
	for ; j < n; j++ {
		var sum, sq float32
		for q, y := range w34OutColumn(m, ms, j) {
			*w34At(out[q], j) = y
			e := math.Float32frombits(math.Float32bits(y-shift[j]) & keep[q])
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

// w34GradStart checks the arguments of a F(3x4) weight gradient (fn names
// it in panics) and returns its tile arguments, its number of tiles and a
// scratch from w34Pool, which the caller puts back; the scratch is nil
// when there is nothing to compute.
func w34GradStart(fn string, src []float32, batch, cin, h, w int, dy []float32, cout int, du []float32) (w34Args, int, *w34Scratch) {
	m := checkWeightGrad(fn, batch, cin, h, w, cout, src, dy, du, w34Pos)
	if m == 0 || cin == 0 || cout == 0 {
		return w34Args{}, 0, nil
	}
	a := w34Args{src: src, cin: cin, h: h, w: w, th: (h + 2) / 3, tw: (w + 3) / 4, cout: cout, dst: dy}
	sc := w34Pool.Get().(*w34Scratch)
	if cap(sc.zero) < max(cin, cout) {
		sc.zero = make([]float32, max(cin, cout))
	}
	return a, batch * a.th * a.tw, sc
}

// Conv3x3Winograd34WeightGrad adds to du ([30][cin][cout], as
// WinogradWeights34 writes U) the gradient of the F(3x4,3x3) transformed
// weights of a 3x3 "same" convolution of the NHWC batch src
// (batch*h*w*cin values) whose output gradient is dy (NHWC [batch*h*w,
// cout]): du_e += sum over tiles of (B3^T d B4)_e^T (A3 dy A4^T)_e.
// WinogradWeights34Grad turns du into the gradient of the [9*cin, cout]
// weights. It runs on the calling goroutine alone (callers split the
// batch) and allocates nothing in steady state.
func Conv3x3Winograd34WeightGrad(src []float32, batch, cin, h, w int, dy []float32, cout int, du []float32) {
	a, tiles, sc := w34GradStart("Conv3x3Winograd34WeightGrad", src, batch, cin, h, w, dy, cout, du)
	if sc == nil {
		return
	}
	defer w34Pool.Put(sc)
	im := cur.Load()
	plane := cin * cout
	for t0 := 0; t0 < tiles; t0 += w34GradChunk {
		t1 := min(t0+w34GradChunk, tiles)
		nt := t1 - t0
		is, os := nt*cin+winoPad, nt*cout+winoPad
		a.gatherIn(im, sc, t0, t1, is)
		sc.mm = grow(sc.mm, w34Pos*os)
		a.gradOut(im, sc, t0, t1, os)
		for e := range w34Pos {
			if !directGemm(im, true, cin, cout, nt, sc.v[e*is:], cin, sc.mm[e*os:], cout, true, du[e*plane:], cout) {
				gemm(1, true, false, cin, cout, nt, 1, sc.v[e*is:], cin, sc.mm[e*os:], cout, 1, du[e*plane:], cout, nil, nil, false)
			}
		}
	}
}

// gradOut writes the transformed output gradients dM = A3 dY A4^T of tiles
// [t0, t1) into sc.mm ([30][nt*cout] at row stride os); a.dst is dY.
func (a *w34Args) gradOut(im *impl, sc *w34Scratch, t0, t1, os int) {
	cout := a.cout
	tab, per, hw := a.table(sc), a.th*a.tw, a.h*a.w
	var y [w34Outs]*float32 // on the stack: no write barriers
	for t := t0; t < t1; t++ {
		base := (t / per) * hw
		for q, o := range tab[w34Entry*(t%per)+w34Pos:][:w34Outs] {
			y[q] = &sc.zero[0]
			if o >= 0 {
				y[q] = &a.dst[(base+int(o))*cout]
			}
		}
		w34GradOut(im, sc.mm[(t-t0)*cout:], os, &y, cout)
	}
}

// w34GradOut applies the transform of the output gradient to n columns:
// for each column j, the 3x4 values y[q][j] (q = 4*row+column; y[q]
// points at n values) become v[e*vs+j] = (A3 dY A4^T)[e] (e = 6*i+l),
// first down the columns (s = A3 dY, 5x4), then along the rows.
// w34GradOutAVX2 and w34GradOutAVX512 do the same operations in the same
// order (every product is by a power of two, exact).
func w34GradOut(im *impl, v []float32, vs int, y *[w34Outs]*float32, n int) {
	j := 0
	if im.avx512Loops && n >= 16 {
		j = n / 16 * 16
		w34GradOutAVX512(&v[0], vs, y, j)
	}
	if im.avx2Loops && n-j >= 8 {
		k := (n - j) / 8 * 8
		p := w34Shifted(y, j)
		w34GradOutAVX2(&v[j], vs, &p, k)
		j += k
	}
	for ; j < n; j++ {
		var s [5][4]float32
		for c := range 4 {
			y0, y1, y2 := *w34At(y[c], j), *w34At(y[4+c], j), *w34At(y[8+c], j)
			s[0][c] = y0
			s[1][c] = (y0 + y1) + y2
			s[2][c] = (y0 - y1) + y2
			s[3][c] = (4*y0 + 2*y1) + y2
			s[4][c] = y2
		}
		for i := range 5 {
			s0, s1, s2, s3 := s[i][0], s[i][1], s[i][2], s[i][3]
			o := 6 * i * vs
			v[o+j] = s0
			v[o+vs+j] = (s0 + s1) + (s2 + s3)
			v[o+2*vs+j] = (s0 - s1) + (s2 - s3)
			v[o+3*vs+j] = (s0 + 2*s1) + (4*s2 + 8*s3)
			v[o+4*vs+j] = (s0 - 2*s1) + (4*s2 - 8*s3)
			v[o+5*vs+j] = s3
		}
	}
}
