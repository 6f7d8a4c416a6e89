// Command _generate writes ../gemm_amd64.s, the AVX2+FMA and AVX-512 GEMM
// micro-kernels of package kernels (and sum9AVX2, the inner loop of
// col2im3x3, and the Winograd loops winoInAVX2, winoGatherIn<w> and
// winoOutStore<w>: the transforms and the store of Conv3x3Winograd), and the
// AVX-512 BF16 ones (bf16.go), the AVX-512 loops of training's batch
// normalisation (batchnorm.go), and the run-of-tiles input transforms
// (wintab.go), with avo. Run it with `go generate` in
// kernels (see the go:generate line in kernels/gemm_amd64.go) or directly:
//
//	cd kernels/_generate && go run . -out ../gemm_amd64.s
//
// Every kernel implements the tileKernel contract documented in
// kernels/gemm_blocked.go: it computes an mr x nr tile of C from k columns of
// A (read in place, row-major or transposed) and k rows of B (nr contiguous
// floats per row, leading dimension ldb), then applies an epilogue selected
// by flags (alpha scale, add C, add bias, add residual, ReLU) and stores it.
package main

import (
	"flag"
	"fmt"
	"go/format"
	"os"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	av "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Epilogue flags; they must match the k* constants of kernels/gemm_blocked.go.
const (
	kAlpha    = 1
	kLoadC    = 2
	kBias     = 4
	kResidual = 8
	kReLU     = 16
)

// unroll is how many k steps one loop iteration does.
const unroll = 4

// kernel describes one micro-kernel.
type kernel struct {
	zmm    bool // AVX-512 (16 lanes, 32 registers) or AVX2+FMA (8 lanes, 16 registers)
	mr     int  // tile rows
	nv     int  // tile columns in vectors
	transA bool // a(i,p) at a[p*lda+i] instead of a[i*lda+p]
}

func (k kernel) name() string {
	isa := "AVX2"
	if k.zmm {
		isa = "AVX512"
	}
	t := ""
	if k.transA {
		t = "T"
	}
	return fmt.Sprintf("gemm%dx%d%s%s", k.mr, k.nv*k.lanes(), t, isa)
}

func (k kernel) lanes() int {
	if k.zmm {
		return 16
	}
	return 8
}

func (k kernel) vec(i int) reg.VecPhysical {
	if k.zmm {
		return []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7, reg.Z8, reg.Z9,
			reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15, reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20,
			reg.Z21, reg.Z22, reg.Z23, reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}[i]
	}
	// Only Y0-Y15: Y16-Y31 need AVX-512VL.
	return []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7, reg.Y8, reg.Y9,
		reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15}[i]
}

// strided addresses base + u*ld + disp for u < 4, ld3 holding 3*ld.
func strided(base, ld, ld3 reg.Register, u, disp int) operand.Mem {
	switch u {
	case 0:
		return operand.Mem{Base: base, Disp: disp}
	case 1:
		return operand.Mem{Base: base, Index: ld, Scale: 1, Disp: disp}
	case 2:
		return operand.Mem{Base: base, Index: ld, Scale: 2, Disp: disp}
	default:
		return operand.Mem{Base: base, Index: ld3, Scale: 1, Disp: disp}
	}
}

// loadStride loads the int parameter name, a count of float32 values,
// into a new register as a count of bytes.
func loadStride(name string) reg.Register {
	r := av.Load(av.Param(name), av.GP64())
	av.SHLQ(operand.U8(2), r)
	return r
}

// loadVectors loads the int parameter name, a count of columns (a
// multiple of w's lanes), into a new register as a count of vectors.
func loadVectors(w simd, name string) reg.Register {
	r := av.Load(av.Param(name), av.GP64())
	av.SHRQ(operand.U8(w.shift()), r)
	return r
}

// broadcastParam broadcasts the float32 parameter name to every lane of
// a new vector register.
func broadcastParam(w simd, name string) reg.VecVirtual {
	p, err := av.Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	v := w.vec()
	av.VBROADCASTSS(p.Addr, v)
	return v
}

