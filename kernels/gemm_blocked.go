package kernels

import (
	"sync"
	"unsafe"
)

// The blocked GEMM driver used by the SIMD implementations.
//
// C is computed in mr x nr register tiles by an assembly micro-kernel. A is
// read in place (row-major, or column-major with transA): with N of a few
// strips every row of A is loaded from memory once, so packing it would cost
// as much as the multiply. op(B) is read in place when it is row-major and
// n is a multiple of nr; otherwise (transB, or the last partial strip) it is
// packed once per call into zero-padded strips of nr columns (packing every
// strip was measured: no gain on large M, up to 30% loss on small M). Rows are walked
// tile by tile and, for each row tile and K block, every B strip
// (which stays in L2) is applied while the A micro-panel stays in L1.
// K blocks are the middle loop, so a row tile of C stays in L1 while its
// K blocks accumulate; all of op(B) is meant to stay in L2 (it is the
// weights of one layer: 9*Cin x Cout floats).
// Row tails use kernels with fewer rows (tileSet.tail); tiles with a column
// tail are computed into a small scratch tile and merged into C in Go.

// tileKernel computes one mr x nr tile. With a(i,p) = a[i*lda+p] (kern) or
// a[p*lda+i] (kernT) and b(p,j) = b[p*ldb+j]:
//
//	acc(i,j) = sum_{p<k} a(i,p)*b(p,j)
//	if flags&kAlpha:    acc *= alpha
//	if flags&kLoadC:    acc += c[i*ldc+j]
//	if flags&kBias:     acc += bias[j]
//	if flags&kResidual: acc += res[i*ldc+j]
//	if flags&kReLU:     acc = max(acc, 0)
//	c[i*ldc+j] = acc
//
// for i < mr, j < nr. Leading dimensions are in elements; k >= 1. While it
// runs, the kernel prefetches 32*k bytes from address pf into the caches
// (two cache lines per four k steps); pf is a bare address, never
// dereferenced, so any value is safe.
type tileKernel func(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, alpha float32, bias, res *float32, flags int, pf uintptr)

// tileSet is one register-tile shape: kern and kernT compute mr x nr tiles
// (A row-major and transposed), tail[r] and tailT[r] the same with r < mr
// rows (tail[0] is nil).
type tileSet struct {
	mr, nr      int
	kern, kernT tileKernel
	tail, tailT []tileKernel
}

// kernel returns the micro-kernel of a row tile of rows <= mr rows, A
// transposed or not.
func (ts *tileSet) kernel(transA bool, rows int) tileKernel {
	switch {
	case transA && rows < ts.mr:
		return ts.tailT[rows]
	case transA:
		return ts.kernT
	case rows < ts.mr:
		return ts.tail[rows]
	}
	return ts.kern
}

// Micro-kernel flags (see tileKernel); the assembly generator uses the same
// values.
const (
	kAlpha    = 1
	kLoadC    = 2
	kBias     = 4
	kResidual = 8
	kReLU     = 16
)

// kcMax is the largest K block; larger K is split into equal blocks.
const kcMax = 1024

// Operands larger than the caches (a dense layer of thousands of features
// on a minibatch of thousands, as in study 002's PPO network) take the
// "large" loop order instead: op(B) is packed whole into contiguous
// strips, and the loops run over blocks of largeNC columns, then blocks
// of at most kcLarge of K, then the row tiles, so that a packed block of
// B (kcLarge x largeNC floats, 512 KB) stays in L2 while every row tile
// of the call passes over it, and a row tile of C is loaded and stored
// once per K block. A transposed A (the weight gradient's X^T, whose
// micro-panel is six floats from each of kc rows) is packed into
// contiguous micro-panels first, panelTiles row tiles at a time
// (packPanels). The conv shapes keep the order
// above: their B (the weights, 9 x Cin x Cout) fits L2 whole.
const (
	// largeB is the op(B) size, in floats, from which a call with at
	// least largeM rows is large (1 MiB; Sequence's 128-channel
	// convolution weights are 590 KB). With fewer rows (an LSTM step of a
	// few environments) packing B whole would cost more than the products.
	largeB = 1 << 18
	largeM = 64
	// kcLarge is the largest K block of a large call.
	kcLarge = 256
	// largeNC is the columns of B per block of a large call.
	largeNC = 512
	// panelTiles is the row tiles of a transposed A packed at a time in
	// a large call: each row of A^T's block is then read as one run of
	// panelTiles*mr floats rather than once per tile (a page per row: the
	// TLB misses were the packing's cost).
	panelTiles = 8
)

// Tile sizes bound by the scratch buffers.
const (
	maxMR = 16
	maxNR = 64
)

