package kernels

import (
	"fmt"
	"math"
	"sync"
)

// bfloat16 inference: the 3x3 convolution with operands rounded to
// bfloat16 (8 significant bits) and products accumulated in float32.
//
// On a CPU with AVX-512 BF16 the micro-kernels (generated, gemm_amd64.s)
// run VDPBF16PS, which multiplies two pairs of bfloat16 values per float32
// lane and adds both products to the lane: twice the multiply-adds of an
// FMA per instruction. Its operands are laid out in pairs along K. A is
// bfloat16, row-major, with K padded to an even count; B (the weights) is
// packed once by PackBF16 into strips of nr columns, each k pair of a
// column one 32-bit word (even k in the low half), so that one 64-byte load
// holds 16 columns of a k pair.
//
// The portable code (bf16Args.genericRows) computes the same thing lane by lane in the
// instruction's order: per k pair, the odd product is added first, then
// the even one, each addition rounded to float32 (the products of two
// bfloat16 values are exact in float32), bfloat16 subnormals read as zero
// and float32 subnormal sums flushed to zero. K is never split into
// blocks, so the accumulation order is the same on both paths.

// bf16Kernel computes one mr x nr tile. With a(i,q) = a[i*lda+q] (bfloat16,
// lda even) and pair p of column j of B at b[(p*nr+j)*2 : (p*nr+j)*2+2]:
//
//	acc(i,j) = sum_{p<kp} a(i,2p)*b(2p,j) + a(i,2p+1)*b(2p+1,j)
//	if flags&kBias:     acc += bias[j]
//	if flags&kResidual: acc += res[i*ldc+j]
//	if flags&kReLU:     acc = max(acc, 0)
//	c[i*ldc+j] = acc
//
// for i < mr, j < nr.
type bf16Kernel func(kp int, a *uint16, lda int, b *uint16, c *float32, ldc int, bias, res *float32, flags int)

// bf16ConvKernel is bf16Kernel reading A in place from a bfloat16 image
// (implicit im2col): row i of A is 3 segments of 2*kp3 values, the first
// at rows[i], each next one skip values after the end of the previous
// one. For a 3x3 convolution over an image padded with a zero border
// these are the three kernel rows of the output pixel's window, and
// 2*kp3 = 3*cin (cin even, so that no pair spans two segments).
type bf16ConvKernel func(kp3 int, rows *[8]*uint16, skip int, b *uint16, c *float32, ldc int, bias, res *float32, flags int)

// bf16TileSet is one BF16 register-tile shape: kern computes mr x nr
// tiles, tail[r] the same with r < mr rows (tail[0] is nil), conv and
// convTail are their implicit-convolution forms, and kernT and tailT
// their forms reading A in pair rows: pair p of row i at a[p*lda+2*i :
// p*lda+2*i+2] (the rows of one k pair adjacent), as pairRowsBF16 writes
// two rows of a k x m matrix, so that a product with A transposed needs
// no transposition.
type bf16TileSet struct {
	mr, nr   int
	kern     bf16Kernel
	tail     []bf16Kernel
	conv     bf16ConvKernel
	convTail []bf16ConvKernel
	kernT    bf16Kernel
	tailT    []bf16Kernel
}

// bf16StripWidth returns the strip width PackBF16 uses for n columns: 64,
// unless 32 pads n less. It depends on n only, so that a packed matrix
// is read the same way by every implementation.
func bf16StripWidth(n int) int {
	if (n+31)/32*32 < (n+63)/64*64 {
		return 32
	}
	return 64
}

// BF16Kernels names the implementation of the bfloat16 kernels that calls
// use now: "avx512bf16+amx" when the current implementation (see Use)
// runs the Winograd products on AMX tiles (amx.go), "avx512bf16" when it
// has the AVX-512 BF16 kernels, else "generic", the portable code:
// correct, and about 400 times slower (one Connect Four convolution at
// batch 16: 1.3 against 533 GFLOP/s on the AVX-512 EPYC of
// docs/BENCHMARKS.md).
func BF16Kernels() string {
	switch im := cur.Load(); {
	case im.amx:
		return "avx512bf16+amx"
	case im.bf16 != nil:
		return "avx512bf16"
	}
	return "generic"
}

