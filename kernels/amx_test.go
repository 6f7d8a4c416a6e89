package kernels

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/pprof"
	"slices"
	"testing"
)

// amxImpl returns the AMX implementation, or skips the test saying why
// there is none.
func amxImplOrSkip(t testing.TB) *impl {
	t.Helper()
	for _, im := range impls {
		if im.amx {
			return im
		}
	}
	t.Skip("no AMX here: the CPU lacks AMX-BF16 or the OS refused the tile state (the avx512amx implementation is not offered)")
	return nil
}

// TestAMXGemmBF16 checks amxPlan's products against float64 sums of the
// same bfloat16 operands: every shape of block (16 rows, fewer, an
// overlapping last block), both strip widths, several strips and k
// tiles, set and accumulate. The tile unit's rounding is its own, so the
// bound is float32 rounding of the running sum, k times the unit roundoff
// of the products' absolute sum; a misplaced operand or row is off by a
// whole product.
func TestAMXGemmBF16(t *testing.T) {
	amxImplOrSkip(t)
	r := rand.New(rand.NewPCG(421, 422))
	var p amxPlan
	for _, sh := range [][3]int{{16, 32, 64}, {1, 32, 64}, {5, 64, 32}, {18, 64, 64}, {37, 96, 128}, {32, 32, 96}, {16, 64, 192}} {
		m, k, n := sh[0], sh[1], sh[2]
		for _, acc := range []bool{false, true} {
			if acc && m%16 != 0 {
				continue
			}
			lda, ldc := k+6, n+3
			af := randSlice(r, m*lda)
			a := make([]uint16, len(af))
			ConvertBF16(a, af)
			w := randSlice(r, k*n)
			b := PackBF16(w, k, n)
			if !amxFits(b) {
				t.Fatalf("%v: amxFits false", sh)
			}
			c := randSlice(r, m*ldc)
			c0 := append([]float32(nil), c...)
			p.start(m, b, lda, ldc, acc)
			p.addGemm(m, a, b, c)
			p.run()
			for i := range m {
				for j := range ldc {
					got := float64(c[i*ldc+j])
					if j >= n {
						if got != float64(c0[i*ldc+j]) {
							t.Fatalf("%v acc=%v: C(%d,%d) beyond n written", sh, acc, i, j)
						}
						continue
					}
					var want, abs float64
					if acc {
						want, abs = float64(c0[i*ldc+j]), math.Abs(float64(c0[i*ldc+j]))
					}
					for q := range k {
						pr := float64(FromBF16(a[i*lda+q])) * float64(FromBF16(ToBF16(w[q*n+j])))
						want += pr
						abs += math.Abs(pr)
					}
					if d := math.Abs(got - want); !(d <= float64(k+2)*0x1p-24*abs) {
						t.Fatalf("%v acc=%v: C(%d,%d) = %v, want %v (|products| %v)", sh, acc, i, j, got, want, abs)
					}
				}
			}
		}
	}
}

// TestAMXWinogradBF16 checks that the AMX implementation's bfloat16
// Winograd convolutions (F(2x2) and F(3x4), forward and weight gradient)
// agree with the AVX-512 BF16 implementation's, which rounds the same
// operands: the two differ only in how the tile unit sums the products.
func TestAMXWinogradBF16(t *testing.T) {
	amxImplOrSkip(t)
	r := rand.New(rand.NewPCG(423, 424))
	for _, sh := range [][5]int{{24, 64, 6, 7, 64}, {9, 32, 6, 7, 32}, {3, 64, 10, 10, 64}, {2, 32, 6, 7, 48}, {1, 16, 6, 7, 32}, {4, 32, 6, 7, 128}, {3, 16, 6, 7, 96}} {
		c := newConvCase(r, sh)
		u34 := make([]float32, w34Pos*c.cin*c.cout)
		WinogradWeights34(c.wt, c.cin, c.cout, u34)
		ub34 := PackWinograd34BF16(u34, c.cin, c.cout)
		u22 := make([]float32, 16*c.cin*c.cout)
		WinogradWeights(c.wt, c.cin, c.cout, u22)
		ub22 := PackWinogradBF16(u22, c.cin, c.cout)
		dy := randSlice(r, c.batch*c.h*c.w*c.cout)
		run := func(name string) (f34, f22, g34, g22 []float32) {
			use(t, name)
			n := c.batch * c.h * c.w * c.cout
			f34, f22 = make([]float32, n), make([]float32, n)
			Conv3x3Winograd34BF16(c.in, c.batch, c.cin, c.h, c.w, ub34, c.bias, c.res, true, f34)
			Conv3x3WinogradBF16(c.in, c.batch, c.cin, c.h, c.w, ub22, c.bias, c.res, true, f22)
			if c.cin%16 == 0 && c.cout%16 == 0 {
				g34, g22 = make([]float32, w34Pos*c.cin*c.cout), make([]float32, 16*c.cin*c.cout)
				Conv3x3Winograd34WeightGradBF16(c.in, c.batch, c.cin, c.h, c.w, dy, c.cout, g34)
				Conv3x3WinogradWeightGradBF16(c.in, c.batch, c.cin, c.h, c.w, dy, c.cout, g22)
			}
			return
		}
		a34, a22, ag34, ag22 := run("avx512amx")
		b34, b22, bg34, bg22 := run("avx512")
		label := fmt.Sprint(sh)
		closeEnough(t, label+" F(3x4) forward", a34, b34, 9*c.cin)
		closeEnough(t, label+" F(2x2) forward", a22, b22, 9*c.cin)
		if ag34 != nil {
			tiles := c.batch * c.h * c.w
			closeEnough(t, label+" F(3x4) weight gradient", ag34, bg34, tiles)
			closeEnough(t, label+" F(2x2) weight gradient", ag22, bg22, tiles)
		}
	}
}

