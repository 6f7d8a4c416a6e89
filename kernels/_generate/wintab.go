package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	av "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The input transforms of a run of tiles (kernels/winograd.go,
// transformIn): winoGatherIn<w> (and a bfloat16 twin, now replaced)
// transformed one tile per call from 16 pixel pointers that Go computed
// from the tile table (winoArgs.taps); with 32 channels a call does only
// two vectors, and building the pointers cost as much as the transform. The loops
// here take a run of nt consecutive tile positions of one image and
// their rows of the tile table, compute each tile's 16 pointers
// themselves (a conditional move picks the zeros for a tap outside the
// image) and transform the tiles one after the other, each with the same
// additions in the same order as the one-tile loops, so the values are
// the same bits.

// tabStride is the bytes of one tile position's row of the tile table
// (winoArgs.table: 20 int32 pixel indices).
const tabStride = 80

// tilePointers emits the 16 pointers of the tile whose table row is at
// tab into the local array ptrs: img + tab[q]*pix, or zero where tab[q]
// is negative (a tap outside the image).
func tilePointers(ptrs operand.Mem, tab, img, zero, pix reg.Register) {
	for q := range 16 {
		o, p := av.GP64(), av.GP64()
		av.MOVLQSX(operand.Mem{Base: tab, Disp: 4 * q}, o)
		av.MOVQ(o, p)
		av.IMULQ(pix, p)
		av.ADDQ(img, p)
		av.TESTQ(o, o)
		av.CMOVQLT(zero, p)
		av.MOVQ(p, ptrs.Offset(8*q))
	}
}

// gatherTiles emits the frame of a run-of-tiles gather: for each of nt
// tiles, the pointers (tilePointers), then body(ptrs, vp, vs) on the
// tile's columns, vp pointing at its first transformed value (row
// stride vs bytes), which advances by vstep bytes per tile. elem is the
// size in bytes of v's values (its row stride param is in values).
func gatherTiles(name, sig, doc string, elem uint8, vstep func(cin reg.Register), body func(ptrs operand.Mem, vp, vs reg.Register, cin reg.Register)) {
	av.TEXT(name, attr.NOSPLIT, sig)
	av.Pragma("noescape")
	av.Doc(doc)
	ptrs := av.AllocLocal(16 * 8)
	tileLoop("v", func(tab reg.GPVirtual) {
		img := av.Load(av.Param("img"), av.GP64())
		zero := av.Load(av.Param("zero"), av.GP64())
		pix := av.Load(av.Param("cin"), av.GP64())
		av.SHLQ(operand.U8(2), pix) // bytes per pixel
		tilePointers(ptrs, tab, img, zero, pix)
	}, func(cur operand.Mem) {
		vp := av.GP64()
		av.MOVQ(cur, vp)
		vs := av.Load(av.Param("vs"), av.GP64())
		av.SHLQ(operand.U8(elem/2), vs) // elem 2 or 4: shift 1 or 2
		cin := av.Load(av.Param("cin"), av.GP64())
		body(ptrs, vp, vs, cin)
		c := av.Load(av.Param("cin"), av.GP64())
		vstep(c)
		av.ADDQ(c, cur)
	})
}

// tileLoop emits the loop of a run-of-tiles kernel over its nt tiles and
// its return: perTile gets the register holding the tile's row of tab
// (which advances by tabStride bytes per tile) to build the tile's
// pointers, then body works on the tile's columns with cur, the local
// holding param data for this tile, which body advances to the next
// tile's. The caller's own locals are allocated before it.
func tileLoop(data string, perTile func(tab reg.GPVirtual), body func(cur operand.Mem)) {
	cur := av.AllocLocal(8)
	tabp := av.AllocLocal(8)
	left := av.AllocLocal(8)
	d := av.Load(av.Param(data), av.GP64())
	av.MOVQ(d, cur)
	t := av.Load(av.Param("tab"), av.GP64())
	av.MOVQ(t, tabp)
	nt := av.Load(av.Param("nt"), av.GP64())
	av.MOVQ(nt, left)
	av.TESTQ(nt, nt)
	av.JZ(operand.LabelRef("done"))
	av.Label("tile")
	{
		tab := av.GP64()
		av.MOVQ(tabp, tab)
		perTile(tab)
		av.ADDQ(operand.U32(tabStride), tab)
		av.MOVQ(tab, tabp)
	}
	body(cur)
	av.DECQ(left)
	av.JNZ(operand.LabelRef("tile"))
	av.Label("done")
	av.VZEROUPPER()
	av.RET()
}