// ToBF16 returns x rounded to bfloat16 (its 16 high bits after rounding
// to nearest, ties to even), as VCVTNE2PS2BF16 rounds: subnormals become
// zero of the same sign and a NaN stays a (quiet) NaN.
func ToBF16(x float32) uint16 {
	b := math.Float32bits(x)
	switch {
	case b&0x7fffffff > 0x7f800000: // NaN
		return uint16(b>>16) | 0x40
	case b&0x7f800000 == 0: // zero or subnormal
		return uint16(b>>16) & 0x8000
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// FromBF16 returns the float32 value of the bfloat16 bits h (exact).
func FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// ConvertBF16 sets dst[i] = ToBF16(src[i]) for i < len(src); dst must be at
// least as long.
func ConvertBF16(dst []uint16, src []float32) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("kernels: ConvertBF16: len(dst)=%d < len(src)=%d", len(dst), len(src)))
	}
	convertBF16(cur.Load(), dst[:len(src)], src)
}

func convertBF16(im *impl, dst []uint16, src []float32) {
	n := 0
	if im.bf16 != nil {
		n = len(src) / 32 * 32
		if n > 0 {
			toBF16AVX512(&dst[0], &src[0], n)
		}
	}
	for i := n; i < len(src); i++ {
		dst[i] = ToBF16(src[i])
	}
}

// BF16Matrix is a k x n matrix (the weights of a layer) rounded to
// bfloat16 and packed for the BF16 kernels (see PackBF16). It is
// read-only after packing and safe for concurrent use.
type BF16Matrix struct {
	k, n   int
	kp, nr int      // k pairs (k rounded up to even, halved); strip width
	data   []uint16 // strips of kp x nr x 2 values
}

// K returns the matrix's row count (the K of a product with it).
func (b *BF16Matrix) K() int { return b.k }

// N returns the matrix's column count.
func (b *BF16Matrix) N() int { return b.n }

// PackBF16 rounds the row-major k x n matrix w (leading dimension n) to
// bfloat16 and packs it for GemmBiasActBF16 and Conv3x3BiasActBF16.
func PackBF16(w []float32, k, n int) *BF16Matrix { return RepackBF16(nil, w, k, n) }

// RepackBF16 is PackBF16 into m's memory when m (which may be nil) holds
// a matrix of the same size, so that training can repack its float32
// master weights every step without allocating; otherwise it allocates a
// new matrix. It returns the packed matrix. m must not be in use by a
// concurrent product.
func RepackBF16(m *BF16Matrix, w []float32, k, n int) *BF16Matrix {
	if k < 0 || n < 0 {
		panic(fmt.Sprintf("kernels: PackBF16: negative size %dx%d", k, n))
	}
	if len(w) < k*n {
		panic(fmt.Sprintf("kernels: PackBF16: matrix has %d values, want %d", len(w), k*n))
	}
	nr := bf16StripWidth(n)
	kp := (k + 1) / 2
	strips := (n + nr - 1) / nr
	if m == nil || m.k != k || m.n != n {
		m = &BF16Matrix{k: k, n: n, kp: kp, nr: nr, data: make([]uint16, strips*kp*nr*2)}
	}
	q0 := 0 // rows already packed
	if im := cur.Load(); im.bf16 != nil && strips == 1 && n == nr && k >= 2 {
		// One full strip is k/2 pair rows of n (32 or 64) columns: the
		// SIMD interleave does them, rounding as ToBF16 (pairRows).
		pairRowsBF16AVX512(&m.data[0], &w[0], n, k/2, 0)
		q0 = k / 2 * 2
	}
	for s := range strips {
		dst := m.data[s*kp*nr*2 : (s+1)*kp*nr*2]
		cols := min(nr, n-s*nr)
		for q := q0; q < k; q++ {
			row := w[q*n+s*nr : q*n+s*nr+cols]
			d := dst[(q/2)*nr*2+q%2:]
			for jj, v := range row {
				d[jj*2] = ToBF16(v)
			}
		}
	}
	return m
}