// countedLoop emits body n times (n is consumed; n = 0 runs it never),
// then VZEROUPPER and RET: the loop of the one-pass kernels.
func countedLoop(n reg.Register, body func()) {
	av.TESTQ(n, n)
	av.JZ(operand.LabelRef("done"))
	av.Label("loop")
	body()
	av.DECQ(n)
	av.JNZ(operand.LabelRef("loop"))
	av.Label("done")
	av.VZEROUPPER()
	av.RET()
}

// kLoop emits the K loop of a micro-kernel: kk steps (kk is consumed) as
// kk/unroll iterations of unroll steps, each iteration starting with
// head (nil for none), then the kk%unroll steps left one by one. step(u)
// emits step u of an iteration, advance(n) moves the operand pointers n
// steps on. n4 is a scratch register; labels are prefixed with prefix.
func kLoop(prefix string, kk, n4 reg.Register, step func(u int), advance func(steps int), head func()) {
	done := prefix + "kdone"
	av.MOVQ(kk, n4)
	av.SHRQ(operand.U8(2), n4)
	av.ANDQ(operand.U32(unroll-1), kk)
	av.TESTQ(n4, n4)
	av.JZ(operand.LabelRef(prefix + "tail"))
	av.Label(prefix + "loop")
	if head != nil {
		head()
	}
	for u := range unroll {
		step(u)
	}
	advance(unroll)
	av.DECQ(n4)
	av.JNZ(operand.LabelRef(prefix + "loop"))
	av.Label(prefix + "tail")
	av.TESTQ(kk, kk)
	av.JZ(operand.LabelRef(done))
	av.Label(prefix + "tailloop")
	step(0)
	advance(1)
	av.DECQ(kk)
	av.JNZ(operand.LabelRef(prefix + "tailloop"))
	av.Label(done)
}

