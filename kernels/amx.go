package kernels

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// bfloat16 products on AMX tiles (Intel's Advanced Matrix Extensions,
// Sapphire Rapids and later): TDPBF16PS multiplies a 16 x 32 bfloat16
// tile of A by a 16-pair x 16-column tile of B (the pair layout of
// PackBF16's strips, so packed weights serve both) into 16 x 16 float32
// sums, 8,192 multiply-adds per instruction. On the 2-core Xeon of
// docs/BENCHMARKS.md it runs a Winograd chunk's products at 830-860
// GFLOP/s (BenchmarkAMXGemmBF16/batched) against 215 for float32 FMAs and
// 107 for VDPBF16PS.
//
// The tile unit sums a tile's products in its own order and internal
// precision, which Intel does not specify to the bit (none of "even
// product first", "odd first" or "one rounding per pair or per tile"
// reproduces it), so the AMX implementation ("avx512amx", see Use) agrees
// with the portable code to float32 rounding of the sums
// (TestAMXGemmBF16), not bit for bit as the other implementations do;
// it is deterministic on one machine. CANOPY_KERNELS=avx512 turns it off.
//
// Tile state belongs to the OS thread, and goroutines move between
// threads, so every kernel call configures the tiles, computes and
// releases them in one assembly function (assembly is never preempted
// asynchronously). A call with its configuration costs about 130 ns
// more than its products (BenchmarkAMXGemmBF16: per-task against
// batched), so callers batch many tasks of one shape into one call
// (amxPlan). Linux grants the
// tile state per process on request (arch_prctl ARCH_REQ_XCOMP_PERM,
// amxPermit); without it the implementation is not offered.

// amxConfig is the 64-byte tile configuration LDTILECFG reads: palette 1,
// the bytes per row of tiles 0-7 at offset 16, their rows at offset 48.
type amxConfig [64]byte

// amxTask is one block of at most 16 rows and 32 or 64 columns of C = A x
// B (see amxGemmBF16): a and c point at its first row, b at the strip's
// first pair row.
type amxTask struct {
	a *uint16
	b *uint16
	c *float32
}

// amxGemmBF16 flags.
const (
	amxWide       = 1 // 64 columns per task (four C tiles), else 32
	amxAccumulate = 2 // C += A x B, else C = A x B
)

// amxFits reports whether products with the packed matrix b can run on
// the AMX tiles: whole k tiles (b.K() a multiple of 32) and whole strips
// of 32 or 64 columns.
func amxFits(b *BF16Matrix) bool {
	return b.kp%16 == 0 && b.kp > 0 && b.n%b.nr == 0 && (b.nr == 32 || b.nr == 64)
}

// amxPlan collects tasks of one shape (rows per block, k tiles, strides,
// strip width) to run in one amxGemmBF16 call. The zero value is ready
// for start; reuse keeps its task slice. A plan belongs to one goroutine
// at a time (it lives in a pooled Winograd scratch).
type amxPlan struct {
	tasks                          []amxTask
	rows, kt, lda, ldb, ldc, flags int
}

// start begins a plan of products with m rows of A (leading dimension
// lda, in values) by matrices shaped like b (amxFits) into C (leading
// dimension ldc); accumulate adds to C. Blocks are 16 rows, the last one
// ending at row m (overlapping the one before it: C = A x B is the same
// whichever block writes it); m < 16 gives one block of m rows. With
// accumulate, m must be a multiple of 16 (no row may be added twice).
func (p *amxPlan) start(m int, b *BF16Matrix, lda, ldc int, accumulate bool) {
	if accumulate && m%16 != 0 {
		panic(fmt.Sprintf("kernels: amxPlan: accumulating %d rows, not a multiple of 16", m))
	}
	p.tasks = p.tasks[:0]
	p.rows, p.kt, p.lda, p.ldb, p.ldc = min(m, 16), b.kp/16, lda, b.nr*2, ldc
	p.flags = 0
	if b.nr == 64 {
		p.flags |= amxWide
	}
	if accumulate {
		p.flags |= amxAccumulate
	}
}

// addGemm adds the tasks of C = A x B (m rows, the plan's shape): a and c
// start at row 0. Every element a task reads or writes is bounds-checked
// here, so the assembly cannot run off a slice.
func (p *amxPlan) addGemm(m int, a []uint16, b *BF16Matrix, c []float32) {
	if m == 0 {
		return
	}
	if min(m, 16) != p.rows || b.kp/16 != p.kt || b.nr*2 != p.ldb {
		panic(fmt.Sprintf("kernels: amxPlan: a %d-row product with k pairs %d and strips of %d in a plan of %d-row blocks, %d k tiles, strips of %d", m, b.kp, b.nr, p.rows, p.kt, p.ldb/2))
	}
	_ = a[(m-1)*p.lda+32*p.kt-1]
	_ = c[(m-1)*p.ldc+b.n-1]
	for i0 := 0; i0 < m; i0 += 16 {
		i0 = min(i0, m-p.rows)
		for j0 := 0; j0 < b.n; j0 += b.nr {
			p.tasks = append(p.tasks, amxTask{a: &a[i0*p.lda], b: &b.data[j0*b.kp*2], c: &c[i0*p.ldc+j0]})
		}
	}
}

