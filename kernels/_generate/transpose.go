package main

import (
	"github.com/mmcloughlin/avo/attr"
	av "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// transposePairsBF16 writes transposePairsBF16AVX512, the A operand of the
// AMX weight gradient (kernels/amx.go, transposePairs): for each group of
// 16 channels and each block of 32 source rows (tiles), rows 2p and 2p+1
// are loaded, rounded to bfloat16 and interleaved (VCVTNE2PS2BF16 of Z31
// and Z30 into Zp, then VPERMW by wgradPairIndex: word i is channel i's
// pair p) into Z0-Z15; the 16 x 16 matrix of words is transposed in
// registers (dword and qword unpacks make 4 x 4 blocks within each
// 128-bit lane, then two rounds of lane shuffles move the blocks), and
// row i of the result, channel i's 16 pairs of tiles, is stored at dst +
// i*ldd + block*64. Physical vector registers only: the raw conversion
// must not meet the register allocator.
func transposePairsBF16(idx operand.Mem) {
	name := "transposePairsBF16AVX512"
	av.TEXT(name, attr.NOSPLIT, "func(dst *uint16, src *float32, ld, n, blocks, ldd int)")
	av.Doc(name + " writes, for each of n channels (a multiple of 16) and each of blocks blocks of 32 rows of src (ld bytes apart), the channel's 32 values rounded to bfloat16 as 16 words (rows 2p and 2p+1 in word p) at dst + channel*ldd + block*64 bytes.")
	av.Pragma("noescape")
	dst := av.Load(av.Param("dst"), av.GP64())
	src := av.Load(av.Param("src"), av.GP64())
	ld := av.Load(av.Param("ld"), av.GP64())
	ldd := av.Load(av.Param("ldd"), av.GP64())
	ldd3 := av.GP64()
	av.LEAQ(operand.Mem{Base: ldd, Index: ldd, Scale: 2}, ldd3)
	groups := av.Load(av.Param("n"), av.GP64())
	av.SHRQ(operand.U8(4), groups)
	blocks := av.Load(av.Param("blocks"), av.GP64())
	av.TESTQ(groups, groups)
	av.JZ(operand.LabelRef("done"))
	av.TESTQ(blocks, blocks)
	av.JZ(operand.LabelRef("done"))
	blockBytes := av.GP64() // 32 source rows
	av.MOVQ(ld, blockBytes)
	av.SHLQ(operand.U8(5), blockBytes)
	perm := reg.Z29 // reloaded per block: the transposition uses Z16-Z31
	av.Label("group")
	s, d, left := av.GP64(), av.GP64(), av.GP64()
	av.MOVQ(src, s)
	av.MOVQ(dst, d)
	av.MOVQ(blocks, left)
	av.Label("block")
	av.VMOVDQU16(idx, perm)
	row := av.GP64()
	av.MOVQ(s, row)
	for p := range 16 {
		av.VMOVUPS(operand.Mem{Base: row}, reg.Z30)
		av.VMOVUPS(operand.Mem{Base: row, Index: ld, Scale: 1}, reg.Z31)
		vcvtne2ps2bf16(p, 31, 30)
		av.VPERMW(zmm(p), perm, zmm(p))
		av.LEAQ(operand.Mem{Base: row, Index: ld, Scale: 2}, row)
	}
	// Dwords of row pairs, then qwords: 4 x 4 transposes within each lane.
	for k := range 8 {
		av.VPUNPCKLDQ(zmm(2*k+1), zmm(2*k), zmm(16+2*k))
		av.VPUNPCKHDQ(zmm(2*k+1), zmm(2*k), zmm(16+2*k+1))
	}
	for g := range 4 {
		t := 16 + 4*g
		av.VPUNPCKLQDQ(zmm(t+2), zmm(t), zmm(4*g))
		av.VPUNPCKHQDQ(zmm(t+2), zmm(t), zmm(4*g+1))
		av.VPUNPCKLQDQ(zmm(t+3), zmm(t+1), zmm(4*g+2))
		av.VPUNPCKHQDQ(zmm(t+3), zmm(t+1), zmm(4*g+3))
	}
	// Z(4g+c) lane l holds rows 4g..4g+3 of column 4l+c; output row 4l+c
	// is lane l of Z(c), Z(4+c), Z(8+c), Z(12+c).
	var base [4]reg.GPVirtual
	base[0] = d
	for l := 1; l < 4; l++ {
		base[l] = av.GP64()
		av.LEAQ(operand.Mem{Base: base[l-1], Index: ldd, Scale: 4}, base[l])
	}
	at := func(l, c int) operand.Mem {
		switch c {
		case 0:
			return operand.Mem{Base: base[l]}
		case 1:
			return operand.Mem{Base: base[l], Index: ldd, Scale: 1}
		case 2:
			return operand.Mem{Base: base[l], Index: ldd, Scale: 2}
		}
		return operand.Mem{Base: base[l], Index: ldd3, Scale: 1}
	}
	for c := range 4 {
		av.VSHUFI32X4(operand.U8(0x44), zmm(4+c), zmm(c), reg.Z16)
		av.VSHUFI32X4(operand.U8(0xEE), zmm(4+c), zmm(c), reg.Z17)
		av.VSHUFI32X4(operand.U8(0x44), zmm(12+c), zmm(8+c), reg.Z18)
		av.VSHUFI32X4(operand.U8(0xEE), zmm(12+c), zmm(8+c), reg.Z19)
		av.VSHUFI32X4(operand.U8(0x88), reg.Z18, reg.Z16, reg.Z20)
		av.VSHUFI32X4(operand.U8(0xDD), reg.Z18, reg.Z16, reg.Z21)
		av.VSHUFI32X4(operand.U8(0x88), reg.Z19, reg.Z17, reg.Z22)
		av.VSHUFI32X4(operand.U8(0xDD), reg.Z19, reg.Z17, reg.Z23)
		for l := range 4 {
			av.VMOVDQU32(zmm(20+l), at(l, c))
		}
	}
	av.ADDQ(blockBytes, s)
	av.ADDQ(operand.U32(64), d)
	av.DECQ(left)
	av.JNZ(operand.LabelRef("block"))
	// The next group of channels: 64 bytes on in the source, 16 rows in dst.
	av.ADDQ(operand.U32(64), src)
	ldd16 := av.GP64()
	av.MOVQ(ldd, ldd16)
	av.SHLQ(operand.U8(4), ldd16)
	av.ADDQ(ldd16, dst)
	av.DECQ(groups)
	av.JNZ(operand.LabelRef("group"))
	av.Label("done")
	av.VZEROUPPER()
	av.RET()
}
