package main

import (
	"fmt"

	av "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The AVX-512 loops of batch normalisation in training
// (kernels/batchnorm.go): every one walks rows of c channels (c a
// multiple of 16), row after row, and does the Go loop's arithmetic in the
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

// scaleShift writes scaleShift[Res]AVX512: out = max(x*scale + shift
// (+ res), lo) per channel, the product rounded before the add.
func scaleShift(withRes bool) {
	name := "scaleShiftAVX512"
	sig := "func(out, x, scale, shift *float32, lo float32, c, rows int)"
	if withRes {
		name = "scaleShiftResAVX512"
		sig = "func(out, x, res, scale, shift *float32, lo float32, c, rows int)"
	}
	av.TEXT(name, av.NOSPLIT, sig)
	av.Doc(fmt.Sprintf("%s is scaleShift on rows of c channels (a multiple of 16).", name))
	av.Pragma("noescape")
	out, x := loadGP("out"), loadGP("x")
	var res reg.GPVirtual
	if withRes {
		res = loadGP("res")
	}
	scale, shift := loadGP("scale"), loadGP("shift")
	c, rows := loadGP("c"), loadGP("rows")
	av.SHRQ(operand.U8(4), c)
	lo, err := av.Param("lo").Resolve()
	if err != nil {
		panic(err)
	}
	vlo := av.ZMM()
	av.VBROADCASTSS(lo.Addr, vlo)
	rowLoop(rows, c, []reg.GPVirtual{scale, shift}, []int{64, 64}, func(ch []reg.GPVirtual) {
		v := av.ZMM()
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
		av.ADDQ(operand.U32(64), x)
		av.ADDQ(operand.U32(64), out)
		if withRes {
			av.ADDQ(operand.U32(64), res)
		}
	})
}

// affine2 writes affine2AVX512: out = d*k1 + z*k2 + k3 per channel, each
// product and sum rounded in that order.
func affine2() {
	av.TEXT("affine2AVX512", av.NOSPLIT, "func(out, d, z, k1, k2, k3 *float32, c, rows int)")
	av.Doc("affine2AVX512 is affine2 on rows of c channels (a multiple of 16).")
	av.Pragma("noescape")
	out, d, z := loadGP("out"), loadGP("d"), loadGP("z")
	k1, k2, k3 := loadGP("k1"), loadGP("k2"), loadGP("k3")
	c, rows := loadGP("c"), loadGP("rows")
	av.SHRQ(operand.U8(4), c)
	rowLoop(rows, c, []reg.GPVirtual{k1, k2, k3}, []int{64, 64, 64}, func(ch []reg.GPVirtual) {
		a, b := av.ZMM(), av.ZMM()
		av.VMOVUPS(mem(d), a)
		av.VMULPS(mem(ch[0]), a, a)
		av.VMOVUPS(mem(z), b)
		av.VMULPS(mem(ch[1]), b, b)
		av.VADDPS(b, a, a)
		av.VADDPS(mem(ch[2]), a, a)
		av.VMOVUPS(a, mem(out))
	}, func() {
		av.ADDQ(operand.U32(64), out)
		av.ADDQ(operand.U32(64), d)
		av.ADDQ(operand.U32(64), z)
	})
}

// reluSums writes reluSums[Res|Copy]AVX512: per element g = d where
// !(y <= 0) else +0, stored back into d (and added into res, or stored
// into res with copyRes), and per channel sd += float64(g), sdz +=
// float64(g)*float64(z), 16 channels at a time.
func reluSums(withRes, copyRes bool) {
	name := "reluSumsAVX512"
	sig := "func(d, y, z *float32, sd, sdz *float64, c, rows int)"
	if withRes {
		name = "reluSumsResAVX512"
		if copyRes {
			name = "reluSumsCopyAVX512"
		}
		sig = "func(d, y, z, res *float32, sd, sdz *float64, c, rows int)"
	}
	av.TEXT(name, av.NOSPLIT, sig)
	av.Doc(fmt.Sprintf("%s is reluSums on rows of c channels (a multiple of 16).", name))
	av.Pragma("noescape")
	d, y, z := loadGP("d"), loadGP("y"), loadGP("z")
	var res reg.GPVirtual
	if withRes {
		res = loadGP("res")
	}
	sd, sdz := loadGP("sd"), loadGP("sdz")
	c, rows := loadGP("c"), loadGP("rows")
	av.SHRQ(operand.U8(4), c)
	zero := av.ZMM()
	av.VXORPS(zero, zero, zero)
	rowLoop(rows, c, []reg.GPVirtual{sd, sdz}, []int{128, 128}, func(ch []reg.GPVirtual) {
		k := av.K()
		g := av.ZMM()
		// keep = !(y <= 0) = !(0 >= y): predicate 25, NGE_UQ, with 0
		// as the first source (NaN keeps, -0 does not).
		av.VCMPPS(operand.U8(25), mem(y), zero, k)
		av.VMOVUPS_Z(mem(d), k, g)
		av.VMOVUPS(g, mem(d))
		if withRes && copyRes {
			av.VMOVUPS(g, mem(res))
		} else if withRes {
			r := av.ZMM()
			av.VADDPS(mem(res), g, r)
			av.VMOVUPS(r, mem(res))
		}
		for h := range 2 {
			gh, zh, t := av.ZMM(), av.ZMM(), av.ZMM()
			if h == 0 {
				av.VCVTPS2PD(g.AsY(), gh)
			} else {
				hi := av.YMM()
				av.VEXTRACTF32X8(operand.U8(1), g, hi)
				av.VCVTPS2PD(hi, gh)
			}
			av.VCVTPS2PD(memAt(z, 32*h), zh)
			s := av.ZMM()
			av.VADDPD(memAt(ch[0], 64*h), gh, s)
			av.VMOVUPD(s, memAt(ch[0], 64*h))
			av.VMULPD(zh, gh, t)
			av.VADDPD(memAt(ch[1], 64*h), t, t)
			av.VMOVUPD(t, memAt(ch[1], 64*h))
		}
	}, func() {
		av.ADDQ(operand.U32(64), d)
		av.ADDQ(operand.U32(64), y)
		av.ADDQ(operand.U32(64), z)
		if withRes {
			av.ADDQ(operand.U32(64), res)
		}
	})
}

// moments writes momentsAVX512: per element e = float64(z) - shift, per
// channel s1 += e, s2 += e*e, 16 channels at a time.
func moments() {
	av.TEXT("momentsAVX512", av.NOSPLIT, "func(z *float32, shift, s1, s2 *float64, c, rows int)")
	av.Doc("momentsAVX512 is moments on rows of c channels (a multiple of 16).")
	av.Pragma("noescape")
	z := loadGP("z")
	shift, s1, s2 := loadGP("shift"), loadGP("s1"), loadGP("s2")
	c, rows := loadGP("c"), loadGP("rows")
	av.SHRQ(operand.U8(4), c)
	rowLoop(rows, c, []reg.GPVirtual{shift, s1, s2}, []int{128, 128, 128}, func(ch []reg.GPVirtual) {
		for h := range 2 {
			e, t, s := av.ZMM(), av.ZMM(), av.ZMM()
			av.VCVTPS2PD(memAt(z, 32*h), e)
			av.VSUBPD(memAt(ch[0], 64*h), e, e)
			av.VADDPD(memAt(ch[1], 64*h), e, s)
			av.VMOVUPD(s, memAt(ch[1], 64*h))
			av.VMULPD(e, e, t)
			av.VADDPD(memAt(ch[2], 64*h), t, t)
			av.VMOVUPD(t, memAt(ch[2], 64*h))
		}
	}, func() {
		av.ADDQ(operand.U32(64), z)
	})
}

// batchNorm writes every batch-norm loop.
func batchNorm() {
	scaleShift(false)
	scaleShift(true)
	affine2()
	reluSums(false, false)
	reluSums(true, false)
	reluSums(true, true)
	moments()
}
