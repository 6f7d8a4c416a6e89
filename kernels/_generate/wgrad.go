package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	av "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The loops of the Winograd weight gradient (kernels/winograd_grad.go):
// the output gradient's transform dM = A dY A^T of a tile's 2x2 output
// gradient (winoGradOut<w>), the same for two tiles rounded to bfloat16
// and interleaved in pair rows (winoGradOutPairsBF16AVX512), the input
// transform of two tiles likewise (winoGatherInPairsBF16AVX512), the
// prefetch of the input ahead of the transform (prefetch4), and the AMX
// weight gradient's transposition of the input (transpose.go).

// wgrad writes the weight-gradient loops.
func wgrad() {
	idx := pairIndex()
	for _, w := range []simd{avx2, avx512} {
		winoGradOut(w)
	}
	winoGradOutPairsBF16(idx)
	winoGatherInPairsBF16(idx)
	prefetch4()
	transposePairsBF16(idx)
}

// pairIndex declares the VPERMW index that interleaves the two halves of
// a VCVTNE2PS2BF16 result: word 2j is word j (the first tile's), word
// 2j+1 is word 16+j (the second's).
// Declared once, on the first call.
func pairIndex() operand.Mem {
	if pairIndexMem == nil {
		m := av.GLOBL("wgradPairIndex", attr.RODATA|attr.NOPTR)
		for j := range 16 {
			av.DATA(4*j, operand.U16(uint64(j)))
			av.DATA(4*j+2, operand.U16(uint64(16+j)))
		}
		pairIndexMem = &m
	}
	return *pairIndexMem
}

var pairIndexMem *operand.Mem

// winoGradOut writes winoGradOut<w>: for each of n columns j (a multiple
// of the lanes) of the 2x2 output gradient y_q = src[q][j] (q =
// 2*row+column), the 16 values v[e*vs+j] = (A dY A^T)[e] (e = 4i+c),
// first down the columns (t_i = (A dY)[i]: y0, y0+y1, y0-y1, 0-y1), then
// along the rows (t_i0, t_i0+t_i1, t_i0-t_i1, 0-t_i1), as the Go code
// (kernels/winograd_grad.go, winoGradOut).
func winoGradOut(w simd) {
	name := "winoGradOut" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(v *float32, vs int, src *[4]*float32, n int)")
	av.Doc(fmt.Sprintf("%s is winoGradOut on n columns (a multiple of %d): v = A dY A^T per column, dY[q] read from src[q].", name, w.lanes))
	av.Pragma("noescape")
	vp := av.Load(av.Param("v"), av.GP64())
	vs := loadStride("vs")
	tbl := av.Load(av.Param("src"), av.GP64())
	n := loadVectors(w, "n")
	vs3 := av.GP64()
	av.LEAQ(operand.Mem{Base: vs, Index: vs, Scale: 2}, vs3)
	var yp [4]reg.GPVirtual
	for q := range 4 {
		yp[q] = av.GP64()
		av.MOVQ(operand.Mem{Base: tbl, Disp: 8 * q}, yp[q])
	}
	zero := w.vec()
	av.VXORPS(zero, zero, zero)
	jo := av.GP64()
	av.XORQ(jo, jo)
	vq := [4]reg.GPVirtual{av.GP64(), av.GP64(), av.GP64(), av.GP64()}
	countedLoop(n, func() {
		av.MOVQ(vp, vq[0])
		for g := 1; g < 4; g++ {
			av.LEAQ(operand.Mem{Base: vq[g-1], Index: vs, Scale: 4}, vq[g])
		}
		var y [4]reg.VecVirtual
		for q := range 4 {
			y[q] = w.vec()
			av.VMOVUPS(operand.Mem{Base: yp[q], Index: jo, Scale: 1}, y[q])
		}
		for i := range 4 {
			var t [2]reg.VecVirtual
			for c := range 2 {
				switch i {
				case 0:
					t[c] = y[c]
				case 1:
					t[c] = w.vec()
					av.VADDPS(y[2+c], y[c], t[c]) // y0 + y1
				case 2:
					t[c] = w.vec()
					av.VSUBPS(y[2+c], y[c], t[c]) // y0 - y1
				default:
					t[c] = w.vec()
					av.VSUBPS(y[2+c], zero, t[c]) // 0 - y1
				}
			}
			av.VMOVUPS(t[0], strided(vq[i], vs, vs3, 0, 0))
			o := w.vec()
			av.VADDPS(t[1], t[0], o) // t0 + t1
			av.VMOVUPS(o, strided(vq[i], vs, vs3, 1, 0))
			o = w.vec()
			av.VSUBPS(t[1], t[0], o) // t0 - t1
			av.VMOVUPS(o, strided(vq[i], vs, vs3, 2, 0))
			o = w.vec()
			av.VSUBPS(t[1], zero, o) // 0 - t1
			av.VMOVUPS(o, strided(vq[i], vs, vs3, 3, 0))
		}
		av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
		av.ADDQ(operand.U32(uint64(4*w.lanes)), vp)
	})
}