// winoGatherTiles writes winoGatherTiles<w>: winoGatherIn<w> on nt tiles.
func winoGatherTiles(w simd) {
	name := "winoGatherTiles" + w.suffix
	gatherTiles(name, "func(v *float32, vs int, img *float32, tab *int32, zero *float32, cin int, nt int)",
		fmt.Sprintf("%s is winoGatherIn%s on nt tiles: tile i's patch row q is pixel tab[20i+q] of img (zeros where negative), its transform is written at v[i*cin:] (row stride vs); cin is a multiple of %d.", name, w.suffix, w.lanes),
		4, func(cin reg.Register) { av.SHLQ(operand.U8(2), cin) },
		func(ptrs operand.Mem, vp, vs, cin reg.Register) {
			av.SHRQ(operand.U8(w.shift()), cin)
			vs3 := av.GP64()
			av.LEAQ(operand.Mem{Base: vs, Index: vs, Scale: 2}, vs3)
			jo := av.GP64()
			av.XORQ(jo, jo)
			vq := [4]reg.GPVirtual{av.GP64(), av.GP64(), av.GP64(), av.GP64()}
			av.Label("col")
			av.MOVQ(vp, vq[0])
			for g := 1; g < 4; g++ {
				av.LEAQ(operand.Mem{Base: vq[g-1], Index: vs, Scale: 4}, vq[g])
			}
			dAt := func(i, q int) operand.Mem {
				p := av.GP64()
				av.MOVQ(ptrs.Offset(8*(4*i+q)), p)
				return operand.Mem{Base: p, Index: jo, Scale: 1}
			}
			vAt := func(k, l int) operand.Mem { return strided(vq[k], vs, vs3, l, 0) }
			winoInBody(w.vec, dAt, vAt)
			av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
			av.ADDQ(operand.U32(uint64(4*w.lanes)), vp)
			av.DECQ(cin)
			av.JNZ(operand.LabelRef("col"))
		})
}

// winoGatherTilesBF16 writes winoGatherTilesBF16AVX512:
// winoGatherTilesAVX512 (same additions, same order, 16 columns at a
// time) storing its results rounded to bfloat16 by VCVTNEPS2BF16 (vs in
// bfloat16 values). Physical vector registers only: the raw conversion
// must not meet the register allocator.
func winoGatherTilesBF16() {
	name := "winoGatherTilesBF16AVX512"
	gatherTiles(name, "func(v *uint16, vs int, img *float32, tab *int32, zero *float32, cin int, nt int)",
		name+" is winoGatherTilesAVX512 storing bfloat16: tile i's patch row q is pixel tab[20i+q] of img (zeros where negative), its transform is written rounded at v[i*cin:] (row stride vs); cin is a multiple of 16.",
		2, func(cin reg.Register) { av.SHLQ(operand.U8(1), cin) },
		func(ptrs operand.Mem, vp, vs, cin reg.Register) {
			av.SHRQ(operand.U8(4), cin)
			vs3 := av.GP64()
			av.LEAQ(operand.Mem{Base: vs, Index: vs, Scale: 2}, vs3)
			jo := av.GP64()
			av.XORQ(jo, jo)
			vq := [4]reg.GPVirtual{av.GP64(), av.GP64(), av.GP64(), av.GP64()}
			p := av.GP64()
			av.Label("col")
			av.MOVQ(vp, vq[0])
			for g := 1; g < 4; g++ {
				av.LEAQ(operand.Mem{Base: vq[g-1], Index: vs, Scale: 4}, vq[g])
			}
			// Z0-Z15 the patch d[i][q] = zmm(4i+q); Z16-Z19 s_q; Z20 an
			// output; Y21 its bfloat16 form (stored with EVEX VMOVDQU32).
			for r := range 16 {
				av.MOVQ(ptrs.Offset(8*r), p)
				av.VMOVUPS(operand.Mem{Base: p, Index: jo, Scale: 1}, zmm(r))
			}
			d := func(i, q int) reg.VecPhysical { return zmm(4*i + q) }
			store := func(k, l int) {
				vcvtneps2bf16(21, 20)
				av.VMOVDQU32(reg.Y21, strided(vq[k], vs, vs3, l, 0))
			}
			for k := range 4 {
				for q := range 4 {
					sq := zmm(16 + q)
					switch k {
					case 0:
						av.VSUBPS(d(2, q), d(0, q), sq) // d0 - d2
					case 1:
						av.VADDPS(d(2, q), d(1, q), sq) // d1 + d2
					case 2:
						av.VSUBPS(d(1, q), d(2, q), sq) // d2 - d1
					default:
						av.VSUBPS(d(3, q), d(1, q), sq) // d1 - d3
					}
				}
				out := zmm(20)
				av.VSUBPS(zmm(18), zmm(16), out) // s0 - s2
				store(k, 0)
				av.VADDPS(zmm(18), zmm(17), out) // s1 + s2
				store(k, 1)
				av.VSUBPS(zmm(17), zmm(18), out) // s2 - s1
				store(k, 2)
				av.VSUBPS(zmm(19), zmm(17), out) // s1 - s3
				store(k, 3)
			}
			av.ADDQ(operand.U32(64), jo)
			av.ADDQ(operand.U32(32), vp)
			av.DECQ(cin)
			av.JNZ(operand.LabelRef("col"))
		})
}

