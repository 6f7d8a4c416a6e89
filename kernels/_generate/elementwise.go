package main

import (
	"fmt"

	av "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
)

// The AVX2 and AVX-512 loops of kernels/elementwise.go's axpy and dot.
// Each does the Go loop's arithmetic in the same order with the same
// roundings (products rounded before the add, no fused multiply-adds),
// so its results are the same bit for bit.

// axpyLoop writes axpy<w>: y += alpha*x on n values, four vectors a step
// (n a multiple of 4 vectors).
func axpyLoop(w simd) {
	name := "axpy" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(alpha float32, x, y *float32, n int)")
	av.Doc(fmt.Sprintf("%s is axpy on n values (a multiple of %d): y[i] += alpha*x[i], the product rounded before the add.", name, 4*w.lanes))
	av.Pragma("noescape")
	va := broadcastParam(w, "alpha")
	x, y, n := loadGP("x"), loadGP("y"), loadGP("n")
	av.SHRQ(operand.U8(w.shift()+2), n)
	vb := 4 * w.lanes
	countedLoop(n, func() {
		for u := range 4 {
			v := w.vec()
			av.VMULPS(memAt(x, u*vb), va, v)
			av.VADDPS(memAt(y, u*vb), v, v)
			av.VMOVUPS(v, memAt(y, u*vb))
		}
		av.ADDQ(operand.U32(uint64(4*vb)), x)
		av.ADDQ(operand.U32(uint64(4*vb)), y)
	})
}

// dotLoop writes dot<w>: dot's 64 lane sums (lane l sums x[i]*y[i] for
// i = l mod 64, in increasing i) added into acc, over n values (a
// multiple of 64), 64/w.lanes vector registers of sums.
func dotLoop(w simd) {
	name := "dot" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(x, y, acc *float32, n int)")
	av.Doc(fmt.Sprintf("%s adds into acc[l] (l < %d) the products x[i]*y[i] for i = l mod %d, i < n (a multiple of %d), in increasing i: dot's lane sums.", name, dotLanes, dotLanes, dotLanes))
	av.Pragma("noescape")
	x, y, acc, n := loadGP("x"), loadGP("y"), loadGP("acc"), loadGP("n")
	vb := 4 * w.lanes
	nv := dotLanes / w.lanes // vectors per group
	sums := make([]operand.Op, nv)
	for u := range nv {
		s := w.vec()
		av.VMOVUPS(memAt(acc, u*vb), s)
		sums[u] = s
	}
	av.SHRQ(operand.U8(6), n) // groups of 64
	av.TESTQ(n, n)
	av.JZ(operand.LabelRef("done"))
	av.Label("loop")
	for u := range nv {
		p := w.vec()
		av.VMOVUPS(memAt(x, u*vb), p)
		av.VMULPS(memAt(y, u*vb), p, p)
		av.VADDPS(p, sums[u], sums[u])
	}
	av.ADDQ(operand.U32(uint64(4*dotLanes)), x)
	av.ADDQ(operand.U32(uint64(4*dotLanes)), y)
	av.DECQ(n)
	av.JNZ(operand.LabelRef("loop"))
	av.Label("done")
	for u := range nv {
		av.VMOVUPS(sums[u], memAt(acc, u*vb))
	}
	av.VZEROUPPER()
	av.RET()
}

// dotLanes is dot's number of lane sums (kernels/elementwise.go).
const dotLanes = 64

func elementwise() {
	for _, w := range []simd{avx2, avx512} {
		axpyLoop(w)
		dotLoop(w)
	}
}