// pairStore emits the store of output row e of two tiles: zmm(a) and
// zmm(b), the first and the second tile's 16 floats, rounded to bfloat16
// (VCVTNE2PS2BF16 into Z28) and interleaved (VPERMW with the index in
// Z31, into Z29) to dst (32 words: column j's pair at words 2j, 2j+1).
func pairStore(a, b int, dst operand.Mem) {
	vcvtne2ps2bf16(28, b, a)
	av.VPERMW(zmm(28), zmm(31), zmm(29))
	av.VMOVDQU32(zmm(29), dst)
}

// winoGradOutPairsBF16 writes winoGradOutPairsBF16AVX512: winoGradOut
// (the same operations in the same order) of two tiles, src[0..3] the
// first's 2x2 output gradient and src[4..7] the second's, each row e
// rounded to bfloat16 and the two tiles' values interleaved:
// dst[e*ds+2j] is the first tile's (A dY A^T)[e] of column j,
// dst[e*ds+2j+1] the second's (ds in bfloat16 values), for n columns (a
// multiple of 16). Physical registers only (the raw conversions): the
// tiles' t_i values in Z0-Z9 and Z10-Z19 (y in the first four), row
// values in Z20-Z21, zero in Z30, the pair index in Z31.
func winoGradOutPairsBF16(idx operand.Mem) {
	name := "winoGradOutPairsBF16AVX512"
	av.TEXT(name, attr.NOSPLIT, "func(dst *uint16, ds int, src *[8]*float32, n int)")
	av.Pragma("noescape")
	av.Doc(name + " is winoGradOut of two tiles (src[0..3], src[4..7]) rounded to bfloat16 and interleaved in pairs into dst (row stride ds), on n columns (a multiple of 16).")
	dp := av.Load(av.Param("dst"), av.GP64())
	ds := av.Load(av.Param("ds"), av.GP64())
	av.SHLQ(operand.U8(1), ds)
	tbl := av.Load(av.Param("src"), av.GP64())
	n := av.Load(av.Param("n"), av.GP64())
	av.SHRQ(operand.U8(4), n)
	ds3 := av.GP64()
	av.LEAQ(operand.Mem{Base: ds, Index: ds, Scale: 2}, ds3)
	av.VMOVDQU32(idx, zmm(31))
	av.VPXORD(zmm(30), zmm(30), zmm(30))
	jo := av.GP64()
	av.XORQ(jo, jo)
	dq := [4]reg.GPVirtual{av.GP64(), av.GP64(), av.GP64(), av.GP64()}
	p := av.GP64()
	// t(x, i, c) is the register of t_i of column c of tile x.
	t := func(x, i, c int) int { return 10*x + 2*i + c }
	countedLoop(n, func() {
		av.MOVQ(dp, dq[0])
		for g := 1; g < 4; g++ {
			av.LEAQ(operand.Mem{Base: dq[g-1], Index: ds, Scale: 4}, dq[g])
		}
		for x := range 2 {
			// y0c in t(x, 0, c); y1c in t(x, 1, c) until t_1 is
			// computed, so t_2 and t_3 come first.
			for q := range 4 {
				av.MOVQ(operand.Mem{Base: tbl, Disp: 8 * (4*x + q)}, p)
				av.VMOVUPS(operand.Mem{Base: p, Index: jo, Scale: 1}, zmm(10*x+q))
			}
			for c := range 2 {
				y0, y1 := zmm(10*x+c), zmm(10*x+2+c)
				av.VSUBPS(y1, y0, zmm(t(x, 2, c)))      // y0 - y1
				av.VSUBPS(y1, zmm(30), zmm(t(x, 3, c))) // 0 - y1
				av.VADDPS(y1, y0, zmm(t(x, 1, c)))      // y0 + y1 (over y1)
			}
		}
		for i := range 4 {
			row := func(j int) operand.Mem { return strided(dq[i], ds, ds3, j, 0) }
			pairStore(t(0, i, 0), t(1, i, 0), row(0))
			for x := range 2 {
				av.VADDPS(zmm(t(x, i, 1)), zmm(t(x, i, 0)), zmm(20+x)) // t0 + t1
			}
			pairStore(20, 21, row(1))
			for x := range 2 {
				av.VSUBPS(zmm(t(x, i, 1)), zmm(t(x, i, 0)), zmm(20+x)) // t0 - t1
			}
			pairStore(20, 21, row(2))
			for x := range 2 {
				av.VSUBPS(zmm(t(x, i, 1)), zmm(30), zmm(20+x)) // 0 - t1
			}
			pairStore(20, 21, row(3))
		}
		av.ADDQ(operand.U32(64), jo)
		av.ADDQ(operand.U32(64), dp)
	})
}