// GemmBiasActBF16 is GemmBiasAct with bfloat16 operands:
//
//	C[i][j] = act(sum_p A[i][p]*B[p][j] + bias[j] + residual[i*ldc+j])
//
// with A m x b.K() bfloat16 values, row-major with leading dimension lda
// (even, >= b.K() rounded up to even; when b.K() is odd, column b.K() of
// every row is read and must be zero), B packed by PackBF16 and C m x
// b.N() (ldc >= b.N()). Products are summed in float32 in an order fixed
// by the layout (see the file comment), so the SIMD and portable kernels
// agree. bias, residual and relu are as in GemmBiasAct.
func GemmBiasActBF16(m int, a []uint16, lda int, b *BF16Matrix, bias, residual []float32, relu bool, c []float32, ldc int) {
	n, kk := b.n, 2*b.kp
	switch {
	case m < 0:
		panic(fmt.Sprintf("kernels: GemmBiasActBF16: negative m=%d", m))
	case lda%2 != 0 || lda < kk:
		panic(fmt.Sprintf("kernels: GemmBiasActBF16: lda=%d must be even and >= %d", lda, kk))
	case ldc < n:
		panic(fmt.Sprintf("kernels: GemmBiasActBF16: ldc=%d < n=%d", ldc, n))
	case m > 0 && len(a) < (m-1)*lda+kk:
		panic(fmt.Sprintf("kernels: GemmBiasActBF16: len(a)=%d too short for %dx%d with lda=%d", len(a), m, kk, lda))
	case m > 0 && len(c) < (m-1)*ldc+n:
		panic(fmt.Sprintf("kernels: GemmBiasActBF16: len(c)=%d too short for %dx%d with ldc=%d", len(c), m, n, ldc))
	case bias != nil && len(bias) < n:
		panic(fmt.Sprintf("kernels: GemmBiasActBF16: len(bias)=%d < n=%d", len(bias), n))
	case residual != nil && m > 0 && len(residual) < (m-1)*ldc+n:
		panic(fmt.Sprintf("kernels: GemmBiasActBF16: len(residual)=%d too short for %dx%d with ldc=%d", len(residual), m, n, ldc))
	}
	if m == 0 || n == 0 {
		return
	}
	g := bf16Args{im: cur.Load(), b: b, bias: bias, residual: residual, relu: relu, c: c, ldc: ldc}
	sc := scratchPool.Get().(*scratch)
	g.rows(0, m, a, lda, sc)
	scratchPool.Put(sc)
}

// bf16Args is the B side and epilogue of a BF16 product.
type bf16Args struct {
	im             *impl
	b              *BF16Matrix
	bias, residual []float32
	relu           bool
	c              []float32
	ldc            int
}

// tiles returns the tile set for b's strip width, nil for the portable code.
func (g *bf16Args) tiles() *bf16TileSet {
	for _, ts := range g.im.bf16 {
		if ts.nr == g.b.nr {
			return ts
		}
	}
	return nil
}

// rows computes rows [lo, hi) of C from rows [0, hi-lo) of a.
func (g *bf16Args) rows(lo, hi int, a []uint16, lda int, sc *scratch) {
	ts := g.tiles()
	if ts == nil {
		g.genericRows(lo, hi, a, lda)
		return
	}
	flags := g.flags()
	for i0 := lo; i0 < hi; i0 += ts.mr {
		nrows := min(ts.mr, hi-i0)
		t := bf16Tile{kern: ts.kern, a: &a[(i0-lo)*lda], lda: lda}
		if nrows < ts.mr {
			t.kern = ts.tail[nrows]
		}
		g.strips(&t, i0, nrows, flags, sc)
	}
}

// flags returns the micro-kernel flags of g's epilogue.
func (g *bf16Args) flags() int {
	flags := 0
	if g.bias != nil {
		flags |= kBias
	}
	if g.residual != nil {
		flags |= kResidual
	}
	if g.relu {
		flags |= kReLU
	}
	return flags
}