// winoTab writes the run-of-tiles gathers and stores.
func winoTab() {
	for _, w := range []simd{avx2, avx512} {
		winoGatherTiles(w)
	}
	winoGatherTilesBF16()
	for _, w := range []simd{avx2, avx512} {
		winoStoreTiles(w)
		winoStatsTiles(w)
	}
}

// The output transforms of a run of tiles (kernels/winograd.go, chunk):
// winoOutStore<w> and winoOutStats<w> store one tile per call through 4
// output pointers (and 4 residual pointers or keep masks) that Go
// computed from the tile table (winoArgs.outPtrs). The loops here take a
// run of nt consecutive tile positions of one image, their rows of the
// tile table, and the image's output (and residual) base, compute the
// pointers themselves and store the tiles one after the other with the
// same operations in the same order as the one-tile loops.

// outPointers emits the 4 output pointers of the tile whose table row is
// at tab into the local array ops: dst + tab[16+q]*pix, or sink where
// tab[16+q] is negative (an output outside the image). With rps, it also
// emits the residual pointers there: res + tab[16+q]*pix, or zero where
// the output lies outside or res is nil; with keep, the masks there: all
// ones for an output inside the image, zero outside.
func outPointers(ops operand.Mem, rps *operand.Mem, keep *operand.Mem, tab, dst, sink, pix reg.Register, res, zero operand.Mem) {
	for q := range 4 {
		o, p := av.GP64(), av.GP64()
		av.MOVLQSX(operand.Mem{Base: tab, Disp: 4 * (16 + q)}, o)
		av.IMULQ(pix, o)
		av.MOVQ(dst, p)
		av.ADDQ(o, p)
		av.TESTQ(o, o)
		av.CMOVQLT(sink, p)
		av.MOVQ(p, ops.Offset(8*q))
		if rps != nil {
			r, z := av.GP64(), av.GP64()
			av.MOVQ(zero, z)
			av.MOVQ(res, r)
			av.ADDQ(o, r)
			av.TESTQ(o, o)
			av.CMOVQLT(z, r) // outside the image: zeros
			av.MOVQ(res, p)
			av.TESTQ(p, p)
			av.CMOVQEQ(z, r) // no residual: zeros (as Go's zero slice)
			av.MOVQ(r, rps.Offset(8*q))
		}
		if keep != nil {
			k := av.GP32()
			av.XORL(k, k)
			av.NOTL(k)
			z := av.GP32()
			av.XORL(z, z)
			av.TESTQ(o, o)
			av.CMOVLLT(z, k)
			av.MOVL(k, keep.Offset(4*q))
		}
	}
}

// storeTiles emits the frame of a run-of-tiles store: for each of nt
// tiles, the pointers (outPointers into ops, and rps or keep), then
// body(mp, ms) on the tile's columns, mp pointing at its first product
// (row stride ms bytes); mp advances by cout*4 bytes per tile.
func storeTiles(name, sig, doc string, withRes bool, body func(ops, rps, keep operand.Mem, mp, ms reg.Register)) {
	av.TEXT(name, attr.NOSPLIT, sig)
	av.Pragma("noescape")
	av.Doc(doc)
	ops := av.AllocLocal(4 * 8)
	rps := av.AllocLocal(4 * 8)
	keep := av.AllocLocal(4 * 4)
	tileLoop("m", func(tab reg.GPVirtual) {
		dst := av.Load(av.Param("dst"), av.GP64())
		sink := av.Load(av.Param("sink"), av.GP64())
		pix := loadStride("cout")
		if withRes {
			res, err := av.Param("res").Resolve()
			if err != nil {
				panic(err)
			}
			zero, err := av.Param("zero").Resolve()
			if err != nil {
				panic(err)
			}
			outPointers(ops, &rps, nil, tab, dst, sink, pix, res.Addr, zero.Addr)
		} else {
			outPointers(ops, nil, &keep, tab, dst, sink, pix, operand.Mem{}, operand.Mem{})
		}
	}, func(cur operand.Mem) {
		mp := av.GP64()
		av.MOVQ(cur, mp)
		ms := loadStride("ms")
		body(ops, rps, keep, mp, ms)
		c := loadStride("cout")
		av.ADDQ(c, cur)
	})
}

