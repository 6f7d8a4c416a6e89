package main

import (
	"fmt"

	av "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The fused loops of training's forward pass (kernels/winograd.go,
// winoOutStats): the Winograd output transform and store of one tile
// together with batch normalisation's per-channel statistics of the
// outputs, summed while they are in registers, so that the training
// forward does not read every convolution output again for its moments.

// winoOutStats writes winoOutStats<w>: for each of n columns j (a
// multiple of the lanes) of a tile's 16 products m[e*ms+j], the 4 outputs
// y_q = (A^T m A)[q] stored as they are to out[q][j] (no bias, residual or
// activation), and e_q = (y_q - shift[j]) AND keep[q] (keep[q] all ones
// for an output inside the image, zero for one sent to a sink) summed per
// channel: s1[j] += ((e_0 + e_1) + e_2) + e_3 and s2[j] += ((e_0*e_0 +
// e_1*e_1) + e_2*e_2) + e_3*e_3, every product and sum rounded to float32
// in that order (no fused multiply-adds), as the Go loop does.
func winoOutStats(w simd) {
	name := "winoOutStats" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(m *float32, ms int, out *[4]*float32, keep *[4]uint32, shift, s1, s2 *float32, n int)")
	av.Doc(fmt.Sprintf("%s is winoOutStats on n columns (a multiple of %d): out[q][j] = (A^T m A)[q][j], and the outputs' sums around shift, masked by keep, added into s1 and s2.", name, w.lanes))
	av.Pragma("noescape")
	mp := av.Load(av.Param("m"), av.GP64())
	ms := loadStride("ms")
	outs := av.Load(av.Param("out"), av.GP64())
	keep := av.Load(av.Param("keep"), av.GP64())
	shift := av.Load(av.Param("shift"), av.GP64())
	s1 := av.Load(av.Param("s1"), av.GP64())
	s2 := av.Load(av.Param("s2"), av.GP64())
	n := loadVectors(w, "n")
	var kv [4]reg.VecVirtual
	for q := range kv {
		kv[q] = w.vec()
		av.VBROADCASTSS(operand.Mem{Base: keep, Disp: 4 * q}, kv[q])
	}
	ms3 := av.GP64()
	av.LEAQ(operand.Mem{Base: ms, Index: ms, Scale: 2}, ms3)
	jo := av.GP64() // byte offset of the columns
	av.XORQ(jo, jo)
	mq := [4]reg.Register{mp, av.GP64(), av.GP64(), av.GP64()}
	mAt := func(i, q int) operand.Mem { return strided(mq[i], ms, ms3, q, 0) }
	at := func(base reg.Register) operand.Mem { return operand.Mem{Base: base, Index: jo, Scale: 1} }
	countedLoop(n, func() {
		for g := 1; g < 4; g++ {
			av.LEAQ(operand.Mem{Base: mq[g-1], Index: ms, Scale: 4}, mq[g])
		}
		statsColumn(w, mAt, at, func(q int) operand.Mem { return operand.Mem{Base: outs, Disp: 8 * q} }, kv, shift, s1, s2)
		av.ADDQ(operand.U32(uint64(4*w.lanes)), mp)
		av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
	})
}

// statsColumn emits one column step of winoOutStats: the output
// transform of the products at mAt, output q stored at at(the pointer in
// out(q)), and its sum and square around at(shift), masked by kv[q],
// added into at(s1) and at(s2) in the order winoOutStats documents.
func statsColumn(w simd, mAt func(i, q int) operand.Mem, at func(base reg.Register) operand.Mem, out func(q int) operand.Mem, kv [4]reg.VecVirtual, shift, s1, s2 reg.Register) {
	var sum, sq reg.VecVirtual
	winoOutTransform(w, mAt, func(q int, y reg.VecVirtual) {
		op := av.GP64()
		av.MOVQ(out(q), op)
		av.VMOVUPS(y, at(op))
		e := w.vec()
		av.VSUBPS(at(shift), y, e) // y - shift
		av.VANDPS(kv[q], e, e)
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
}

// winoFuse writes every fused loop of the training forward.
func winoFuse() {
	for _, w := range []simd{avx2, avx512} {
		winoOutStats(w)
	}
}