// bf16Tile is where a row tile's A comes from: rows of a (leading
// dimension lda) for kern, or the image windows of rows for conv (see
// bf16ConvKernel).
type bf16Tile struct {
	kern bf16Kernel
	a    *uint16
	lda  int

	conv      bf16ConvKernel
	rows      *[8]*uint16
	kp3, skip int
}

// strips computes the nrows rows of C at i0 from tile t, strip by strip
// of B: straight into C when the strip is whole, else into scratch and
// merged into C with the epilogue in Go.
func (g *bf16Args) strips(t *bf16Tile, i0, nrows, flags int, sc *scratch) {
	b, ldc, nr := g.b, g.ldc, g.b.nr
	if t.conv == nil && b.n%nr == 0 {
		// Whole strips of a GEMM (the Winograd loops' case): the kernel
		// straight, not through call (the closure and its test per strip
		// were 5% of a bfloat16 training step of the 32x4 Connect Four net).
		for j0 := 0; j0 < b.n; j0 += nr {
			var bias, res *float32
			if g.bias != nil {
				bias = &g.bias[j0]
			}
			if g.residual != nil {
				res = &g.residual[i0*ldc+j0]
			}
			t.kern(b.kp, t.a, t.lda, &b.data[j0*b.kp*2], &g.c[i0*ldc+j0], ldc, bias, res, flags)
		}
		return
	}
	call := func(bp *uint16, c *float32, ldc int, bias, res *float32, flags int) {
		if t.conv != nil {
			t.conv(t.kp3, t.rows, t.skip, bp, c, ldc, bias, res, flags)
		} else {
			t.kern(b.kp, t.a, t.lda, bp, c, ldc, bias, res, flags)
		}
	}
	for j0 := 0; j0 < b.n; j0 += nr {
		bp := &b.data[j0*b.kp*2]
		if cols := min(nr, b.n-j0); cols < nr {
			call(bp, &sc.tile[0], nr, nil, nil, 0)
			ga := gemmArgs{c: g.c, ldc: ldc, bias: g.bias, residual: g.residual}
			ga.mergeTile(sc.tile[:nrows*nr], nr, i0, j0, nrows, cols, flags)
			continue
		}
		var bias, res *float32
		if g.bias != nil {
			bias = &g.bias[j0]
		}
		if g.residual != nil {
			res = &g.residual[i0*ldc+j0]
		}
		call(bp, &g.c[i0*ldc+j0], ldc, bias, res, flags)
	}
}

// genericRows is rows in portable Go, lane by lane in VDPBF16PS's order.
func (g *bf16Args) genericRows(lo, hi int, a []uint16, lda int) {
	b := g.b
	nr, kp := b.nr, b.kp
	for i := lo; i < hi; i++ {
		ar := a[(i-lo)*lda : (i-lo)*lda+2*kp]
		cr := g.c[i*g.ldc : i*g.ldc+b.n]
		for j := range cr {
			s, jj := j/nr, j%nr
			col := b.data[s*kp*nr*2:]
			var acc float32
			for p := range kp {
				w := col[(p*nr+jj)*2:]
				acc = ftz(acc + dazBF16(ar[2*p+1])*dazBF16(w[1]))
				acc = ftz(acc + dazBF16(ar[2*p])*dazBF16(w[0]))
			}
			if g.bias != nil {
				acc += g.bias[j]
			}
			if g.residual != nil {
				acc += g.residual[i*g.ldc+j]
			}
			if g.relu && acc < 0 {
				acc = 0
			}
			cr[j] = acc
		}
	}
}

// dazBF16 is FromBF16 with subnormals read as zero.
func dazBF16(h uint16) float32 {
	if h&0x7f80 == 0 {
		h &= 0x8000
	}
	return FromBF16(h)
}

// ftz returns x, or zero of its sign when x is subnormal.
func ftz(x float32) float32 {
	if b := math.Float32bits(x); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return x
}

// bf16Scratch is one BF16 convolution's working memory.
type bf16Scratch struct {
	img  []uint16 // the input image in bfloat16
	cols []uint16 // one goroutine's block of im2col rows
}

var bf16Pool = sync.Pool{New: func() any { return new(bf16Scratch) }}

func grow16(x []uint16, n int) []uint16 {
	if cap(x) < n {
		return make([]uint16, n)
	}
	return x[:n]
}

