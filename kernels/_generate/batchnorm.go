package main

import (
	"fmt"

	av "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The AVX2 and AVX-512 loops of batch normalisation in training
// (kernels/batchnorm.go): every one walks rows of c channels (c a
// multiple of the float32 lanes, 8 or 16), row after row, and does the Go loop's arithmetic in the
// same order with the same roundings (no fused multiply-adds), so its
// results are the same bit for bit.

// rowLoop emits for r := range rows { for g := range c/width { body } }
// with per-channel pointers reset at the start of each row: chan[i]
// runs from base[i], advanced by chanStep[i] bytes per group; data pointers
// are advanced by body's caller through next (called once per group).
func rowLoop(rows, groups reg.Register, base []reg.GPVirtual, chanStep []int, body func(ch []reg.GPVirtual), next func()) {
	g := av.GP64()
	ch := make([]reg.GPVirtual, len(base))
	for i := range ch {
		ch[i] = av.GP64()
	}
	av.TESTQ(rows, rows)
	av.JZ(operand.LabelRef("done"))
	av.TESTQ(groups, groups)
	av.JZ(operand.LabelRef("done"))
	av.Label("rows")
	av.MOVQ(groups, g)
	for i := range ch {
		av.MOVQ(base[i], ch[i])
	}
	av.Label("groups")
	body(ch)
	next()
	for i := range ch {
		av.ADDQ(operand.U32(uint64(chanStep[i])), ch[i])
	}
	av.DECQ(g)
	av.JNZ(operand.LabelRef("groups"))
	av.DECQ(rows)
	av.JNZ(operand.LabelRef("rows"))
	av.Label("done")
	av.VZEROUPPER()
	av.RET()
}

func loadGP(name string) reg.GPVirtual {
	r := av.GP64()
	av.Load(av.Param(name), r)
	return r
}

func mem(r reg.Register) operand.Mem { return operand.Mem{Base: r} }

func memAt(r reg.Register, disp int) operand.Mem { return operand.Mem{Base: r, Disp: disp} }

// scaleShift writes scaleShift[Res]<w>: out = max(x*scale + shift
// (+ res), lo) per channel, the product rounded before the add.
func scaleShift(w simd, withRes bool) {
	name := "scaleShift" + w.suffix
	sig := "func(out, x, scale, shift *float32, lo float32, c, rows int)"
	if withRes {
		name = "scaleShiftRes" + w.suffix
		sig = "func(out, x, res, scale, shift *float32, lo float32, c, rows int)"
	}
	av.TEXT(name, av.NOSPLIT, sig)
	av.Doc(fmt.Sprintf("%s is scaleShift on rows of c channels (a multiple of %d).", name, w.lanes))
	av.Pragma("noescape")
	out, x := loadGP("out"), loadGP("x")
	var res reg.GPVirtual
	if withRes {
		res = loadGP("res")
	}
	scale, shift := loadGP("scale"), loadGP("shift")
	c, rows := loadGP("c"), loadGP("rows")
	av.SHRQ(operand.U8(w.shift()), c)
	vlo := broadcastParam(w, "lo")
	vb := 4 * w.lanes // bytes per vector
	rowLoop(rows, c, []reg.GPVirtual{scale, shift}, []int{vb, vb}, func(ch []reg.GPVirtual) {
		v := w.vec()
		av.VMOVUPS(mem(x), v)
		av.VMULPS(mem(ch[0]), v, v)
		av.VADDPS(mem(ch[1]), v, v)
		if withRes {
			av.VADDPS(mem(res), v, v)
		}
		// VMAXPS returns its first (Go order) operand unless the second
		// is greater: the sum, unless lo > sum (NaN and -0 pass).
		av.VMAXPS(v, vlo, v)
		av.VMOVUPS(v, mem(out))
	}, func() {
		av.ADDQ(operand.U32(uint64(vb)), x)
		av.ADDQ(operand.U32(uint64(vb)), out)
		if withRes {
			av.ADDQ(operand.U32(uint64(vb)), res)
		}
	})
}

// affine2 writes affine2<w>: out = d*k1 + z*k2 + k3 per channel, each
// product and sum rounded in that order.
func affine2(w simd) {
	name := "affine2" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(out, d, z, k1, k2, k3 *float32, c, rows int)")
	av.Doc(fmt.Sprintf("%s is affine2 on rows of c channels (a multiple of %d).", name, w.lanes))
	av.Pragma("noescape")
	out, d, z := loadGP("out"), loadGP("d"), loadGP("z")
	k1, k2, k3 := loadGP("k1"), loadGP("k2"), loadGP("k3")
	c, rows := loadGP("c"), loadGP("rows")
	av.SHRQ(operand.U8(w.shift()), c)
	vb := 4 * w.lanes
	rowLoop(rows, c, []reg.GPVirtual{k1, k2, k3}, []int{vb, vb, vb}, func(ch []reg.GPVirtual) {
		a, b := w.vec(), w.vec()
		av.VMOVUPS(mem(d), a)
		av.VMULPS(mem(ch[0]), a, a)
		av.VMOVUPS(mem(z), b)
		av.VMULPS(mem(ch[1]), b, b)
		av.VADDPS(b, a, a)
		av.VADDPS(mem(ch[2]), a, a)
		av.VMOVUPS(a, mem(out))
	}, func() {
		av.ADDQ(operand.U32(uint64(vb)), out)
		av.ADDQ(operand.U32(uint64(vb)), d)
		av.ADDQ(operand.U32(uint64(vb)), z)
	})
}

// reluSums writes reluSums[Res|Copy]<w>: per element g = d where
// !(y <= 0) else +0, stored back into d (and added into res, or stored
// into res with copyRes), and per channel sd += float64(g), sdz +=
// float64(g)*float64(z). It runs over blocks of channels (4 vectors of
// them with AVX-512, 2 with AVX2, then fewer for the last ones), each
// block down all the rows with its sums in registers: loaded from sd and
// sdz before the rows, stored after. Each channel's sums take the rows in
// order, as the Go loop does, and the FMA of sdz rounds as the Go loop's
// multiply and add do, since the product of two float32 values is exact
// in float64: the results are the same bit for bit. (With the sums in
// memory, one load and store per vector and row, this pass took 2.3-2.6x
// Affine2's time on operands in L2, 1.8x with them in registers; on the
// training step's slices, which do not stay in L2, both wait on memory
// alike: docs/BENCHMARKS.md.)
func reluSums(w simd, withRes, copyRes bool) {
	name := "reluSums" + w.suffix
	sig := "func(d, y, z *float32, sd, sdz *float64, c, rows int)"
	if withRes {
		name = "reluSumsRes" + w.suffix
		if copyRes {
			name = "reluSumsCopy" + w.suffix
		}
		sig = "func(d, y, z, res *float32, sd, sdz *float64, c, rows int)"
	}
	av.TEXT(name, av.NOSPLIT, sig)
	av.Doc(fmt.Sprintf("%s is reluSums on rows of c channels (a multiple of %d).", name, w.lanes))
	av.Pragma("noescape")
	d, y, z := loadGP("d"), loadGP("y"), loadGP("z")
	var res reg.GPVirtual
	if withRes {
		res = loadGP("res")
	}
	sd, sdz := loadGP("sd"), loadGP("sdz")
	c, rows := loadGP("c"), loadGP("rows")
	stride := av.GP64() // bytes per row
	av.MOVQ(c, stride)
	av.SHLQ(operand.U8(2), stride)
	av.SHRQ(operand.U8(w.shift()), c) // vectors per row, left to do
	av.TESTQ(rows, rows)
	av.JZ(operand.LabelRef("done"))
	zero := w.vec()
	av.VXORPS(zero, zero, zero)
	vb := 4 * w.lanes // float32 bytes per vector; float64 sums take twice
	at := func(base, off reg.Register, disp int) operand.Mem {
		return operand.Mem{Base: base, Index: off, Scale: 1, Disp: disp}
	}
	maxBlock := 2
	if w.lanes == 16 {
		maxBlock = 4
	}
	for nb := maxBlock; nb >= 1; nb /= 2 {
		top, end := fmt.Sprintf("block%d", nb), fmt.Sprintf("block%dend", nb)
		av.Label(top)
		av.CMPQ(c, operand.U32(uint64(nb)))
		av.JB(operand.LabelRef(end))
		// sum[k][v][h]: the sums (k = 0: of g, 1: of g*z) of vector v's
		// half h, at byte (2v+h)*vb of sd and sdz.
		var sum [2][4][2]reg.VecVirtual
		for k, base := range []reg.GPVirtual{sd, sdz} {
			for v := range nb {
				for h := range 2 {
					sum[k][v][h] = w.vec()
					av.VMOVUPD(memAt(base, (2*v+h)*vb), sum[k][v][h])
				}
			}
		}
		off, r := av.GP64(), av.GP64() // the row's byte offset, rows left
		av.XORQ(off, off)
		av.MOVQ(rows, r)
		av.Label(fmt.Sprintf("rows%d", nb))
		for v := range nb {
			g := w.vec()
			// keep = !(y <= 0) = !(0 >= y): predicate 25, NGE_UQ, with 0
			// as the first source (NaN keeps, -0 does not).
			if w.lanes == 16 {
				k := av.K()
				av.VCMPPS(operand.U8(25), at(y, off, v*vb), zero, k)
				av.VMOVUPS_Z(at(d, off, v*vb), k, g)
			} else {
				// The mask is all ones or zeros per lane: d AND mask is d or +0.
				av.VCMPPS(operand.U8(25), at(y, off, v*vb), zero, g)
				av.VANDPS(at(d, off, v*vb), g, g)
			}
			av.VMOVUPS(g, at(d, off, v*vb))
			if withRes && copyRes {
				av.VMOVUPS(g, at(res, off, v*vb))
			} else if withRes {
				t := w.vec()
				av.VADDPS(at(res, off, v*vb), g, t)
				av.VMOVUPS(t, at(res, off, v*vb))
			}
			for h := range 2 {
				gh, zh := w.vec(), w.vec()
				switch {
				case h == 0 && w.lanes == 16:
					av.VCVTPS2PD(g.AsY(), gh)
				case h == 0:
					av.VCVTPS2PD(g.AsX(), gh)
				case w.lanes == 16:
					hi := av.YMM()
					av.VEXTRACTF32X8(operand.U8(1), g, hi)
					av.VCVTPS2PD(hi, gh)
				default:
					hi := av.XMM()
					av.VEXTRACTF128(operand.U8(1), g, hi)
					av.VCVTPS2PD(hi, gh)
				}
				av.VCVTPS2PD(at(z, off, v*vb+vb/2*h), zh)
				av.VADDPD(gh, sum[0][v][h], sum[0][v][h])
				av.VFMADD231PD(zh, gh, sum[1][v][h])
			}
		}
		av.ADDQ(stride, off)
		av.DECQ(r)
		av.JNZ(operand.LabelRef(fmt.Sprintf("rows%d", nb)))
		for k, base := range []reg.GPVirtual{sd, sdz} {
			for v := range nb {
				for h := range 2 {
					av.VMOVUPD(sum[k][v][h], memAt(base, (2*v+h)*vb))
				}
			}
		}
		for _, p := range []reg.GPVirtual{d, y, z, res} {
			if p != nil {
				av.ADDQ(operand.U32(uint64(nb*vb)), p)
			}
		}
		av.ADDQ(operand.U32(uint64(2*nb*vb)), sd)
		av.ADDQ(operand.U32(uint64(2*nb*vb)), sdz)
		av.SUBQ(operand.U32(uint64(nb)), c)
		av.JMP(operand.LabelRef(top))
		av.Label(end)
	}
	av.Label("done")
	av.VZEROUPPER()
	av.RET()
}

// moments writes moments<w>: per element e = float64(z) - shift, per
// channel s1 += e, s2 += e*e, a vector of channels at a time.
func moments(w simd) {
	name := "moments" + w.suffix
	av.TEXT(name, av.NOSPLIT, "func(z *float32, shift, s1, s2 *float64, c, rows int)")
	av.Doc(fmt.Sprintf("%s is moments on rows of c channels (a multiple of %d).", name, w.lanes))
	av.Pragma("noescape")
	z := loadGP("z")
	shift, s1, s2 := loadGP("shift"), loadGP("s1"), loadGP("s2")
	c, rows := loadGP("c"), loadGP("rows")
	av.SHRQ(operand.U8(w.shift()), c)
	vb := 4 * w.lanes
	rowLoop(rows, c, []reg.GPVirtual{shift, s1, s2}, []int{2 * vb, 2 * vb, 2 * vb}, func(ch []reg.GPVirtual) {
		for h := range 2 {
			e, t, s := w.vec(), w.vec(), w.vec()
			av.VCVTPS2PD(memAt(z, vb/2*h), e)
			av.VSUBPD(memAt(ch[0], vb*h), e, e)
			av.VADDPD(memAt(ch[1], vb*h), e, s)
			av.VMOVUPD(s, memAt(ch[1], vb*h))
			av.VMULPD(e, e, t)
			av.VADDPD(memAt(ch[2], vb*h), t, t)
			av.VMOVUPD(t, memAt(ch[2], vb*h))
		}
	}, func() {
		av.ADDQ(operand.U32(uint64(vb)), z)
	})
}

// batchNorm writes every batch-norm loop.
func batchNorm() {
	for _, w := range []simd{avx2, avx512} {
		scaleShift(w, false)
		scaleShift(w, true)
		affine2(w)
		reluSums(w, false, false)
		reluSums(w, true, false)
		reluSums(w, true, true)
		moments(w)
	}
}