// scratch is per-goroutine working memory of the blocked path.
type scratch struct {
	tile  [maxMR * maxNR]float32 // tiles with a column tail land here
	panel []float32              // a transposed A's micro-panels, packed (large calls)
	cols  []float32              // im2col rows of a fused convolution (convRows)
	rows  [8]*uint16             // A's row pointers for the implicit BF16 kernels (implicitRows)
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// bpPool holds buffers for packed B. Unlike a sync.Pool it keeps them
// across garbage collections (a large call's packed B is megabytes, and
// a sync.Pool emptied by every collection made it an allocation every
// few calls): it holds at most one buffer per call that ran at once, each
// as large as the largest B it packed.
var bpPool bufStack

// bufStack is a stack of reusable float32 buffers, safe for concurrent use.
type bufStack struct {
	mu   sync.Mutex
	bufs []*[]float32
}

// Get returns a buffer from the stack, or a new empty one.
func (s *bufStack) Get() *[]float32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.bufs); n > 0 {
		b := s.bufs[n-1]
		s.bufs[n-1] = nil
		s.bufs = s.bufs[:n-1]
		return b
	}
	return new([]float32)
}

// Put returns b to the stack.
func (s *bufStack) Put(b *[]float32) {
	s.mu.Lock()
	s.bufs = append(s.bufs, b)
	s.mu.Unlock()
}

// prepareBlocked packs the parts of op(B) the kernels cannot read in place
// and picks the K block. It returns the pooled buffer to release (or nil).
func (g *gemmArgs) prepareBlocked() *[]float32 {
	g.large = isLarge(g.m, g.n, g.k)
	kb := kcMax
	if g.large {
		kb = kcLarge
	}
	nb := (g.k + kb - 1) / kb
	g.kc = (g.k + nb - 1) / max(nb, 1)
	nr := g.ts.nr
	strips := (g.n + nr - 1) / nr
	first := 0 // first strip to pack
	if !g.transB && !g.large {
		first = g.n / nr
	}
	if first == strips || g.k == 0 {
		g.bp = nil
		return nil
	}
	bufp := bpPool.Get()
	need := (strips - first) * g.k * nr
	if cap(*bufp) < need {
		*bufp = make([]float32, need)
	}
	bp := (*bufp)[:need]
	for s := first; s < strips; s++ {
		dst := bp[(s-first)*g.k*nr : (s-first+1)*g.k*nr]
		j0 := s * nr
		w := min(nr, g.n-j0)
		if g.transB {
			for p := range g.k {
				row := dst[p*nr : p*nr+nr]
				for jj := range w {
					row[jj] = g.b[(j0+jj)*g.ldb+p]
				}
				clear(row[w:])
			}
		} else {
			for p := range g.k {
				row := dst[p*nr : p*nr+nr]
				copy(row, g.b[p*g.ldb+j0:p*g.ldb+j0+w])
				clear(row[w:])
			}
		}
	}
	g.bp = bp
	return bufp
}

// bStrip returns where strip s of op(B) starts at K offset p0, and its
// leading dimension.
func (g *gemmArgs) bStrip(s, p0 int) (*float32, int) {
	nr := g.ts.nr
	first := 0
	if !g.transB && !g.large {
		first = g.n / nr
		if s < first {
			return &g.b[p0*g.ldb+s*nr], g.ldb
		}
	}
	return &g.bp[(s-first)*g.k*nr+p0*nr], nr
}

// blockedRows computes rows [lo, hi) of C with the micro-kernels.
func (g *gemmArgs) blockedRows(lo, hi int) {
	n, k, ldc := g.n, g.k, g.ldc
	if k == 0 {
		g.emptyK(lo, hi)
		return
	}
	if g.beta != 0 && g.beta != 1 {
		for i := lo; i < hi; i++ {
			cr := g.c[i*ldc : i*ldc+n]
			for j := range cr {
				cr[j] *= g.beta
			}
		}
	}
	sc := scratchPool.Get().(*scratch)
	if g.large {
		g.largeRows(sc, lo, hi)
		scratchPool.Put(sc)
		return
	}
	mr, nr := g.ts.mr, g.ts.nr
	strips := (n + nr - 1) / nr
	for i0 := lo; i0 < hi; i0 += mr {
		rows := min(mr, hi-i0)
		for p0 := 0; p0 < k; p0 += g.kc {
			kc := min(g.kc, k-p0)
			flags := g.blockFlags(p0, kc)
			kern := g.ts.kernel(g.transA, rows)
			var ap *float32
			if g.transA {
				ap = &g.a[p0*g.lda+i0]
			} else {
				ap = &g.a[i0*g.lda+p0]
			}
			lda := g.lda
			// The first strip prefetches the next row tile of A (the rows
			// after this tile are contiguous when lda == k), which the
			// hardware prefetchers, seeing mr short streams, fetch late.
			// Measured on the conv shapes with batch 256 and Cout 64
			// (A streamed from DRAM): +20-40% on avx2 and avx512.
			pf := uintptr(unsafe.Pointer(ap))
			if !g.transA && rows == mr {
				pf += uintptr(mr * g.lda * 4)
			}
			g.runStrips(sc, kern, kc, ap, lda, i0, rows, p0, 0, strips, flags, pf)
		}
	}
	scratchPool.Put(sc)
}