// run computes the plan's tasks and empties it.
func (p *amxPlan) run() {
	if len(p.tasks) == 0 {
		return
	}
	var cfg amxConfig
	cfg[0] = 1
	for t := range 8 {
		binary.LittleEndian.PutUint16(cfg[16+2*t:], 64)
		cfg[48+t] = 16
		if t <= 4 { // C tiles and the A tile
			cfg[48+t] = byte(p.rows)
		}
	}
	amxGemmBF16(&cfg, &p.tasks[0], len(p.tasks), p.kt, 2*p.lda, 2*p.ldb, 4*p.ldc, p.flags)
	clear(p.tasks) // drop the pointers
	p.tasks = p.tasks[:0]
}

// amxGradChunk is the tiles (the products' K) of one pass of the AMX
// weight gradient: one k tile. 64 and 128 (fewer loads and stores of du)
// were 3-10% slower on the 64x5 Connect Four step (docs/BENCHMARKS.md):
// the chunk's operands fall out of the caches.
const amxGradChunk = 32

// amxScratch is the AMX paths' working memory inside a Winograd scratch:
// the plan of the products, and the weight gradient's operands.
type amxScratch struct {
	plan amxPlan
	at   []uint16     // A: the transformed input, transposed and rounded
	bb   []uint16     // B: the output gradient in pairs of tiles
	b    []BF16Matrix // B's matrices over bb, one per position
}

// amxWeightGrad34 is Conv3x3Winograd34WeightGradBF16's loop on AMX tiles
// (im.amx, cin a multiple of 16, cout of whole 32- or 64-column strips),
// chunk by chunk of amxGradChunk tiles: the transformed input in float32
// (gatherIn), the output gradient's transform straight into B's bfloat16
// pairs of tiles (gradOutPairs: gradOut's values and pairOperands'
// layout without their float32 rows), then gradProducts.
func amxWeightGrad34(im *impl, a *w34Args, sc *w34Scratch, tiles int, du []float32) {
	cin, cout := a.cin, a.cout
	for t0 := 0; t0 < tiles; t0 += amxGradChunk {
		t1 := min(t0+amxGradChunk, tiles)
		np := (t1 - t0 + 31) / 32 * 32
		is := np*cin + winoPad
		a.gatherIn(im, sc, t0, t1, is)
		bs := sc.amx.growB(w34Pos, np, cout)
		a.gradOutPairs(sc, t0, t1, np, sc.amx.bb, bs)
		sc.amx.gradProducts(im, w34Pos, t1-t0, cin, cout, sc.v, is, du)
	}
}

// gradOutPairs writes the transformed output gradient of tiles [t0, t1),
// zero tiles up to np, as gradOut's values rounded to bfloat16 and
// interleaved in pairs of tiles (w34GradOutPairsBF16AVX512), into bb's
// rows (stride bs values) in strips of bf16StripWidth(cout) columns (cout
// a whole number of them), np/2 pair rows each: the packed B of the AMX
// weight gradient.
func (a *w34Args) gradOutPairs(sc *w34Scratch, t0, t1, np int, bb []uint16, bs int) {
	cout, kp := a.cout, np/2
	nr := bf16StripWidth(cout)
	tab, per, hw := a.table(sc), a.th*a.tw, a.h*a.w
	zero := &sc.zero[0]
	var y, ys [2 * w34Outs]*float32 // on the stack: no write barriers
	for p := range kp {
		for h := range 2 {
			t := t0 + 2*p + h
			for q := range w34Outs {
				y[h*w34Outs+q] = zero
			}
			if t >= t1 {
				continue
			}
			base := (t / per) * hw
			for q, o := range tab[w34Entry*(t%per)+w34Pos:][:w34Outs] {
				if o >= 0 {
					y[h*w34Outs+q] = &a.dst[(base+int(o))*cout]
				}
			}
		}
		for s0 := 0; s0 < cout; s0 += nr {
			for q, ptr := range y {
				ys[q] = ptr
				if ptr != zero {
					ys[q] = w34At(ptr, s0)
				}
			}
			o := (s0/nr)*kp*nr*2 + p*nr*2
			_ = bb[(w34Pos-1)*bs+o+2*nr-1]
			w34GradOutPairsBF16AVX512(&bb[o], bs, &ys, nr)
		}
	}
}

// amxGradChunk is gradChunkBF16 on AMX tiles (im.amx, cin a multiple of
// 16, cout of whole strips): the chunk's transformed input in float32
// (gradIn), the output gradient's transform straight into B's bfloat16
// pairs of tiles (gradOutPairs), then gradProducts. winoGradChunk (96
// tiles) is three k tiles.
func (a *winoArgs) amxGradChunk(im *impl, sc *winoScratch, t0, t1, tiles int, du []float32) {
	cin, cout := a.cin, a.cout
	np := (t1 - t0 + 31) / 32 * 32
	is := np*cin + winoPad
	a.gradIn(im, sc, t0, t1, tiles, is)
	bs := sc.amx.growB(16, np, cout)
	a.gradOutPairs(sc, t0, t1, np, sc.amx.bb, bs)
	sc.amx.gradProducts(im, 16, t1-t0, cin, cout, sc.v, is, du)
}