// winoGatherInPairsBF16 writes winoGatherInPairsBF16AVX512:
// winoGatherInAVX512 (the same additions in the same order) of two
// tiles, src[0..15] the first's patch rows and src[16..31] the second's,
// each transformed row e rounded to bfloat16 and the two tiles' values
// interleaved: dst[e*ds+2j] is the first tile's (B^T d B)[e] of column j,
// dst[e*ds+2j+1] the second's, for n columns (a multiple of 16).
// Physical registers only: per output row k, the tiles' s_q in Z0-Z3 and
// Z4-Z7, row values in Z20-Z21, the pair index in Z31.
func winoGatherInPairsBF16(idx operand.Mem) {
	name := "winoGatherInPairsBF16AVX512"
	av.TEXT(name, attr.NOSPLIT, "func(dst *uint16, ds int, src *[32]*float32, n int)")
	av.Pragma("noescape")
	av.Doc(name + " is winoGatherInAVX512 of two tiles (src[0..15], src[16..31]) rounded to bfloat16 and interleaved in pairs into dst (row stride ds), on n columns (a multiple of 16).")
	dp := av.Load(av.Param("dst"), av.GP64())
	ds := av.Load(av.Param("ds"), av.GP64())
	av.SHLQ(operand.U8(1), ds)
	tbl := av.Load(av.Param("src"), av.GP64())
	n := av.Load(av.Param("n"), av.GP64())
	av.SHRQ(operand.U8(4), n)
	ds3 := av.GP64()
	av.LEAQ(operand.Mem{Base: ds, Index: ds, Scale: 2}, ds3)
	av.VMOVDQU32(idx, zmm(31))
	jo := av.GP64()
	av.XORQ(jo, jo)
	dq := [4]reg.GPVirtual{av.GP64(), av.GP64(), av.GP64(), av.GP64()}
	pa, pb := av.GP64(), av.GP64()
	countedLoop(n, func() {
		av.MOVQ(dp, dq[0])
		for g := 1; g < 4; g++ {
			av.LEAQ(operand.Mem{Base: dq[g-1], Index: ds, Scale: 4}, dq[g])
		}
		for k := range 4 {
			// s_q = first - second of patch rows (r0, r1), or their sum.
			r0, r1, add := [4]int{0, 1, 2, 1}[k], [4]int{2, 2, 1, 3}[k], k == 1
			for x := range 2 {
				for q := range 4 {
					s := zmm(4*x + q)
					av.MOVQ(operand.Mem{Base: tbl, Disp: 8 * (16*x + 4*r0 + q)}, pa)
					av.MOVQ(operand.Mem{Base: tbl, Disp: 8 * (16*x + 4*r1 + q)}, pb)
					av.VMOVUPS(operand.Mem{Base: pa, Index: jo, Scale: 1}, s)
					if add {
						av.VADDPS(operand.Mem{Base: pb, Index: jo, Scale: 1}, s, s) // d1 + d2
					} else {
						av.VSUBPS(operand.Mem{Base: pb, Index: jo, Scale: 1}, s, s)
					}
				}
			}
			row := func(l int) operand.Mem { return strided(dq[k], ds, ds3, l, 0) }
			s := func(x, q int) reg.VecPhysical { return zmm(4*x + q) }
			for x := range 2 {
				av.VSUBPS(s(x, 2), s(x, 0), zmm(20+x)) // s0 - s2
			}
			pairStore(20, 21, row(0))
			for x := range 2 {
				av.VADDPS(s(x, 2), s(x, 1), zmm(20+x)) // s1 + s2
			}
			pairStore(20, 21, row(1))
			for x := range 2 {
				av.VSUBPS(s(x, 1), s(x, 2), zmm(20+x)) // s2 - s1
			}
			pairStore(20, 21, row(2))
			for x := range 2 {
				av.VSUBPS(s(x, 3), s(x, 1), zmm(20+x)) // s1 - s3
			}
			pairStore(20, 21, row(3))
		}
		av.ADDQ(operand.U32(64), jo)
		av.ADDQ(operand.U32(64), dp)
	})
}

// prefetch4 writes prefetch4: PREFETCHT0 of lines cache lines from each
// of the four pointers.
func prefetch4() {
	av.TEXT("prefetch4", av.NOSPLIT, "func(p *[4]*float32, lines int)")
	av.Pragma("noescape")
	av.Doc("prefetch4 prefetches (PREFETCHT0) lines cache lines from each of p's four pointers.")
	tbl := av.Load(av.Param("p"), av.GP64())
	n := av.Load(av.Param("lines"), av.GP64())
	var pp [4]reg.GPVirtual
	for q := range 4 {
		pp[q] = av.GP64()
		av.MOVQ(operand.Mem{Base: tbl, Disp: 8 * q}, pp[q])
	}
	countedLoop(n, func() {
		for q := range 4 {
			av.PREFETCHT0(operand.Mem{Base: pp[q]})
			av.ADDQ(operand.U32(64), pp[q])
		}
	})
}
