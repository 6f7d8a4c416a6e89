package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	av "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The input transforms of a run of tiles (kernels/winograd.go,
// transformIn): winoGatherIn<w> and winoGatherInBF16AVX512 transform one
// tile per call from 16 pixel pointers that Go computed from the tile
// table (winoArgs.taps); with 32 channels a call does only two vectors,
// and building the pointers cost as much as the transform. The loops
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
	cur := av.AllocLocal(8) // the current tile's v
	tabp := av.AllocLocal(8)
	left := av.AllocLocal(8)
	v := av.Load(av.Param("v"), av.GP64())
	av.MOVQ(v, cur)
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
		img := av.Load(av.Param("img"), av.GP64())
		zero := av.Load(av.Param("zero"), av.GP64())
		pix := av.Load(av.Param("cin"), av.GP64())
		av.SHLQ(operand.U8(2), pix) // bytes per pixel
		tilePointers(ptrs, tab, img, zero, pix)
		av.ADDQ(operand.U32(tabStride), tab)
		av.MOVQ(tab, tabp)
	}
	{
		vp := av.GP64()
		av.MOVQ(cur, vp)
		vs := av.Load(av.Param("vs"), av.GP64())
		av.SHLQ(operand.U8(elem/2), vs) // elem 2 or 4: shift 1 or 2
		cin := av.Load(av.Param("cin"), av.GP64())
		body(ptrs, vp, vs, cin)
		c := av.Load(av.Param("cin"), av.GP64())
		vstep(c)
		av.ADDQ(c, cur)
	}
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
// winoGatherInBF16AVX512 on nt tiles.
func winoGatherTilesBF16() {
	name := "winoGatherTilesBF16AVX512"
	gatherTiles(name, "func(v *uint16, vs int, img *float32, tab *int32, zero *float32, cin int, nt int)",
		name+" is winoGatherInBF16AVX512 on nt tiles: tile i's patch row q is pixel tab[20i+q] of img (zeros where negative), its transform is written rounded at v[i*cin:] (row stride vs); cin is a multiple of 16.",
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
			// As winoGatherInBF16: Z0-Z15 the patch, Z16-Z19 s_q, Z20 an
			// output, Y21 its bfloat16 form.
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

// winoTab writes the run-of-tiles gathers.
func winoTab() {
	for _, w := range []simd{avx2, avx512} {
		winoGatherTiles(w)
	}
	winoGatherTilesBF16()
}
