package main

import (
	"fmt"
	"math"

	"github.com/mmcloughlin/avo/attr"
	av "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The loops of the Winograd F(3x4,3x3) convolution (kernels/winograd34.go):
// the input transform of one tile read straight from the image
// (w34GatherIn<w>), the output transform with the fused store
// (w34OutStore<w>) or with batch norm's statistics (w34OutStats<w>), and
// the output gradient's transform of the weight gradient (w34GradOut<w>).
// Each does, per vector of columns, the Go loop's operations in the
// Go loop's order (products by 3, 4, 5 and 8 as VMULPS, rounded once as
// Go's are; by 2 as an addition, exact), values used twice computed
// once, so the results are the same bits.

// w34Rows addresses row p (0..29) of a strided matrix: base + p*stride
// bytes. It stores the 29 offsets p*stride in a local table once (call
// it before the loop); each access loads its offset from there into a
// fresh register (an IMUL per access bound the loops on the multiplier).
// The result takes the base register (which may change between uses).
func w34Rows(stride reg.Register) func(base reg.Register) func(p int) operand.Mem {
	tbl := av.AllocLocal(8 * w34Pos)
	for p := 1; p < w34Pos; p++ {
		o := av.GP64()
		av.IMUL3Q(operand.U32(uint64(p)), stride, o)
		av.MOVQ(o, tbl.Offset(8*p))
	}
	return func(base reg.Register) func(p int) operand.Mem {
		return func(p int) operand.Mem {
			if p == 0 {
				return operand.Mem{Base: base}
			}
			o := av.GP64()
			av.MOVQ(tbl.Offset(8*p), o)
			return operand.Mem{Base: base, Index: o, Scale: 1}
		}
	}
}

// w34Pos is the number of rows of the transformed tile.
const w34Pos = 30

// w34Const declares the float32 constants 3, 4, 5 and 8 of the loops'
// products (at byte offsets 0, 4, 8 and 12).
func w34Const() operand.Mem {
	m := av.GLOBL("w34Consts", attr.RODATA|attr.NOPTR)
	for i, v := range []float32{3, 4, 5, 8} {
		av.DATA(4*i, operand.U32(math.Float32bits(v))) // F32 prints as an integer
	}
	return m
}

// w34Consts are the constants broadcast into vector registers.
type w34Consts struct{ c3, c4, c5, c8 reg.VecVirtual }

// loadConsts broadcasts the constants of k (3, 4, 5, 8) at m.
func loadConsts(w simd, m operand.Mem) w34Consts {
	var c w34Consts
	for i, r := range []*reg.VecVirtual{&c.c3, &c.c4, &c.c5, &c.c8} {
		*r = w.vec()
		av.VBROADCASTSS(m.Offset(4*i), *r)
	}
	return c
}

// mul returns a * c (rounded once, as Go's float32(c*a)).
func mul(w simd, a, c reg.VecVirtual) reg.VecVirtual {
	d := w.vec()
	av.VMULPS(c, a, d)
	return d
}

// w34Ptr addresses column offset jo of the pointer in slot q of the
// pointer table tbl.
func w34Ptr(tbl, jo reg.Register, q int) operand.Mem {
	p := av.GP64()
	av.MOVQ(operand.Mem{Base: tbl, Disp: 8 * q}, p)
	return operand.Mem{Base: p, Index: jo, Scale: 1}
}

// w34Load loads a vector from m.
func w34Load(w simd, m operand.Mem) reg.VecVirtual {
	x := w.vec()
	av.VMOVUPS(m, x)
	return x
}

// Emitters of dst = a op b (a new register).
func add(w simd, a, b reg.VecVirtual) reg.VecVirtual {
	d := w.vec()
	av.VADDPS(b, a, d)
	return d
}

func sub(w simd, a, b reg.VecVirtual) reg.VecVirtual {
	d := w.vec()
	av.VSUBPS(b, a, d)
	return d
}

func dbl(w simd, a reg.VecVirtual) reg.VecVirtual { return add(w, a, a) }

// w34InBody emits the input transform of one vector of columns: the patch
// value d[i][c] (row 6i+c) is read at dAt(i, c), output e = 6k+l written
// at vAt(k, l); the values of kernels/winograd34.go's w34In (each by the
// same operations, values used twice computed once). It runs in two
// passes through v: each column's 5 values once down the column (s =
// B3^T d into v's rows), then each row of s along the row, in place
// (reading the patch once instead of once per output row).
func w34InBody(w simd, k w34Consts, dAt func(i, c int) operand.Mem, vAt func(k, l int) operand.Mem) {
	w34InBodyTo(w, k, dAt, vAt, func(o reg.VecVirtual, r, l int) { av.VMOVUPS(o, vAt(r, l)) })
}

// w34InBodyTo is w34InBody handing each output e = 6r+l to out (the first
// pass still writes s into v's rows at vAt).
func w34InBodyTo(w simd, k w34Consts, dAt func(i, c int) operand.Mem, vAt func(k, l int) operand.Mem, out func(o reg.VecVirtual, r, l int)) {
	for c := range 6 {
		var d [5]reg.VecVirtual
		for i := range d {
			d[i] = w34Load(w, dAt(i, c))
		}
		s3 := sub(w, d[3], d[1]) // d3 - d1
		d3x2 := dbl(w, d[3])
		s := [5]reg.VecVirtual{
			add(w, sub(w, d[0], d[2]), dbl(w, s3)),         // (d0 - d2) + 2*(d3-d1)
			add(w, sub(w, d[2], d[1]), d3x2),               // (d2 - d1) + 2*d3
			add(w, sub(w, d[1], mul(w, d[2], k.c3)), d3x2), // (d1 - 3*d2) + 2*d3
			s3, // d3 - d1
			add(w, sub(w, d[1], dbl(w, d[2])), sub(w, dbl(w, d[4]), d[3])), // (d1 - 2*d2) + (2*d4 - d3)
		}
		for r, v := range s {
			av.VMOVUPS(v, vAt(r, c))
		}
	}
	for r := range 5 {
		var s [6]reg.VecVirtual
		for c := range s {
			s[c] = w34Load(w, vAt(r, c))
		}
		e, f := sub(w, s[4], s[2]), dbl(w, sub(w, s[3], s[1])) // s4 - s2, 2*(s3-s1)
		outs := [6]reg.VecVirtual{
			add(w, sub(w, mul(w, s[0], k.c4), mul(w, s[2], k.c5)), s[4]), // (4*s0 - 5*s2) + s4
			sub(w, add(w, s[3], s[4]), mul(w, add(w, s[1], s[2]), k.c4)), // (s3 + s4) - 4*(s1+s2)
			add(w, sub(w, s[4], s[3]), mul(w, sub(w, s[1], s[2]), k.c4)), // (s4 - s3) + 4*(s1-s2)
			add(w, e, f), // (s4 - s2) + 2*(s3-s1)
			sub(w, e, f), // (s4 - s2) - 2*(s3-s1)
			add(w, sub(w, mul(w, s[1], k.c4), mul(w, s[3], k.c5)), s[5]), // (4*s1 - 5*s3) + s5
		}
		for l, o := range outs {
			out(o, r, l)
		}
	}
}

// w34GatherIn writes w34GatherIn<w>: the input transform of one tile on
// n columns, patch row p read from src[p] (the image's pixel or zeros).
func w34GatherIn(w simd, consts operand.Mem) {
	name := "w34GatherIn" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(v *float32, vs int, src *[30]*float32, n int)")
	av.Doc(fmt.Sprintf("%s is w34In on n columns (a multiple of %d) with patch row p read from src[p].", name, w.lanes))
	av.Pragma("noescape")
	vp := av.Load(av.Param("v"), av.GP64())
	vs := loadStride("vs")
	tbl := av.Load(av.Param("src"), av.GP64())
	n := loadVectors(w, "n")
	jo := av.GP64() // byte offset of the columns in every source row
	av.XORQ(jo, jo)
	vRow := w34Rows(vs)(vp)
	k := loadConsts(w, consts)
	countedLoop(n, func() {
		w34InBody(w, k, func(i, c int) operand.Mem { return w34Ptr(tbl, jo, 6*i+c) },
			func(k, l int) operand.Mem { return vRow(6*k + l) })
		av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
		av.ADDQ(operand.U32(uint64(4*w.lanes)), vp)
	})
}

// w34TabStride is the bytes of one tile position's row of the F(3x4)
// tile table (w34Args.table: 30 + 12 int32 pixel indices).
const w34TabStride = 4 * (w34Pos + 12)

// w34GatherTiles writes w34GatherTiles<w>: w34GatherIn<w> on a run of nt
// tiles of one image, building each tile's 30 pointers from its row of
// the tile table itself (a conditional move picks zero for a pixel
// outside the image: the pointers built in Go per tile cost as much as
// the transform on the 16x2 Connect Four net), and prefetching pfl cache
// lines from pf per tile (the next image, a share per tile; pfl = 0: none).
func w34GatherTiles(w simd, consts operand.Mem) {
	name := "w34GatherTiles" + w.suffix
	gather34Tiles(w, consts, name, "func(v *float32, vs int, img *float32, tab *int32, zero *float32, cin int, nt int, pf *float32, pfl int)",
		fmt.Sprintf("%s is w34GatherIn%s on nt tiles: tile i's patch row q is pixel tab[42i+q] of img (zeros where negative), its transform is written at v[i*cin:] (row stride vs); cin is a multiple of %d; pfl cache lines from pf are prefetched per tile.", name, w.suffix, w.lanes), false)
}

// w34GatherTilesBF16 writes w34GatherTilesBF16AVX512: w34GatherTilesAVX512
// storing the transform rounded to bfloat16 into vb (VCVTNEPS2BF16, as
// ToBF16) instead of v, which holds only the first pass's values. The raw
// conversion reads Z31 and writes Y30: Z31 is written by a move right
// before it, and Y30 is read by the store with no visible write, so the
// register allocator keeps every value live in the loop out of Z30.
func w34GatherTilesBF16(consts operand.Mem) {
	name := "w34GatherTilesBF16AVX512"
	gather34Tiles(avx512, consts, name, "func(v *float32, vs int, vb *uint16, vbs int, img *float32, tab *int32, zero *float32, cin int, nt int, pf *float32, pfl int)",
		name+" is w34GatherTilesAVX512 with the transform rounded to bfloat16 at vb[i*cin:] (row stride vbs, in values); v's rows are scratch; cin is a multiple of 16.", true)
}

// gather34Tiles writes w34GatherTiles<w> (bf16 false) or
// w34GatherTilesBF16AVX512 (bf16 true).
func gather34Tiles(w simd, consts operand.Mem, name, sig, doc string, bf16 bool) {
	av.TEXT(name, av.NOSPLIT, sig)
	av.Doc(doc)
	av.Pragma("noescape")
	ptrs := av.AllocLocal(8 * w34Pos)
	cur, tabp, left, pfp := av.AllocLocal(8), av.AllocLocal(8), av.AllocLocal(8), av.AllocLocal(8)
	vs := loadStride("vs")
	vRowsOf := w34Rows(vs) // the offsets table; the base is set per use below
	var vbRowsOf func(base reg.Register) func(p int) operand.Mem
	var curb operand.Mem
	if bf16 {
		curb = av.AllocLocal(8)
		vbs := av.Load(av.Param("vbs"), av.GP64())
		av.SHLQ(operand.U8(1), vbs) // bytes
		vbRowsOf = w34Rows(vbs)
		vb := av.Load(av.Param("vb"), av.GP64())
		av.MOVQ(vb, curb)
	}
	k := loadConsts(w, consts)
	{
		v := av.Load(av.Param("v"), av.GP64())
		av.MOVQ(v, cur)
		t := av.Load(av.Param("tab"), av.GP64())
		av.MOVQ(t, tabp)
		p := av.Load(av.Param("pf"), av.GP64())
		av.MOVQ(p, pfp)
	}
	nt := av.Load(av.Param("nt"), av.GP64())
	av.MOVQ(nt, left)
	av.TESTQ(nt, nt)
	av.JZ(operand.LabelRef("done"))
	av.Label("tile")
	{
		// Prefetch this tile's share of the next image.
		pf := av.GP64()
		av.MOVQ(pfp, pf)
		pfl := av.Load(av.Param("pfl"), av.GP64())
		av.TESTQ(pfl, pfl)
		av.JZ(operand.LabelRef("pfdone"))
		av.Label("pfloop")
		av.PREFETCHT0(operand.Mem{Base: pf})
		av.ADDQ(operand.U32(64), pf)
		av.DECQ(pfl)
		av.JNZ(operand.LabelRef("pfloop"))
		av.Label("pfdone")
		av.MOVQ(pf, pfp)
	}
	{
		tab := av.GP64()
		av.MOVQ(tabp, tab)
		img := av.Load(av.Param("img"), av.GP64())
		zero := av.Load(av.Param("zero"), av.GP64())
		pix := av.Load(av.Param("cin"), av.GP64())
		av.SHLQ(operand.U8(2), pix) // bytes per pixel
		for q := range w34Pos {
			o, p := av.GP64(), av.GP64()
			av.MOVLQSX(operand.Mem{Base: tab, Disp: 4 * q}, o)
			av.MOVQ(o, p)
			av.IMULQ(pix, p)
			av.ADDQ(img, p)
			av.TESTQ(o, o)
			av.CMOVQLT(zero, p)
			av.MOVQ(p, ptrs.Offset(8*q))
		}
		av.ADDQ(operand.U32(w34TabStride), tab)
		av.MOVQ(tab, tabp)
	}
	{
		vp := av.GP64()
		av.MOVQ(cur, vp)
		var vbp reg.GPVirtual
		if bf16 {
			vbp = av.GP64()
			av.MOVQ(curb, vbp)
		}
		n := loadVectors(w, "cin")
		jo := av.GP64()
		av.XORQ(jo, jo)
		av.Label("col")
		vRow := vRowsOf(vp)
		dAt := func(i, c int) operand.Mem {
			p := av.GP64()
			av.MOVQ(ptrs.Offset(8*(6*i+c)), p)
			return operand.Mem{Base: p, Index: jo, Scale: 1}
		}
		vAt := func(r, l int) operand.Mem { return vRow(6*r + l) }
		if bf16 {
			vbRow := vbRowsOf(vbp)
			w34InBodyTo(w, k, dAt, vAt, func(o reg.VecVirtual, r, l int) {
				av.VMOVAPS(o, reg.Z31)
				vcvtneps2bf16(30, 31)
				av.VMOVDQU32(reg.Y30, vbRow(6*r+l))
			})
			av.ADDQ(operand.U32(uint64(2*w.lanes)), vbp)
		} else {
			w34InBody(w, k, dAt, vAt)
		}
		av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
		av.ADDQ(operand.U32(uint64(4*w.lanes)), vp)
		av.DECQ(n)
		av.JNZ(operand.LabelRef("col"))
		c := loadStride("cin")
		av.ADDQ(c, cur)
		if bf16 {
			cb := av.Load(av.Param("cin"), av.GP64())
			av.SHLQ(operand.U8(1), cb)
			av.ADDQ(cb, curb)
		}
	}
	av.DECQ(left)
	av.JNZ(operand.LabelRef("tile"))
	av.Label("done")
	av.VZEROUPPER()
	av.RET()
}

// w34OutTransform emits the output transform of one vector of columns,
// A3^T m A4, with the values of kernels/winograd34.go's w34OutColumn,
// handing each output vector to emit with its index q = 4*row+column.
func w34OutTransform(w simd, k w34Consts, mAt func(p int) operand.Mem, emit func(q int, y reg.VecVirtual)) {
	for r := range 3 {
		var t [6]reg.VecVirtual
		for c := range 6 {
			m := func(i int) reg.VecVirtual { return w34Load(w, mAt(6*i+c)) }
			switch r {
			case 0: // (m0 + m1) + (m2 + 4*m3)
				a := add(w, m(0), m(1))
				t[c] = add(w, a, add(w, m(2), mul(w, m(3), k.c4)))
			case 1: // (m1 - m2) + 2*m3
				t[c] = add(w, sub(w, m(1), m(2)), dbl(w, m(3)))
			default: // (m1 + m2) + (m3 + m4)
				t[c] = add(w, add(w, m(1), m(2)), add(w, m(3), m(4)))
			}
		}
		p, q := add(w, t[1], t[2]), sub(w, t[1], t[2])
		u, v := add(w, t[3], t[4]), sub(w, t[3], t[4])
		emit(4*r, add(w, add(w, t[0], p), u))                 // (t0 + p) + u
		emit(4*r+1, add(w, q, dbl(w, v)))                     // q + 2v
		emit(4*r+2, add(w, p, mul(w, u, k.c4)))               // p + 4u
		emit(4*r+3, add(w, add(w, q, mul(w, v, k.c8)), t[5])) // (q + 8v) + t5
	}
}

// w34OutStore writes w34OutStore<w>: the output transform and store of
// one tile on n columns, out[q][j] = max(y_q + bias[j] + res[q][j], lo);
// res[q] may be out[q].
func w34OutStore(w simd, consts operand.Mem) {
	name := "w34OutStore" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(m *float32, ms int, out, res *[12]*float32, bias *float32, lo float32, n int)")
	av.Doc(fmt.Sprintf("%s is w34OutStore on n columns (a multiple of %d): out[q][j] = max((A3^T m A4)[q][j] + bias[j] + res[q][j], lo); res[q] may be out[q].", name, w.lanes))
	av.Pragma("noescape")
	mp := av.Load(av.Param("m"), av.GP64())
	ms := loadStride("ms")
	outs := av.Load(av.Param("out"), av.GP64())
	ress := av.Load(av.Param("res"), av.GP64())
	bias := av.Load(av.Param("bias"), av.GP64())
	n := loadVectors(w, "n")
	lo, err := av.Param("lo").Resolve()
	if err != nil {
		panic(err)
	}
	jo := av.GP64()
	av.XORQ(jo, jo)
	mRow := w34Rows(ms)(mp)
	k := loadConsts(w, consts)
	countedLoop(n, func() {
		w34OutTransform(w, k, mRow, func(q int, o reg.VecVirtual) {
			av.VADDPS(operand.Mem{Base: bias, Index: jo, Scale: 1}, o, o)
			av.VADDPS(w34Ptr(ress, jo, q), o, o)
			vlo := w.vec()
			av.VBROADCASTSS(lo.Addr, vlo)
			// VMAXPS returns its first (Go order) operand unless the
			// second is greater: the sum, unless lo > sum.
			av.VMAXPS(o, vlo, o)
			av.VMOVUPS(o, w34Ptr(outs, jo, q))
		})
		av.ADDQ(operand.U32(uint64(4*w.lanes)), mp)
		av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
	})
}

// w34OutStats writes w34OutStats<w>: the output transform of one tile on
// n columns stored as it is, out[q][j] = y_q, and e_q = (y_q - shift[j])
// AND keep[q] summed per channel, s1[j] += e_0 + ... + e_11 and s2[j] +=
// e_0*e_0 + ... + e_11*e_11, in order, every product and sum rounded.
func w34OutStats(w simd, consts operand.Mem) {
	name := "w34OutStats" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(m *float32, ms int, out *[12]*float32, keep *[12]uint32, shift, s1, s2 *float32, n int)")
	av.Doc(fmt.Sprintf("%s is w34OutStats on n columns (a multiple of %d): out[q][j] = (A3^T m A4)[q][j], and the outputs' sums around shift, masked by keep, added into s1 and s2.", name, w.lanes))
	av.Pragma("noescape")
	mp := av.Load(av.Param("m"), av.GP64())
	ms := loadStride("ms")
	outs := av.Load(av.Param("out"), av.GP64())
	keep := av.Load(av.Param("keep"), av.GP64())
	shift := av.Load(av.Param("shift"), av.GP64())
	s1 := av.Load(av.Param("s1"), av.GP64())
	s2 := av.Load(av.Param("s2"), av.GP64())
	n := loadVectors(w, "n")
	jo := av.GP64()
	av.XORQ(jo, jo)
	mRow := w34Rows(ms)(mp)
	k := loadConsts(w, consts)
	at := func(base reg.Register) operand.Mem { return operand.Mem{Base: base, Index: jo, Scale: 1} }
	countedLoop(n, func() {
		var sum, sq reg.VecVirtual
		w34OutTransform(w, k, mRow, func(q int, y reg.VecVirtual) {
			av.VMOVUPS(y, w34Ptr(outs, jo, q))
			e, k := w.vec(), w.vec()
			av.VSUBPS(at(shift), y, e) // y - shift
			av.VBROADCASTSS(operand.Mem{Base: keep, Disp: 4 * q}, k)
			av.VANDPS(k, e, e)
			if q == 0 {
				sum, sq = e, w.vec()
				av.VMULPS(e, e, sq)
				return
			}
			av.VADDPS(e, sum, sum)
			av.VMULPS(e, e, e)
			av.VADDPS(e, sq, sq)
		})
		av.VADDPS(at(s1), sum, sum)
		av.VMOVUPS(sum, at(s1))
		av.VADDPS(at(s2), sq, sq)
		av.VMOVUPS(sq, at(s2))
		av.ADDQ(operand.U32(uint64(4*w.lanes)), mp)
		av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
	})
}

// w34GradOut writes w34GradOut<w>: for each of n columns j of the 3x4
// output gradient y_q = src[q][j], the 30 values v[e*vs+j] = (A3 dY
// A4^T)[e], in the order of kernels/winograd34.go's w34GradOut.
func w34GradOut(w simd) {
	name := "w34GradOut" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(v *float32, vs int, src *[12]*float32, n int)")
	av.Doc(fmt.Sprintf("%s is w34GradOut on n columns (a multiple of %d): v = A3 dY A4^T per column, dY[q] read from src[q].", name, w.lanes))
	av.Pragma("noescape")
	vp := av.Load(av.Param("v"), av.GP64())
	vs := loadStride("vs")
	tbl := av.Load(av.Param("src"), av.GP64())
	n := loadVectors(w, "n")
	jo := av.GP64()
	av.XORQ(jo, jo)
	vRow := w34Rows(vs)(vp)
	countedLoop(n, func() {
		for i := range 5 {
			for l, o := range w34GradOutRow(w, i, func(q int) operand.Mem { return w34Ptr(tbl, jo, q) }) {
				av.VMOVUPS(o, vRow(6*i+l))
			}
		}
		av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
		av.ADDQ(operand.U32(uint64(4*w.lanes)), vp)
	})
}

// w34GradOutRow emits row i of the output gradient's transform of one
// vector of columns, dY[q] read at y(q): the values e = 6i+l, l < 6, of
// kernels/winograd34.go's w34GradOut (every product by a power of two,
// exact).
func w34GradOutRow(w simd, i int, y func(q int) operand.Mem) [6]reg.VecVirtual {
	var s [4]reg.VecVirtual
	for c := range 4 {
		y := func(r int) reg.VecVirtual { return w34Load(w, y(4*r+c)) }
		switch i {
		case 0:
			s[c] = y(0)
		case 1: // (y0 + y1) + y2
			s[c] = add(w, add(w, y(0), y(1)), y(2))
		case 2: // (y0 - y1) + y2
			s[c] = add(w, sub(w, y(0), y(1)), y(2))
		case 3: // (4*y0 + 2*y1) + y2
			s[c] = add(w, add(w, dbl(w, dbl(w, y(0))), dbl(w, y(1))), y(2))
		default:
			s[c] = y(2)
		}
	}
	four := func(x reg.VecVirtual) reg.VecVirtual { return dbl(w, dbl(w, x)) }
	eight := func(x reg.VecVirtual) reg.VecVirtual { return dbl(w, four(x)) }
	return [6]reg.VecVirtual{
		s[0],
		add(w, add(w, s[0], s[1]), add(w, s[2], s[3])),                      // (s0 + s1) + (s2 + s3)
		add(w, sub(w, s[0], s[1]), sub(w, s[2], s[3])),                      // (s0 - s1) + (s2 - s3)
		add(w, add(w, s[0], dbl(w, s[1])), add(w, four(s[2]), eight(s[3]))), // (s0 + 2*s1) + (4*s2 + 8*s3)
		add(w, sub(w, s[0], dbl(w, s[1])), sub(w, four(s[2]), eight(s[3]))), // (s0 - 2*s1) + (4*s2 - 8*s3)
		s[3],
	}
}

// w34GradOutPairsBF16 writes w34GradOutPairsBF16AVX512: w34GradOutAVX512
// of two tiles (dY of the first from src[0..11], of the second from
// src[12..23]), each value rounded to bfloat16 and the two tiles'
// interleaved in pairs (VCVTNE2PS2BF16 of Z31 (second) and Z30 (first)
// into Z29, then VPERMW by wgradPairIndex), the pair row of position e
// stored at dst + e*ds values: the packed B of the AMX weight gradient.
// Z29 is read with no visible write, so the register allocator keeps
// every value live in the loop out of it.
func w34GradOutPairsBF16(idx operand.Mem) {
	name := "w34GradOutPairsBF16AVX512"
	av.TEXT(name, av.NOSPLIT, "func(dst *uint16, ds int, src *[24]*float32, n int)")
	av.Doc(name + " is w34GradOutAVX512 of two tiles (src[0..11], src[12..23]) rounded to bfloat16 and interleaved in pairs into dst (row stride ds values), on n columns (a multiple of 16).")
	av.Pragma("noescape")
	dp := av.Load(av.Param("dst"), av.GP64())
	ds := av.Load(av.Param("ds"), av.GP64())
	av.SHLQ(operand.U8(1), ds) // bytes
	tbl := av.Load(av.Param("src"), av.GP64())
	n := loadVectors(avx512, "n")
	jo := av.GP64()
	av.XORQ(jo, jo)
	dRow := w34Rows(ds)(dp)
	perm := avx512.vec()
	av.VMOVDQU16(idx, perm)
	countedLoop(n, func() {
		for i := range 5 {
			first := w34GradOutRow(avx512, i, func(q int) operand.Mem { return w34Ptr(tbl, jo, q) })
			second := w34GradOutRow(avx512, i, func(q int) operand.Mem { return w34Ptr(tbl, jo, 12+q) })
			for l := range 6 {
				av.VMOVAPS(first[l], reg.Z30)
				av.VMOVAPS(second[l], reg.Z31)
				vcvtne2ps2bf16(29, 31, 30)
				out := avx512.vec()
				av.VPERMW(reg.Z29, perm, out)
				av.VMOVDQU16(out, dRow(6*i+l))
			}
		}
		av.ADDQ(operand.U32(64), jo)
		av.ADDQ(operand.U32(64), dp)
	})
}

// wino34 writes every F(3x4) loop.
func wino34() {
	consts := w34Const()
	wconsts := w34WeightConst()
	for _, w := range []simd{avx2, avx512} {
		w34WeightLoops(w, wconsts)
		w34GatherIn(w, consts)
		w34GatherTiles(w, consts)
		w34OutStore(w, consts)
		w34OutStats(w, consts)
		w34GradOut(w)
	}
	w34GatherTilesBF16(consts)
	w34GradOutPairsBF16(pairIndex())
}

// w34WeightConst declares the constants of the weight transform's loops:
// the divisors 2, 4, 6 and 24, the sign bit, and the divisors 3 and 12
// (at byte offsets 0, 4, 8, 12, 16, 20 and 24).
func w34WeightConst() operand.Mem {
	m := av.GLOBL("w34WeightConsts", attr.RODATA|attr.NOPTR)
	for i, v := range []float32{2, 4, 6, 24} {
		av.DATA(4*i, operand.U32(math.Float32bits(v)))
	}
	av.DATA(16, operand.U32(0x80000000))
	av.DATA(20, operand.U32(math.Float32bits(3)))
	av.DATA(24, operand.U32(math.Float32bits(12)))
	return m
}

// w34WeightLoops writes the two passes of WinogradWeights34 down
// contiguous columns: w34WeightsG<w> (t = G3 g over one kernel column's
// three taps) and w34WeightsGT<w> (U = t G4^T over one row of t), each
// value by the Go loop's operations in its order: the divisions as
// VDIVPS (correctly rounded, as Go's), negation by the sign bit (as Go's
// unary minus), products by 2 and 4 as additions or VMULPS (exact).
func w34WeightLoops(w simd, consts operand.Mem) {
	load := func(c int) reg.VecVirtual {
		r := w.vec()
		av.VBROADCASTSS(consts.Offset(4*c), r)
		return r
	}
	div := func(a, d reg.VecVirtual) reg.VecVirtual {
		r := w.vec()
		av.VDIVPS(d, a, r)
		return r
	}
	neg := func(a, sign reg.VecVirtual) reg.VecVirtual {
		r := w.vec()
		av.VXORPS(sign, a, r)
		return r
	}
	mul := func(a, c reg.VecVirtual) reg.VecVirtual {
		r := w.vec()
		av.VMULPS(c, a, r)
		return r
	}
	ptrs := func(param string, k int) []reg.GPVirtual {
		base := av.Load(av.Param(param), av.GP64())
		p := make([]reg.GPVirtual, k)
		for i := range p {
			p[i] = av.GP64()
			av.MOVQ(operand.Mem{Base: base, Disp: 8 * i}, p[i])
		}
		return p
	}
	at := func(p reg.GPVirtual, jo reg.Register) operand.Mem { return operand.Mem{Base: p, Index: jo, Scale: 1} }

	name := "w34WeightsG" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(taps *[3]*float32, t *[5]*float32, n int)")
	av.Doc(fmt.Sprintf("%s is WinogradWeights34's first pass on n columns (a multiple of %d): t = G3 g from the kernel taps taps[0..2].", name, w.lanes))
	av.Pragma("noescape")
	{
		g, t := ptrs("taps", 3), ptrs("t", 5)
		n := loadVectors(w, "n")
		two, four, six, sign := load(0), load(1), load(2), load(4)
		jo := av.GP64()
		av.XORQ(jo, jo)
		countedLoop(n, func() {
			g0, g1, g2 := w34Load(w, at(g[0], jo)), w34Load(w, at(g[1], jo)), w34Load(w, at(g[2], jo))
			av.VMOVUPS(g0, at(t[0], jo))
			av.VMOVUPS(div(add(w, add(w, g0, g1), g2), two), at(t[1], jo))                               // (g0 + g1 + g2) / 2
			av.VMOVUPS(div(neg(add(w, sub(w, g0, g1), g2), sign), six), at(t[2], jo))                    // -(g0 - g1 + g2) / 6
			av.VMOVUPS(div(neg(add(w, add(w, mul(g0, four), dbl(w, g1)), g2), sign), six), at(t[3], jo)) // -(4*g0 + 2*g1 + g2) / 6
			av.VMOVUPS(div(g2, two), at(t[4], jo))                                                       // g2 / 2
			av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
		})
		av.VZEROUPPER()
		av.RET()
	}

	name = "w34WeightsGT" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(t *[3]*float32, u *[6]*float32, n int)")
	av.Doc(fmt.Sprintf("%s is WinogradWeights34's second pass on n columns (a multiple of %d): U = t G4^T from one row t[0..2] of t.", name, w.lanes))
	av.Pragma("noescape")
	{
		t, u := ptrs("t", 3), ptrs("u", 6)
		n := loadVectors(w, "n")
		four, six, tf, sign := load(1), load(2), load(3), load(4)
		jo := av.GP64()
		av.XORQ(jo, jo)
		countedLoop(n, func() {
			a, b, c := w34Load(w, at(t[0], jo)), w34Load(w, at(t[1], jo)), w34Load(w, at(t[2], jo))
			b2, c4 := dbl(w, b), mul(c, four)
			av.VMOVUPS(div(a, four), at(u[0], jo))                                 // a / 4
			av.VMOVUPS(div(neg(add(w, add(w, a, b), c), sign), six), at(u[1], jo)) // -(a + b + c) / 6
			av.VMOVUPS(div(neg(add(w, sub(w, a, b), c), sign), six), at(u[2], jo)) // -(a - b + c) / 6
			av.VMOVUPS(div(add(w, add(w, a, b2), c4), tf), at(u[3], jo))           // (a + 2*b + 4*c) / 24
			av.VMOVUPS(div(add(w, sub(w, a, b2), c4), tf), at(u[4], jo))           // (a - 2*b + 4*c) / 24
			av.VMOVUPS(c, at(u[5], jo))                                            // c
			av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
		})
		av.VZEROUPPER()
		av.RET()
	}

	name = "w34WeightsGradG" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(du *[5]*float32, t *[3]*float32, n int)")
	av.Doc(fmt.Sprintf("%s is WinogradWeights34Grad's first pass on n columns (a multiple of %d): t = G3^T du from one column du[0..4] of du.", name, w.lanes))
	av.Pragma("noescape")
	{
		u, t := ptrs("du", 5), ptrs("t", 3)
		n := loadVectors(w, "n")
		two, six, three := load(0), load(2), load(5)
		jo := av.GP64()
		av.XORQ(jo, jo)
		countedLoop(n, func() {
			var x [5]reg.VecVirtual
			for i := range x {
				x[i] = w34Load(w, at(u[i], jo))
			}
			h1, s2 := div(x[1], two), div(x[2], six)                                                 // u1/2, u2/6
			av.VMOVUPS(sub(w, sub(w, add(w, x[0], h1), s2), div(dbl(w, x[3]), three)), at(t[0], jo)) // u0 + u1/2 - u2/6 - 2*u3/3
			av.VMOVUPS(sub(w, add(w, h1, s2), div(x[3], three)), at(t[1], jo))                       // u1/2 + u2/6 - u3/3
			av.VMOVUPS(add(w, sub(w, sub(w, h1, s2), div(x[3], six)), div(x[4], two)), at(t[2], jo)) // u1/2 - u2/6 - u3/6 + u4/2
			av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
		})
		av.VZEROUPPER()
		av.RET()
	}

	name = "w34WeightsGradGT" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(t *[6]*float32, dw *[3]*float32, n int)")
	av.Doc(fmt.Sprintf("%s is WinogradWeights34Grad's second pass on n columns (a multiple of %d): dw = t G4 from one row t[0..5] of t.", name, w.lanes))
	av.Pragma("noescape")
	{
		t, d := ptrs("t", 6), ptrs("dw", 3)
		n := loadVectors(w, "n")
		four, six, tf, twelve := load(1), load(2), load(3), load(6)
		jo := av.GP64()
		av.XORQ(jo, jo)
		countedLoop(n, func() {
			var x [6]reg.VecVirtual
			for i := range x {
				x[i] = w34Load(w, at(t[i], jo))
			}
			p12, p34 := add(w, x[1], x[2]), add(w, x[3], x[4])                                              // t1+t2, t3+t4
			av.VMOVUPS(add(w, sub(w, div(x[0], four), div(p12, six)), div(p34, tf)), at(d[0], jo))          // t0/4 - (t1+t2)/6 + (t3+t4)/24
			av.VMOVUPS(add(w, div(sub(w, x[2], x[1]), six), div(sub(w, x[3], x[4]), twelve)), at(d[1], jo)) // (t2-t1)/6 + (t3-t4)/12
			av.VMOVUPS(add(w, div(sub(w, sub(w, p34, x[1]), x[2]), six), x[5]), at(d[2], jo))               // (t3+t4-t1-t2)/6 + t5
			av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
		})
		av.VZEROUPPER()
		av.RET()
	}
}