// TestTransposePairs checks the AVX-512 transposition and rounding of the
// AMX weight gradient's A operand against the portable loop, on values
// that round in every way (ties, subnormals, infinities, NaN).
func TestTransposePairs(t *testing.T) {
	im := amxImplOrSkip(t)
	r := rand.New(rand.NewPCG(425, 426))
	for _, sh := range [][3]int{{32, 16, 16}, {64, 64, 70}, {96, 48, 48}} {
		np, n, ld := sh[0], sh[1], sh[2]
		src := make([]float32, (np-1)*ld+n)
		for i := range src {
			switch r.IntN(8) {
			case 0:
				src[i] = math.Float32frombits(r.Uint32()) // anything, NaN included
			case 1:
				src[i] = math.Float32frombits(r.Uint32()&0x807fffff | 0x8000) // subnormal, a tie's bits
			default:
				src[i] = float32(r.NormFloat64())
			}
		}
		got, want := make([]uint16, n*np), make([]uint16, n*np)
		transposePairs(im, got, src, ld, np, n)
		transposePairs(genericImpl, want, src, ld, np, n)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: value %d (row %d, tile %d) = %#04x, want %#04x", sh, i, i/np, i%np, got[i], want[i])
			}
		}
	}
}

// BenchmarkAMXGemmBF16 times one batch of a Winograd chunk's products on
// the tiles: 30 tasks of 16 rows, K = 64, 64 columns (the 64x5 Connect
// Four net's F(3x4) products per 16 tiles), in one call (batched) or in
// one call each (per-task), whose difference is the cost of configuring
// the tiles for a call.
func BenchmarkAMXGemmBF16(b *testing.B) {
	amxImplOrSkip(b)
	r := rand.New(rand.NewPCG(427, 428))
	const tasks, m, k, n = 30, 16, 64, 64
	a := make([]uint16, tasks*m*k)
	ConvertBF16(a, randSlice(r, len(a)))
	bs := make([]*BF16Matrix, tasks)
	for i := range bs {
		bs[i] = PackBF16(randSlice(r, k*n), k, n)
	}
	c := make([]float32, tasks*m*n)
	var p amxPlan
	for _, batched := range []bool{true, false} {
		name := "batched"
		if !batched {
			name = "per-task"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				p.start(m, bs[0], k, n, false)
				for i := range tasks {
					p.addGemm(m, a[i*m*k:], bs[i], c[i*m*n:])
					if !batched {
						p.run()
					}
				}
				p.run()
			}
			b.ReportMetric(float64(b.N)*tasks*m*k*n*2/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestAMXUnderSignals runs AMX products on more goroutines than cores
// while the runtime interrupts them (preemption requests, a CPU profile's
// SIGPROF, goroutines moving between threads) and checks that every
// result equals the first bit for bit: the tile state is the OS thread's,
// so a product split across threads or clobbered by a signal handler
// would show up as a wrong sum.
func TestAMXUnderSignals(t *testing.T) {
	amxImplOrSkip(t)
	r := rand.New(rand.NewPCG(429, 430))
	const m, k, n = 37, 64, 128
	a := make([]uint16, m*k)
	ConvertBF16(a, randSlice(r, len(a)))
	b := PackBF16(randSlice(r, k*n), k, n)
	run := func(c []float32) {
		var p amxPlan
		p.start(m, b, k, n, false)
		p.addGemm(m, a, b, c)
		p.run()
	}
	want := make([]float32, m*n)
	run(want)
	iters := 2000
	if testing.Short() {
		iters = 300
	}
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err == nil {
		defer pprof.StopCPUProfile()
	}
	stop := make(chan struct{})
	go func() { // keeps the scheduler busy: preemption requests land on the workers
		for {
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	defer close(stop)
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			c := make([]float32, m*n)
			for i := range iters {
				clear(c)
				run(c)
				if !slices.Equal(math32bits(c), math32bits(want)) {
					errs <- fmt.Errorf("goroutine %d, iteration %d: the product differs from the first", g, i)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestGradOutPairs checks the fused transform of the output gradient into
// bfloat16 pairs of tiles (w34GradOutPairsBF16AVX512) against gradOut and
// pairOperands, bit for bit: chunks with an odd tile count and padding to
// whole k tiles, tiles partly outside the board, one strip and several.
func TestGradOutPairs(t *testing.T) {
	im := amxImplOrSkip(t)
	r := rand.New(rand.NewPCG(431, 432))
	for _, sh := range [][4]int{{5, 6, 7, 32}, {3, 6, 7, 64}, {2, 5, 5, 64}, {2, 6, 7, 128}, {2, 6, 7, 96}} {
		batch, h, w, cout := sh[0], sh[1], sh[2], sh[3]
		dy := randSlice(r, batch*h*w*cout)
		a := w34Args{cin: 16, h: h, w: w, th: (h + 2) / 3, tw: (w + 3) / 4, cout: cout, dst: dy}
		tiles := batch * a.th * a.tw
		for _, span := range [][2]int{{0, min(tiles, 32)}, {1, min(tiles, 24)}} {
			t0, t1 := span[0], span[1]
			nt := t1 - t0
			np := (nt + 31) / 32 * 32
			sc := &w34Scratch{zero: make([]float32, max(16, cout))}
			var s amxScratch
			bs := s.growB(w34Pos, np, cout)
			a.gradOutPairs(sc, t0, t1, np, s.bb, bs)
			got := slices.Clone(s.bb)
			os := np*cout + winoPad
			sc.mm = make([]float32, w34Pos*os)
			a.gradOut(im, sc, t0, t1, os)
			want := make([]uint16, len(got))
			is, as := np*16+winoPad, np*16+2*winoPad // the input side, unread here
			pairOperands(genericImpl, w34Pos, np, 16, cout, make([]float32, w34Pos*is), is, sc.mm, os, sc.zero, make([]uint16, w34Pos*as), as, want, bs)
			samePairs(t, fmt.Sprintf("%v tiles [%d, %d)", sh, t0, t1), got, want, w34Pos, bs, np*cout)
		}
	}
}

// TestGradOutPairs22 is TestGradOutPairs for F(2x2)'s output gradient
// (winoArgs.gradOutPairs, on winoGradOutPairsBF16AVX512), with several
// strips.
func TestGradOutPairs22(t *testing.T) {
	im := amxImplOrSkip(t)
	r := rand.New(rand.NewPCG(433, 434))
	for _, sh := range [][4]int{{3, 10, 10, 64}, {4, 5, 7, 32}, {2, 6, 6, 128}} {
		batch, h, w, cout := sh[0], sh[1], sh[2], sh[3]
		dy := randSlice(r, batch*h*w*cout)
		a := winoArgs{cin: 16, h: h, w: w, th: (h + 1) / 2, tw: (w + 1) / 2, cout: cout, dst: dy}
		tiles := batch * a.th * a.tw
		for _, span := range [][2]int{{0, min(tiles, 96)}, {3, min(tiles, 40)}} {
			t0, t1 := span[0], span[1]
			np := (t1 - t0 + 31) / 32 * 32
			sc := &winoScratch{zero: make([]float32, max(16, cout))}
			var s amxScratch
			bs := s.growB(16, np, cout)
			a.gradOutPairs(sc, t0, t1, np, s.bb, bs)
			got := slices.Clone(s.bb)
			os := np*cout + winoPad
			sc.mm = make([]float32, 16*os)
			a.gradOut(im, sc, t0, t1, os)
			want := make([]uint16, len(got))
			is, as := np*16+winoPad, np*16+2*winoPad // the input side, unread here
			pairOperands(genericImpl, 16, np, 16, cout, make([]float32, 16*is), is, sc.mm, os, sc.zero, make([]uint16, 16*as), as, want, bs)
			samePairs(t, fmt.Sprintf("%v tiles [%d, %d)", sh, t0, t1), got, want, 16, bs, np*cout)
		}
	}
}

// samePairs fails the test unless the first n values of each of npos rows
// (stride bs) of got and want are equal.
func samePairs(t *testing.T, what string, got, want []uint16, npos, bs, n int) {
	t.Helper()
	for e := range npos {
		for i := range n {
			if g, w := got[e*bs+i], want[e*bs+i]; g != w {
				t.Fatalf("%s: position %d, value %d = %#04x, want %#04x", what, e, i, g, w)
			}
		}
	}
}