// Conv3x3BiasActBF16 is Conv3x3BiasAct with the image and the weights
// rounded to bfloat16 and the products summed in float32 (see
// GemmBiasActBF16):
//
//	dst = act(Im2Col3x3(bf16(src)) * wts + bias + residual)
//
// wts is the [9*cin, cout] weight matrix of the package documentation
// packed by PackBF16. The image is rounded once; the SIMD kernels then
// read it in place, padded with a zero border (implicit im2col, cin even),
// and otherwise it is expanded block by block as in Conv3x3BiasAct, each
// block's rows multiplied while they are in the core's caches. Rows are
// shared out over the idle kernel threads. Results do not depend on the
// number of threads. It allocates nothing in steady state.
func Conv3x3BiasActBF16(src []float32, batch, cin, h, w int, wts *BF16Matrix, bias, residual []float32, relu bool, dst []float32) {
	conv3x3BiasActBF16(0, src, batch, cin, h, w, wts, bias, residual, relu, dst)
}

// conv3x3BiasActBF16 is Conv3x3BiasActBF16 on a thread budget (see Team).
func conv3x3BiasActBF16(limit int, src []float32, batch, cin, h, w int, wts *BF16Matrix, bias, residual []float32, relu bool, dst []float32) {
	if batch < 0 || cin < 0 || h < 0 || w < 0 {
		panic(fmt.Sprintf("kernels: Conv3x3BiasActBF16: negative size batch=%d cin=%d h=%d w=%d", batch, cin, h, w))
	}
	m, cout := batch*h*w, wts.n
	switch {
	case wts.k != 9*cin:
		panic(fmt.Sprintf("kernels: Conv3x3BiasActBF16: weights have %d rows, want 9*cin=%d", wts.k, 9*cin))
	case len(src) < m*cin:
		panic(fmt.Sprintf("kernels: Conv3x3BiasActBF16: image has %d values, want %d", len(src), m*cin))
	case len(dst) < m*cout:
		panic(fmt.Sprintf("kernels: Conv3x3BiasActBF16: output has %d values, want %d", len(dst), m*cout))
	case bias != nil && len(bias) < cout:
		panic(fmt.Sprintf("kernels: Conv3x3BiasActBF16: len(bias)=%d < cout=%d", len(bias), cout))
	case residual != nil && len(residual) < m*cout:
		panic(fmt.Sprintf("kernels: Conv3x3BiasActBF16: residual has %d values, want %d", len(residual), m*cout))
	}
	if m == 0 || cout == 0 {
		return
	}
	bs := bf16Pool.Get().(*bf16Scratch)
	im := cur.Load()
	cv := bf16Conv{bf16Args: bf16Args{im: im, b: wts, bias: bias, residual: residual, relu: relu, c: dst, ldc: cout},
		ch: cin, h: h, w: w, m: m}
	if cv.tiles() != nil && cin%2 == 0 {
		// Implicit im2col from the image with a zero border.
		cv.padded = true
		bs.img = grow16(bs.img, batch*(h+2)*(w+2)*cin)
		padBF16(im, bs.img, src, batch, cin, h, w)
	} else {
		bs.img = grow16(bs.img, m*cin)
		convertBF16(im, bs.img, src[:m*cin])
	}
	cv.img = bs.img
	busy := int(callsInFlight.Add(1))
	work := m * cout * 9 * cin / 2 // VDPBF16PS does two multiply-adds a lane
	mr := 8
	if ts := cv.tiles(); ts != nil {
		mr = ts.mr
	}
	nt := min(threadsOf(limit)-busy+1, max(1, work/minWorkPerThread), (m+mr-1)/mr)
	if nt <= 1 {
		cv.RunPart(0)
		callsInFlight.Add(-1)
	} else {
		// Parallel counts its own threads as busy.
		callsInFlight.Add(-1)
		// Four parts per thread of whole tiles balance uneven progress.
		cv.rowsPer = ((m+4*nt-1)/(4*nt) + mr - 1) / mr * mr
		cv.parallel(limit, (m+cv.rowsPer-1)/cv.rowsPer)
	}
	bf16Pool.Put(bs)
}