// winoStoreTiles writes winoStoreTiles<w>: winoOutStore<w> on nt tiles.
func winoStoreTiles(w simd) {
	name := "winoStoreTiles" + w.suffix
	storeTiles(name, "func(m *float32, ms int, dst, res *float32, tab *int32, sink, zero, bias *float32, lo float32, cout int, nt int)",
		fmt.Sprintf("%s is winoOutStore%s on nt tiles: tile i's products at m[i*cout:] (row stride ms), its output q to pixel tab[20i+16+q] of dst (to sink where negative) plus that pixel of res (nil: zeros); cout is a multiple of %d.", name, w.suffix, w.lanes),
		true, func(ops, rps, _ operand.Mem, mp, ms reg.Register) {
			bias := av.Load(av.Param("bias"), av.GP64())
			n := loadVectors(w, "cout")
			vlo := broadcastParam(w, "lo")
			ms3 := av.GP64()
			av.LEAQ(operand.Mem{Base: ms, Index: ms, Scale: 2}, ms3)
			jo := av.GP64()
			av.XORQ(jo, jo)
			mq := [4]reg.GPVirtual{av.GP64(), av.GP64(), av.GP64(), av.GP64()}
			mAt := func(i, q int) operand.Mem { return strided(mq[i], ms, ms3, q, 0) }
			av.Label("col")
			av.MOVQ(mp, mq[0])
			for g := 1; g < 4; g++ {
				av.LEAQ(operand.Mem{Base: mq[g-1], Index: ms, Scale: 4}, mq[g])
			}
			winoOutTransform(w, mAt, func(q int, o reg.VecVirtual) {
				rp, op := av.GP64(), av.GP64()
				av.MOVQ(rps.Offset(8*q), rp)
				av.MOVQ(ops.Offset(8*q), op)
				av.VADDPS(operand.Mem{Base: bias, Index: jo, Scale: 1}, o, o)
				av.VADDPS(operand.Mem{Base: rp, Index: jo, Scale: 1}, o, o)
				av.VMAXPS(o, vlo, o)
				av.VMOVUPS(o, operand.Mem{Base: op, Index: jo, Scale: 1})
			})
			av.ADDQ(operand.U32(uint64(4*w.lanes)), mp)
			av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
			av.DECQ(n)
			av.JNZ(operand.LabelRef("col"))
		})
}

// winoStatsTiles writes winoStatsTiles<w>: winoOutStats<w> on nt tiles.
func winoStatsTiles(w simd) {
	name := "winoStatsTiles" + w.suffix
	storeTiles(name, "func(m *float32, ms int, dst *float32, tab *int32, sink, shift, s1, s2 *float32, cout int, nt int)",
		fmt.Sprintf("%s is winoOutStats%s on nt tiles: tile i's products at m[i*cout:] (row stride ms), its output q to pixel tab[20i+16+q] of dst (to sink, and out of the sums, where negative); cout is a multiple of %d.", name, w.suffix, w.lanes),
		false, func(ops, _, keep operand.Mem, mp, ms reg.Register) {
			shift := av.Load(av.Param("shift"), av.GP64())
			s1 := av.Load(av.Param("s1"), av.GP64())
			s2 := av.Load(av.Param("s2"), av.GP64())
			n := loadVectors(w, "cout")
			var kv [4]reg.VecVirtual
			for q := range kv {
				kv[q] = w.vec()
				av.VBROADCASTSS(keep.Offset(4*q), kv[q])
			}
			ms3 := av.GP64()
			av.LEAQ(operand.Mem{Base: ms, Index: ms, Scale: 2}, ms3)
			jo := av.GP64()
			av.XORQ(jo, jo)
			mq := [4]reg.Register{mp, av.GP64(), av.GP64(), av.GP64()}
			mAt := func(i, q int) operand.Mem { return strided(mq[i], ms, ms3, q, 0) }
			at := func(base reg.Register) operand.Mem { return operand.Mem{Base: base, Index: jo, Scale: 1} }
			av.Label("col")
			for g := 1; g < 4; g++ {
				av.LEAQ(operand.Mem{Base: mq[g-1], Index: ms, Scale: 4}, mq[g])
			}
			statsColumn(w, mAt, at, func(q int) operand.Mem { return ops.Offset(8 * q) }, kv, shift, s1, s2)
			av.ADDQ(operand.U32(uint64(4*w.lanes)), mp)
			av.ADDQ(operand.U32(uint64(4*w.lanes)), jo)
			av.DECQ(n)
			av.JNZ(operand.LabelRef("col"))
		})
}