// packPanels packs rows [r0, r1) of op(A) = A^T over the K block [p0,
// p0+kc) into sc.panel as micro-panels of mr rows: tile t's a(i, p) at
// panel[t*kc*mr+p*mr+i] (a last partial tile's missing rows are not
// read by its tail kernel). Each row p of A is read once, as one run.
func (g *gemmArgs) packPanels(sc *scratch, p0, kc, r0, r1 int) {
	mr := g.ts.mr
	tiles := (r1 - r0 + mr - 1) / mr
	if cap(sc.panel) < panelTiles*kcLarge*maxMR {
		sc.panel = make([]float32, panelTiles*kcLarge*maxMR)
	}
	panel := sc.panel[:tiles*kc*mr]
	for p := range kc {
		src := g.a[(p0+p)*g.lda+r0 : (p0+p)*g.lda+r1]
		for t := range tiles {
			copy(panel[t*kc*mr+p*mr:t*kc*mr+p*mr+mr], src[t*mr:min(len(src), t*mr+mr)])
		}
	}
}

// isLarge reports whether an m x n x k GEMM takes the large loop order
// (see largeB).
func isLarge(m, n, k int) bool { return k*n >= largeB && m >= largeM }

// blockFlags returns the micro-kernel flags of the K block [p0, p0+kc):
// C is loaded after the first block (or with beta), the bias and residual
// come with the first, ReLU with the last.
func (g *gemmArgs) blockFlags(p0, kc int) int {
	flags := 0
	if g.alpha != 1 {
		flags |= kAlpha
	}
	if p0 > 0 || g.beta != 0 {
		flags |= kLoadC
	}
	if p0 == 0 {
		if g.bias != nil {
			flags |= kBias
		}
		if g.residual != nil {
			flags |= kResidual
		}
	}
	if p0+kc == g.k && g.relu {
		flags |= kReLU
	}
	return flags
}

// largeRows is blockedRows in the large loop order (see largeB): blocks
// of columns, then of K, then row tiles, with op(B) packed whole (g.bp)
// and a transposed A packed panelTiles row tiles at a time into sc.panel
// (packPanels).
func (g *gemmArgs) largeRows(sc *scratch, lo, hi int) {
	mr, nr := g.ts.mr, g.ts.nr
	strips := (g.n + nr - 1) / nr
	per := max(1, largeNC/nr) // strips per column block
	for s0 := 0; s0 < strips; s0 += per {
		s1 := min(strips, s0+per)
		for p0 := 0; p0 < g.k; p0 += g.kc {
			kc := min(g.kc, g.k-p0)
			flags := g.blockFlags(p0, kc)
			for i0 := lo; i0 < hi; i0 += mr {
				rows := min(mr, hi-i0)
				kern := g.ts.kernel(g.transA, rows)
				var ap *float32
				lda := g.lda
				if !g.transA {
					ap = &g.a[i0*g.lda+p0]
				} else {
					// Row tile t of each group of panelTiles (counted
					// from lo) is packed at panel[t*kc*mr:], a(i, p) =
					// panel[t*kc*mr+p*mr+i]: kernT with lda mr.
					t := (i0 - lo) / mr % panelTiles
					if t == 0 {
						g.packPanels(sc, p0, kc, i0, min(hi, i0+panelTiles*mr))
					}
					ap, lda = &sc.panel[t*kc*mr], mr
				}
				// As blockedRows: the first strip prefetches the next row
				// tile of A (in place only).
				pf := uintptr(unsafe.Pointer(ap))
				if !g.transA && rows == mr {
					pf += uintptr(mr * g.lda * 4)
				}
				g.runStrips(sc, kern, kc, ap, lda, i0, rows, p0, s0, s1, flags, pf)
			}
		}
	}
}