// gradOutPairs writes the transformed output gradient of tiles [t0, t1),
// zero tiles up to np, rounded to bfloat16 and interleaved in pairs of
// tiles (winoGradOutPairsBF16AVX512, gradPairsBF16's B) into bb's rows
// (stride bs values) in strips of bf16StripWidth(cout) columns, np/2
// pair rows each.
func (a *winoArgs) gradOutPairs(sc *winoScratch, t0, t1, np int, bb []uint16, bs int) {
	cout, kp := a.cout, np/2
	nr := bf16StripWidth(cout)
	tab, per := a.table(sc), a.th*a.tw
	zero := sc.zero[:cout]
	var y [8]*float32 // on the stack: no write barriers
	for p := range kp {
		for x := range 2 {
			t := t0 + 2*p + x
			if t >= t1 {
				for q := range 4 {
					y[4*x+q] = &zero[0]
				}
				continue
			}
			centre(tab, t/per, t%per, a.dst, a.h*a.w, cout, (*[4]*float32)(y[4*x:]), zero)
		}
		for s0 := 0; s0 < cout; s0 += nr {
			ys := y
			for q := range ys {
				if ys[q] != &zero[0] {
					ys[q] = (*float32)(unsafe.Add(unsafe.Pointer(ys[q]), 4*s0))
				}
			}
			o := (s0/nr)*kp*nr*2 + p*nr*2
			_ = bb[15*bs+o+2*nr-1]
			winoGradOutPairsBF16AVX512(&bb[o], bs, &ys, nr)
		}
	}
}

// growB sizes the weight gradient's B for npos positions of np tiles
// (whole k tiles) and cout columns, and returns its row stride.
func (s *amxScratch) growB(npos, np, cout int) (bs int) {
	nr := bf16StripWidth(cout)
	bs = np*((cout+nr-1)/nr)*nr + 2*winoPad
	s.bb = grow16(s.bb, npos*bs)
	return bs
}

// gradProducts adds one chunk's weight-gradient products into du
// ([npos][cin][cout]) on the AMX tiles, B already in s.bb (growB's
// layout, np tiles: nt rounded up to whole k tiles of 32). v holds the
// chunk's nt transformed input rows per position (row stride is, with
// room for np); its rows past nt are zeroed (zero tiles add nothing), it
// is rounded and transposed into A's rows, one channel's tiles per row
// (transposePairs), and du_e += A_e x B_e accumulates in the tiles, all
// positions in one call.
func (s *amxScratch) gradProducts(im *impl, npos, nt, cin, cout int, v []float32, is int, du []float32) {
	np := (nt + 31) / 32 * 32
	kp := np / 2
	nr := bf16StripWidth(cout)
	strips := cout / nr
	bs := np*strips*nr + 2*winoPad // growB's
	for e := range npos {
		clear(v[e*is+nt*cin : e*is+np*cin])
	}
	s.at = grow16(s.at, npos*cin*np)
	if len(s.b) < npos {
		s.b = make([]BF16Matrix, npos)
	}
	plane := cin * cout
	for e := range npos {
		at := s.at[e*cin*np : (e+1)*cin*np]
		transposePairs(im, at, v[e*is:], cin, np, cin)
		b := &s.b[e]
		*b = BF16Matrix{k: np, n: cout, kp: kp, nr: nr, data: s.bb[e*bs : e*bs+kp*2*strips*nr]}
		if e == 0 {
			s.plan.start(cin, b, np, cout, true)
		}
		s.plan.addGemm(cin, at, b, du[e*plane:(e+1)*plane])
	}
	s.plan.run()
}

// transposePairs writes the np x n float32 matrix src (leading dimension
// ld, np a multiple of 32) transposed and rounded to bfloat16 into dst as
// n rows of np values: dst[i*np+t] = ToBF16(src[t*ld+i]), the AMX A
// operand of a product over the np rows (tiles) of src.
func transposePairs(im *impl, dst []uint16, src []float32, ld, np, n int) {
	if np%32 != 0 || (np > 0 && n > 0 && (len(src) < (np-1)*ld+n || len(dst) < n*np)) {
		panic(fmt.Sprintf("kernels: transposePairs: %d x %d with ld %d, src %d and dst %d values", np, n, ld, len(src), len(dst)))
	}
	if n == 0 || np == 0 {
		return
	}
	if im.avx512Loops && im.bf16 != nil && n%16 == 0 {
		transposePairsBF16AVX512(&dst[0], &src[0], 4*ld, n, np/32, 2*np)
		return
	}
	for i := range n {
		for t := range np {
			dst[i*np+t] = ToBF16(src[t*ld+i])
		}
	}
}