func (k kernel) generate() {
	lanes := k.lanes()
	vbytes := 4 * lanes
	av.TEXT(k.name(), attr.NOSPLIT, "func(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, alpha float32, bias *float32, res *float32, flags int, pf uintptr)")
	av.Pragma("noescape")
	av.Doc(fmt.Sprintf("%s computes a %dx%d tile of C (see tileKernel in gemm_blocked.go), A read %s.",
		k.name(), k.mr, k.nv*lanes, map[bool]string{false: "row-major", true: "transposed"}[k.transA]))

	nacc := k.mr * k.nv
	nregs := 16
	if k.zmm {
		nregs = 32
	}
	if nacc+k.nv+1 > nregs {
		panic(k.name() + ": too many registers")
	}
	acc := func(i, v int) reg.VecPhysical { return k.vec(i*k.nv + v) }
	breg := func(v int) reg.VecPhysical { return k.vec(nacc + v) }
	bc := k.vec(nacc + k.nv)

	av.Comment("Zero the accumulators.")
	for i := range nacc {
		av.VXORPS(k.vec(i), k.vec(i), k.vec(i))
	}

	kk := av.Load(av.Param("k"), av.GP64())
	ap := av.Load(av.Param("a"), av.GP64())
	lda := loadStride("lda")
	lda3 := av.GP64()
	av.LEAQ(operand.Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	bp := av.Load(av.Param("b"), av.GP64())
	ldb := loadStride("ldb")
	ldb3 := av.GP64()
	av.LEAQ(operand.Mem{Base: ldb, Index: ldb, Scale: 2}, ldb3)

	// Row pointers for row-major A: rows 4g..4g+3 are rowp[g] + {0,1,2,3}*lda.
	var rowp []reg.Register
	if !k.transA {
		rowp = append(rowp, ap)
		for g := 1; g < (k.mr+3)/4; g++ {
			p := av.GP64()
			av.LEAQ(operand.Mem{Base: rowp[g-1], Index: lda, Scale: 4}, p)
			rowp = append(rowp, p)
		}
	}
	aAddr := func(i, u int) operand.Mem {
		if k.transA {
			return strided(ap, lda, lda3, u, 4*i)
		}
		return strided(rowp[i/4], lda, lda3, i%4, 4*u)
	}
	step := func(u int) {
		for v := range k.nv {
			av.VMOVUPS(strided(bp, ldb, ldb3, u, v*vbytes), breg(v))
		}
		for i := range k.mr {
			av.VBROADCASTSS(aAddr(i, u), bc)
			for v := range k.nv {
				av.VFMADD231PS(bc, breg(v), acc(i, v))
			}
		}
	}
	advance := func(steps int) {
		if k.transA {
			if steps == 1 {
				av.ADDQ(lda, ap)
			} else {
				av.LEAQ(operand.Mem{Base: ap, Index: lda, Scale: uint8(steps)}, ap)
			}
		} else {
			for _, p := range rowp {
				av.ADDQ(operand.U32(4*steps), p)
			}
		}
		if steps == 1 {
			av.ADDQ(ldb, bp)
		} else {
			av.LEAQ(operand.Mem{Base: bp, Index: ldb, Scale: uint8(steps)}, bp)
		}
	}

	// pf walks the memory to prefetch (the next row tile of A), two cache
	// lines per loop iteration.
	pf := av.Load(av.Param("pf"), av.GP64())
	kLoop("", kk, av.GP64(), step, advance, func() {
		av.PREFETCHT0(operand.Mem{Base: pf})
		av.PREFETCHT0(operand.Mem{Base: pf, Disp: 64})
		av.ADDQ(operand.U32(128), pf)
	})

	flags := av.Load(av.Param("flags"), av.GP64())
	cp := av.Load(av.Param("c"), av.GP64())
	ldc := loadStride("ldc")
	all := func(f func(r reg.VecPhysical)) {
		for i := range nacc {
			f(k.vec(i))
		}
	}
	// rows adds the tile at p (leading dimension ldc) to the accumulators.
	addRows := func(src reg.Register) {
		p := av.GP64()
		av.MOVQ(src, p)
		for i := range k.mr {
			for v := range k.nv {
				av.VADDPS(operand.Mem{Base: p, Disp: v * vbytes}, acc(i, v), acc(i, v))
			}
			if i+1 < k.mr {
				av.ADDQ(ldc, p)
			}
		}
	}

	av.TESTQ(operand.U32(kAlpha), flags)
	av.JZ(operand.LabelRef("noalpha"))
	alpha, err := av.Param("alpha").Resolve()
	if err != nil {
		panic(err)
	}
	av.VBROADCASTSS(alpha.Addr, bc)
	all(func(r reg.VecPhysical) { av.VMULPS(bc, r, r) })
	av.Label("noalpha")

	av.TESTQ(operand.U32(kLoadC), flags)
	av.JZ(operand.LabelRef("noload"))
	addRows(cp)
	av.Label("noload")

	av.TESTQ(operand.U32(kBias), flags)
	av.JZ(operand.LabelRef("nobias"))
	bias := av.Load(av.Param("bias"), av.GP64())
	for v := range k.nv {
		av.VMOVUPS(operand.Mem{Base: bias, Disp: v * vbytes}, breg(v))
	}
	for i := range k.mr {
		for v := range k.nv {
			av.VADDPS(breg(v), acc(i, v), acc(i, v))
		}
	}
	av.Label("nobias")

	av.TESTQ(operand.U32(kResidual), flags)
	av.JZ(operand.LabelRef("nores"))
	res := av.Load(av.Param("res"), av.GP64())
	addRows(res)
	av.Label("nores")

	av.TESTQ(operand.U32(kReLU), flags)
	av.JZ(operand.LabelRef("store"))
	av.VXORPS(bc, bc, bc)
	// VMAXPS returns its first (Go order) operand when either is NaN, so
	// NaN propagates like the Go code's "if v < 0".
	all(func(r reg.VecPhysical) { av.VMAXPS(r, bc, r) })
	av.Label("store")
	for i := range k.mr {
		for v := range k.nv {
			av.VMOVUPS(acc(i, v), operand.Mem{Base: cp, Disp: v * vbytes})
		}
		if i+1 < k.mr {
			av.ADDQ(ldc, cp)
		}
	}
	av.VZEROUPPER()
	av.RET()
}

// peak generates a loop of independent FMAs without memory operands: its
// rate is the machine's practical FMA peak, the yardstick benchmarks quote.
func peak(zmm bool) {
	k := kernel{zmm: zmm}
	isa := map[bool]string{false: "AVX2", true: "AVX512"}[zmm]
	av.TEXT("fmaPeak"+isa, attr.NOSPLIT, "func(n int)")
	av.Pragma("noescape")
	av.Doc(fmt.Sprintf("fmaPeak%s runs n iterations of 12 independent %d-lane FMAs (for benchmarks only).", isa, k.lanes()))
	n := av.Load(av.Param("n"), av.GP64())
	for i := range 14 {
		av.VXORPS(k.vec(i), k.vec(i), k.vec(i))
	}
	countedLoop(n, func() {
		for i := range 12 {
			av.VFMADD231PS(k.vec(12), k.vec(13), k.vec(i))
		}
	})
}

// sum9 writes sum9AVX2, the inner loop of col2im3x3 (kernels/elementwise.go):
// dst[j] = dst[j] + taps[8][j] + taps[7][j] + ... + taps[0][j], added one
// by one in that order (lane for lane the scalar loop's arithmetic), for
// j < n, n a multiple of 8.
func sum9() {
	av.TEXT("sum9AVX2", av.NOSPLIT, "func(dst *float32, taps *[9]*float32, n int)")
	av.Doc("sum9AVX2 adds taps[8][j], ..., taps[0][j] in that order into dst[j] for j < n (a multiple of 8).")
	av.Pragma("noescape")
	dst := av.Load(av.Param("dst"), av.GP64())
	tp := av.Load(av.Param("taps"), av.GP64())
	n := av.Load(av.Param("n"), av.GP64())
	var t [9]reg.GPVirtual
	for i := range t {
		t[i] = av.GP64()
		av.MOVQ(operand.Mem{Base: tp, Disp: 8 * i}, t[i])
	}
	i := av.GP64()
	av.XORQ(i, i)
	av.Label("sum9loop")
	av.CMPQ(i, n)
	av.JGE(operand.LabelRef("sum9done"))
	acc := av.YMM()
	av.VMOVUPS(operand.Mem{Base: dst, Index: i, Scale: 4}, acc)
	for k := 8; k >= 0; k-- {
		av.VADDPS(operand.Mem{Base: t[k], Index: i, Scale: 4}, acc, acc)
	}
	av.VMOVUPS(acc, operand.Mem{Base: dst, Index: i, Scale: 4})
	av.ADDQ(operand.Imm(8), i)
	av.JMP(operand.LabelRef("sum9loop"))
	av.Label("sum9done")
	av.VZEROUPPER()
	av.RET()
}

// winoIn writes winoInAVX2, the input transform of Conv3x3Winograd
// (kernels/winograd.go, winoIn): for each of n columns (a multiple of
// 8), the 16 patch values d[p*ds+j] become the 16 transformed values
// v[e*vs+j], e = 4k+l, by the same additions in the same order as the Go
// code.
func winoIn() {
	av.TEXT("winoInAVX2", av.NOSPLIT, "func(v *float32, vs int, d *float32, ds int, n int)")
	av.Doc("winoInAVX2 is winoIn on n columns (a multiple of 8): v = B^T d B per column.")
	av.Pragma("noescape")
	vp := av.Load(av.Param("v"), av.GP64())
	vs := loadStride("vs")
	dp := av.Load(av.Param("d"), av.GP64())
	ds := loadStride("ds")
	n := av.Load(av.Param("n"), av.GP64())
	av.SHRQ(operand.U8(3), n)
	// Row r of d is at d + r*ds: rows 0..15 through two bases.
	ds3 := av.GP64()
	av.LEAQ(operand.Mem{Base: ds, Index: ds, Scale: 2}, ds3)
	vs3 := av.GP64()
	av.LEAQ(operand.Mem{Base: vs, Index: vs, Scale: 2}, vs3)
	dq := [4]reg.GPVirtual{av.GP64(), av.GP64(), av.GP64(), av.GP64()}
	vq := [4]reg.GPVirtual{av.GP64(), av.GP64(), av.GP64(), av.GP64()}
	countedLoop(n, func() {
		// dq[g] = d + 4g*ds (rows 4g..4g+3), likewise vq[g].
		av.MOVQ(dp, dq[0])
		av.MOVQ(vp, vq[0])
		for g := 1; g < 4; g++ {
			av.LEAQ(operand.Mem{Base: dq[g-1], Index: ds, Scale: 4}, dq[g])
			av.LEAQ(operand.Mem{Base: vq[g-1], Index: vs, Scale: 4}, vq[g])
		}
		dAt := func(i, q int) operand.Mem { return strided(dq[i], ds, ds3, q, 0) } // d[i][q] is row 4i+q
		vAt := func(k, l int) operand.Mem { return strided(vq[k], vs, vs3, l, 0) }
		winoInBody(av.YMM, dAt, vAt)
		av.ADDQ(operand.U32(32), dp)
		av.ADDQ(operand.U32(32), vp)
	})
}

// winoInBody emits the input transform of one vector of columns: the
// patch value d[i][q] (row 4i+q) is read at dAt(i, q), output e = 4k+l
// is written at vAt(k, l).
func winoInBody(vec func() reg.VecVirtual, dAt func(i, q int) operand.Mem, vAt func(k, l int) operand.Mem) {
	// For each output row k: s_q = combine_k(d[0..3][q]), then v[k][l].
	for k := range 4 {
		var sv [4]reg.VecVirtual
		for q := range 4 {
			a, b := vec(), vec()
			sv[q] = vec()
			switch k {
			case 0: // d0 - d2
				av.VMOVUPS(dAt(0, q), a)
				av.VMOVUPS(dAt(2, q), b)
				av.VSUBPS(b, a, sv[q])
			case 1: // d1 + d2
				av.VMOVUPS(dAt(1, q), a)
				av.VMOVUPS(dAt(2, q), b)
				av.VADDPS(b, a, sv[q])
			case 2: // d2 - d1
				av.VMOVUPS(dAt(2, q), a)
				av.VMOVUPS(dAt(1, q), b)
				av.VSUBPS(b, a, sv[q])
			default: // d1 - d3
				av.VMOVUPS(dAt(1, q), a)
				av.VMOVUPS(dAt(3, q), b)
				av.VSUBPS(b, a, sv[q])
			}
		}
		out := vec()
		av.VSUBPS(sv[2], sv[0], out) // s0 - s2
		av.VMOVUPS(out, vAt(k, 0))
		out = vec()
		av.VADDPS(sv[2], sv[1], out) // s1 + s2
		av.VMOVUPS(out, vAt(k, 1))
		out = vec()
		av.VSUBPS(sv[1], sv[2], out) // s2 - s1
		av.VMOVUPS(out, vAt(k, 2))
		out = vec()
		av.VSUBPS(sv[3], sv[1], out) // s1 - s3
		av.VMOVUPS(out, vAt(k, 3))
	}
}

// winoGatherIn writes winoGatherIn<w>: winoIn reading the 16 patch
// values of each column straight from the image, pixel p's channels at
// src[p] (the image or zeros), instead of from a gathered copy.
func winoGatherIn(w simd) {
	name := "winoGatherIn" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(v *float32, vs int, src *[16]*float32, n int)")
	av.Doc(fmt.Sprintf("%s is winoIn on n columns (a multiple of %d) with patch row p read from src[p].", name, w.lanes))
	av.Pragma("noescape")
	vp := av.Load(av.Param("v"), av.GP64())
	vs := loadStride("vs")
	tbl := av.Load(av.Param("src"), av.GP64())
	n := loadVectors(w, "n")
	vs3 := av.GP64()
	av.LEAQ(operand.Mem{Base: vs, Index: vs, Scale: 2}, vs3)
	jo := av.GP64() // byte offset of the columns in every source row
	av.XORQ(jo, jo)
	vq := [4]reg.GPVirtual{av.GP64(), av.GP64(), av.GP64(), av.GP64()}
	countedLoop(n, func() {
		av.MOVQ(vp, vq[0])
		for g := 1; g < 4; g++ {
			av.LEAQ(operand.Mem{Base: vq[g-1], Index: vs, Scale: 4}, vq[g])
		}
		dAt := func(i, q int) operand.Mem {
			p := av.GP64()
			av.MOVQ(operand.Mem{Base: tbl, Disp: 8 * (4*i + q)}, p)
			return operand.Mem{Base: p, Index: jo, Scale: 1}
		}
		vAt := func(k, l int) operand.Mem { return strided(vq[k], vs, vs3, l, 0) }
		winoInBody(w.vec, dAt, vAt)
		av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
		av.ADDQ(operand.U32(uint64(4*w.lanes)), vp)
	})
}

// winoOutStore writes winoOutStore<w>: the output transform and the
// store of one tile (kernels/winograd.go, winoOutStore). For each of n columns j (a multiple
// of the lanes) of the tile's 16 products m[e*ms+j] it computes the 4
// outputs y_q = (A^T m A)[q], then out[q][j] = max(y_q + bias[j] +
// res[q][j], lo), with the same operations in the same order as the Go
// code (kernels/winograd.go, winoOutStore). res[q] may be out[q].
func winoOutStore(w simd) {
	name := "winoOutStore" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(m *float32, ms int, out, res *[4]*float32, bias *float32, lo float32, n int)")
	av.Doc(fmt.Sprintf("%s is winoOutStore on n columns (a multiple of %d): out[q][j] = max((A^T m A)[q][j] + bias[j] + res[q][j], lo); res[q] may be out[q].", name, w.lanes))
	av.Pragma("noescape")
	mp := av.Load(av.Param("m"), av.GP64())
	ms := loadStride("ms")
	outs := av.Load(av.Param("out"), av.GP64())
	ress := av.Load(av.Param("res"), av.GP64())
	bias := av.Load(av.Param("bias"), av.GP64())
	n := loadVectors(w, "n")
	vlo := broadcastParam(w, "lo")
	ms3 := av.GP64()
	av.LEAQ(operand.Mem{Base: ms, Index: ms, Scale: 2}, ms3)
	jo := av.GP64() // byte offset of the columns
	av.XORQ(jo, jo)
	mq := [4]reg.GPVirtual{av.GP64(), av.GP64(), av.GP64(), av.GP64()}
	mAt := func(i, q int) operand.Mem { return strided(mq[i], ms, ms3, q, 0) }
	countedLoop(n, func() {
		av.MOVQ(mp, mq[0])
		for g := 1; g < 4; g++ {
			av.LEAQ(operand.Mem{Base: mq[g-1], Index: ms, Scale: 4}, mq[g])
		}
		winoOutTransform(w, mAt, func(q int, o reg.VecVirtual) {
			rp, op := av.GP64(), av.GP64()
			av.MOVQ(operand.Mem{Base: ress, Disp: 8 * q}, rp)
			av.MOVQ(operand.Mem{Base: outs, Disp: 8 * q}, op)
			av.VADDPS(operand.Mem{Base: bias, Index: jo, Scale: 1}, o, o)
			av.VADDPS(operand.Mem{Base: rp, Index: jo, Scale: 1}, o, o)
			// VMAXPS returns its first (Go order) operand unless the
			// second is greater: the sum, unless lo > sum.
			av.VMAXPS(o, vlo, o)
			av.VMOVUPS(o, operand.Mem{Base: op, Index: jo, Scale: 1})
		})
		av.ADDQ(operand.U32(uint64(4*w.lanes)), mp)
		av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
	})
}

// winoOutTransform emits the Winograd F(2x2,3x3) output transform of one
// block of w.lanes columns, A^T m A: for a = 0, 1 it sums m's rows
// (0+1+2, or 1-2-3) tap by tap into t, then t's taps the same way into
// the outputs 2a and 2a+1, handing each output vector to emit with its
// index q as soon as it is formed. mAt(i, q) addresses row i, tap q of m.
func winoOutTransform(w simd, mAt func(i, q int) operand.Mem, emit func(q int, y reg.VecVirtual)) {
	for a := range 2 {
		var tv [4]reg.VecVirtual
		for q := range 4 {
			tv[q] = w.vec()
			x := w.vec()
			if a == 0 {
				av.VMOVUPS(mAt(0, q), tv[q])
				av.VMOVUPS(mAt(1, q), x)
				av.VADDPS(x, tv[q], tv[q])
				av.VMOVUPS(mAt(2, q), x)
				av.VADDPS(x, tv[q], tv[q])
			} else {
				av.VMOVUPS(mAt(1, q), tv[q])
				av.VMOVUPS(mAt(2, q), x)
				av.VSUBPS(x, tv[q], tv[q])
				av.VMOVUPS(mAt(3, q), x)
				av.VSUBPS(x, tv[q], tv[q])
			}
		}
		for r := range 2 {
			y := w.vec()
			if r == 0 {
				av.VADDPS(tv[1], tv[0], y) // t0 + t1 + t2
				av.VADDPS(tv[2], y, y)
			} else {
				av.VSUBPS(tv[2], tv[1], y) // t1 - t2 - t3
				av.VSUBPS(tv[3], y, y)
			}
			emit(2*a+r, y)
		}
	}
}

// simd is a vector width of the Winograd loops: the suffix of the
// functions' names, the float32 lanes and the register maker.
type simd struct {
	suffix string
	lanes  int
	vec    func() reg.VecVirtual
}

var (
	avx2   = simd{"AVX2", 8, av.YMM}
	avx512 = simd{"AVX512", 16, av.ZMM}
)

// shift is log2(lanes): columns to vectors.
func (w simd) shift() uint8 {
	if w.lanes == 16 {
		return 4
	}
	return 3
}

// tileSet is one register-tile shape and its tail kernels (fewer rows).
type tileSet struct {
	zmm    bool
	mr, nv int
}

var tileSets = []tileSet{
	{zmm: false, mr: 6, nv: 2}, // AVX2: 12 ymm accumulators
	{zmm: true, mr: 8, nv: 2},  // AVX-512: 16 zmm accumulators
	{zmm: true, mr: 6, nv: 4},  // AVX-512, wide: 24 zmm accumulators
	{zmm: true, mr: 8, nv: 3},  // AVX-512, 48 columns: 24 zmm accumulators (48-channel layers, where 32- and 64-wide tiles leave a tail)
}

func main() {
	tables := flag.String("tables", "", "write the Go table of tile sets to `file`")
	flag.Parse()
	av.ConstraintExpr("amd64")
	var tab strings.Builder
	tab.WriteString("// Code generated by command: go run main.go " + strings.Join(os.Args[1:], " ") + ". DO NOT EDIT.\n\n")
	tab.WriteString("//go:build amd64\n\npackage kernels\n\n// The tile sets of gemm_amd64.s: full tiles and, for m tails, the same\n// kernel with fewer rows (tail[r] computes r rows).\nvar (\n")
	for _, ts := range tileSets {
		var names [2][]string
		for ti, t := range []bool{false, true} {
			for r := 1; r <= ts.mr; r++ {
				k := kernel{zmm: ts.zmm, mr: r, nv: ts.nv, transA: t}
				k.generate()
				names[ti] = append(names[ti], k.name())
			}
		}
		full := kernel{zmm: ts.zmm, mr: ts.mr, nv: ts.nv}
		fmt.Fprintf(&tab, "\ttiles%dx%d%s = &tileSet{mr: %d, nr: %d, kern: %s, kernT: %s,\n\t\ttail:  []tileKernel{nil, %s},\n\t\ttailT: []tileKernel{nil, %s}}\n",
			ts.mr, ts.nv*full.lanes(), strings.TrimPrefix(full.name(), fmt.Sprintf("gemm%dx%d", ts.mr, ts.nv*full.lanes())),
			ts.mr, ts.nv*full.lanes(), names[0][ts.mr-1], names[1][ts.mr-1],
			strings.Join(names[0][:ts.mr-1], ", "), strings.Join(names[1][:ts.mr-1], ", "))
	}
	tab.WriteString(")\n")
	peak(false)
	peak(true)
	sum9()
	winoIn()
	for _, w := range []simd{avx2, avx512} {
		winoGatherIn(w)
		winoOutStore(w)
	}
	tab.WriteString(generateBF16())
	batchNorm()
	winoFuse()
	wgrad()
	winoTab()
	wino34()
	elementwise()
	av.Generate()
	if *tables != "" {
		src, err := format.Source([]byte(tab.String()))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.WriteFile(*tables, src, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