// padBF16 rounds the NHWC batch src to bfloat16 into dst with a zero
// border of one pixel around each image: dst is batch x (h+2) x (w+2) x
// ch, pixel (n, y, x) of src at ((n*(h+2)+y+1)*(w+2)+x+1)*ch.
func padBF16(im *impl, dst []uint16, src []float32, batch, ch, h, w int) {
	wp := w + 2
	row := wp * ch
	for n := range batch {
		img := dst[n*(h+2)*row : (n+1)*(h+2)*row]
		clear(img[:row+ch])
		for y := range h {
			o := (y+1)*row + ch
			convertBF16(im, img[o:o+w*ch], src[(n*h+y)*w*ch:(n*h+y+1)*w*ch])
			clear(img[o+w*ch : o+w*ch+2*ch]) // right border, next row's left
		}
		clear(img[(h+1)*row+ch:])
	}
}

// bf16Conv is one Conv3x3BiasActBF16 call, split into parts of rowsPer
// output rows (all rows in one part when rowsPer is 0). img is the
// bfloat16 image, padded (see padBF16) when the implicit kernels read it.
type bf16Conv struct {
	bf16Args
	img      []uint16
	padded   bool
	ch, h, w int
	m        int
	rowsPer  int
}

var bf16ConvPool = sync.Pool{New: func() any { return new(bf16Conv) }}

// parallel runs the parts on a pooled copy of c, so that the caller's
// stays on the stack.
func (c *bf16Conv) parallel(limit, parts int) {
	p := bf16ConvPool.Get().(*bf16Conv)
	*p = *c
	parallel(limit, parts, p)
	*p = bf16Conv{} // drop references to the caller's slices
	bf16ConvPool.Put(p)
}

// RunPart computes part p's output rows (kernels.Task).
func (c *bf16Conv) RunPart(p int) {
	lo, hi := 0, c.m
	if c.rowsPer > 0 {
		lo, hi = p*c.rowsPer, min((p+1)*c.rowsPer, c.m)
	}
	sc := scratchPool.Get().(*scratch)
	if c.padded {
		c.implicitRows(lo, hi, sc)
		scratchPool.Put(sc)
		return
	}
	bs := bf16Pool.Get().(*bf16Scratch)
	kk := 2 * c.b.kp
	mr := 8
	if ts := c.tiles(); ts != nil {
		mr = ts.mr
	}
	blk := max(mr, convBlockBytes/2/kk/mr*mr)
	bs.cols = grow16(bs.cols, min(blk, hi-lo)*kk)
	for r0 := lo; r0 < hi; r0 += blk {
		r1 := min(r0+blk, hi)
		cols := bs.cols[:(r1-r0)*kk]
		im2colRows(c.img, c.ch, c.h, c.w, r0, r1, kk, cols)
		c.rows(r0, r1, cols, kk, sc)
	}
	scratchPool.Put(sc)
	bf16Pool.Put(bs)
}

// implicitRows computes output rows [lo, hi) with the implicit-convolution
// kernels from the padded image.
func (c *bf16Conv) implicitRows(lo, hi int, sc *scratch) {
	ts := c.tiles()
	wp, hw := c.w+2, c.h*c.w
	flags := c.flags()
	// The row pointers live in the pooled scratch: passed to a kernel
	// through a function value, a local array would escape.
	t := bf16Tile{conv: ts.conv, rows: &sc.rows, kp3: 3 * c.ch / 2, skip: (wp - 3) * c.ch}
	for i0 := lo; i0 < hi; i0 += ts.mr {
		nrows := min(ts.mr, hi-i0)
		t.conv = ts.conv
		if nrows < ts.mr {
			t.conv = ts.convTail[nrows]
		}
		for i := range nrows {
			n, p := (i0+i)/hw, (i0+i)%hw
			y, x := p/c.w, p%c.w
			// The window of output pixel (y, x) starts at padded (y, x).
			sc.rows[i] = &c.img[((n*(c.h+2)+y)*wp+x)*c.ch]
		}
		c.strips(&t, i0, nrows, flags, sc)
	}
}