// runStrips applies one row tile of A (rows rows from row i0; its micro-
// panel ap with leading dimension lda, kc steps from K offset p0) to
// strips [s0, s1) of op(B) with kern, under the K block's flags: full
// strips straight into C, a column tail through sc.tile and mergeTile.
// The first strip prefetches pf, the others the panel itself.
func (g *gemmArgs) runStrips(sc *scratch, kern tileKernel, kc int, ap *float32, lda, i0, rows, p0, s0, s1, flags int, pf uintptr) {
	nr, ldc := g.ts.nr, g.ldc
	for s := s0; s < s1; s++ {
		if s > s0 {
			pf = uintptr(unsafe.Pointer(ap))
		}
		j0 := s * nr
		bptr, ldb := g.bStrip(s, p0)
		cols := min(nr, g.n-j0)
		if cols == nr {
			var bias, res *float32
			if flags&kBias != 0 {
				bias = &g.bias[j0]
			}
			if flags&kResidual != 0 {
				res = &g.residual[i0*ldc+j0]
			}
			kern(kc, ap, lda, bptr, ldb, &g.c[i0*ldc+j0], ldc, g.alpha, bias, res, flags, pf)
			continue
		}
		kern(kc, ap, lda, bptr, ldb, &sc.tile[0], nr, g.alpha, nil, nil, flags&kAlpha, pf)
		g.mergeTile(sc.tile[:rows*nr], nr, i0, j0, rows, cols, flags)
	}
}

// mergeTile applies the kernel epilogue of flags (except kAlpha, already
// applied) to the rows x cols corner of tile and stores it into C: per
// element v = tile (+ C) (+ bias) (+ residual), then the ReLU, the
// kernels' order. It runs each part as its own pass over the row, so the
// common epilogues (none, or kLoadC alone) are a copy, or an add and a
// copy. (A product narrower than its tiles is all tail: 48 output
// channels on 64-wide tiles spent about half of a 48-channel network's
// inference here when the flags were tested per element.)
func (g *gemmArgs) mergeTile(tile []float32, ldt, i0, j0, rows, cols int, flags int) {
	for i := range rows {
		// The parts go into tile's row (scratch), read C and the residual
		// before C is written (the residual may be C itself: in place).
		t := tile[i*ldt : i*ldt+cols]
		cr := g.c[(i0+i)*g.ldc+j0 : (i0+i)*g.ldc+j0+cols]
		if flags&kLoadC != 0 {
			for j, c := range cr[:len(t)] {
				t[j] += c
			}
		}
		if flags&kBias != 0 {
			for j, b := range g.bias[j0 : j0+len(t)] {
				t[j] += b
			}
		}
		if flags&kResidual != 0 {
			for j, r := range g.residual[(i0+i)*g.ldc+j0 : (i0+i)*g.ldc+j0+len(t)] {
				t[j] += r
			}
		}
		if flags&kReLU != 0 {
			for j, v := range t {
				if v < 0 {
					t[j] = 0
				}
			}
		}
		copy(cr, t)
	}
}

// emptyK handles k == 0: C = beta*C (+ bias + residual, relu).
func (g *gemmArgs) emptyK(lo, hi int) {
	for i := lo; i < hi; i++ {
		cr := g.c[i*g.ldc : i*g.ldc+g.n]
		g.initRow(i, cr)
		g.finishRow(cr)
	}
}

// directGemm computes C = op(A)*B (C += op(A)*B with loadC) on the
// calling goroutine when the blocked path would run it as one K block
// (k <= kcMax) with B read in place (n a multiple of the tile width) and
// no epilogue, and reports whether it did; else it does nothing and
// reports false. It calls the micro-kernels with the arguments
// blockedRows would pass them, in the same order, so C gets the same
// bits; it only skips the job, the pools and the per-tile flag logic
// around them, which cost about 6% of a training step of the 32x4
// Connect Four net, whose Winograd GEMMs are 48 x 32 x 32 (forward and
// input gradient, gemmOne) and 32 x 32 x 96 (weight gradient).
func directGemm(im *impl, transA bool, m, n, k int, a []float32, lda int, b []float32, ldb int, loadC bool, c []float32, ldc int) bool {
	ts := im.tilesFor(n)
	if ts == nil || n%ts.nr != 0 || k > kcMax || k == 0 || m <= 0 || isLarge(m, n, k) {
		return false
	}
	mr, nr := ts.mr, ts.nr
	// The operands' extents, checked once so that the kernels cannot read
	// or write past them.
	lastA := (m-1)*lda + k - 1
	if transA {
		lastA = (k-1)*lda + m - 1
	}
	if len(a) <= lastA || len(b) < (k-1)*ldb+n || len(c) < (m-1)*ldc+n {
		return false
	}
	flags := 0
	if loadC {
		flags = kLoadC
	}
	for i0 := 0; i0 < m; i0 += mr {
		rows := min(mr, m-i0)
		kern := ts.kernel(transA, rows)
		var ap *float32
		if transA {
			ap = &a[i0]
		} else {
			ap = &a[i0*lda]
		}
		pf := uintptr(unsafe.Pointer(ap))
		if !transA && rows == mr {
			pf += uintptr(mr * lda * 4)
		}
		for j0 := 0; j0 < n; j0 += nr {
			if j0 > 0 {
				pf = uintptr(unsafe.Pointer(ap))
			}
			kern(k, ap, lda, &b[j0], ldb, &c[i0*ldc+j0], ldc, 1, nil, nil, flags, pf)
		}
	}
	return true
}
