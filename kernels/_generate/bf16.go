package main

import (
	"fmt"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	av "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The AVX-512 BF16 kernels: micro-kernels of the bfloat16 GEMM (see
// bf16Kernel in kernels/bf16.go) and the float32 -> bfloat16 conversion.
//
// Go's assembler does not know the AVX512_BF16 instructions, so the two used
// here, VDPBF16PS and VCVTNE2PS2BF16, are written out as their EVEX
// encodings (register operands only, no masking, 512-bit), each preceded by
// a comment with the mnemonic in Intel operand order. The encoder was
// checked against GNU as 2.40 (objdump of the same instructions).

// zmm returns register Zi.
func zmm(i int) reg.VecPhysical {
	return []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7, reg.Z8, reg.Z9,
		reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15, reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20,
		reg.Z21, reg.Z22, reg.Z23, reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}[i]
}

// evex512 returns the six bytes of the EVEX-encoded, 512-bit, unmasked
// instruction "op zmm(dst), zmm(src1), zmm(src2)" in map 0F38 (Intel
// operand order: src1 in EVEX.vvvv, src2 in ModRM.rm) with prefix pp
// (1: 66, 2: F3, 3: F2) and W0.
func evex512(pp, opcode byte, dst, src1, src2 int) [6]byte {
	bit := func(r, b int) byte { return byte(r>>b) & 1 }
	p0 := (1-bit(dst, 3))<<7 | (1-bit(src2, 4))<<6 | (1-bit(src2, 3))<<5 | (1-bit(dst, 4))<<4 | 0b10
	p1 := byte(^src1&0xf)<<3 | 1<<2 | pp
	p2 := byte(0b10)<<5 | (1-bit(src1, 4))<<3
	modrm := byte(0b11)<<6 | byte(dst&7)<<3 | byte(src2&7)
	return [6]byte{0x62, p0, p1, p2, opcode, modrm}
}

// raw emits the bytes of one instruction as a LONG and a WORD directive.
func raw(comment string, b [6]byte) {
	av.Comment(comment)
	long := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	word := uint16(b[4]) | uint16(b[5])<<8
	av.Instruction(&ir.Instruction{Opcode: "LONG", Operands: []operand.Op{operand.U32(long)}})
	av.Instruction(&ir.Instruction{Opcode: "WORD", Operands: []operand.Op{operand.U16(word)}})
}

// vdpbf16ps emits VDPBF16PS zmm(acc), zmm(x), zmm(y): for each of the 16
// lanes, acc += x.hi*y.hi, then acc += x.lo*y.lo (bfloat16 halves).
func vdpbf16ps(acc, x, y int) {
	raw(fmt.Sprintf("VDPBF16PS zmm%d, zmm%d, zmm%d", acc, x, y), evex512(2, 0x52, acc, x, y))
}

// vcvtne2ps2bf16 emits VCVTNE2PS2BF16 zmm(dst), zmm(hi), zmm(lo): the 32
// words of dst are lo's 16 floats rounded to bfloat16, then hi's.
func vcvtne2ps2bf16(dst, hi, lo int) {
	raw(fmt.Sprintf("VCVTNE2PS2BF16 zmm%d, zmm%d, zmm%d", dst, hi, lo), evex512(3, 0x72, dst, hi, lo))
}

// bf16Kernel describes one BF16 micro-kernel: mr rows, nv vectors of 16
// columns.
type bf16Kernel struct{ mr, nv int }

func (k bf16Kernel) name() string { return fmt.Sprintf("gemmBF16x%dx%d", k.mr, 16*k.nv) }

func (k bf16Kernel) generate() {
	nr := 16 * k.nv
	av.TEXT(k.name(), attr.NOSPLIT, "func(kp int, a *uint16, lda int, b *uint16, c *float32, ldc int, bias *float32, res *float32, flags int)")
	av.Pragma("noescape")
	av.Doc(fmt.Sprintf("%s computes a %dx%d tile of C from bfloat16 A and packed B (see bf16Kernel in bf16.go).", k.name(), k.mr, nr))
	nacc := k.mr * k.nv
	if nacc+k.nv+1 > 32 {
		panic(k.name() + ": too many registers")
	}
	acc := func(i, v int) int { return i*k.nv + v }
	breg := func(v int) int { return nacc + v }
	bc := nacc + k.nv

	av.Comment("Zero the accumulators.")
	for i := range nacc {
		av.VPXORD(zmm(i), zmm(i), zmm(i))
	}
	kp := av.Load(av.Param("kp"), av.GP64())
	ap := av.Load(av.Param("a"), av.GP64())
	lda := av.Load(av.Param("lda"), av.GP64())
	av.SHLQ(operand.U8(1), lda) // bytes
	lda3 := av.GP64()
	av.LEAQ(operand.Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	bp := av.Load(av.Param("b"), av.GP64())
	var rowp []reg.Register
	rowp = append(rowp, ap)
	for g := 1; g < (k.mr+3)/4; g++ {
		p := av.GP64()
		av.LEAQ(operand.Mem{Base: rowp[g-1], Index: lda, Scale: 4}, p)
		rowp = append(rowp, p)
	}
	step, advance := k.pairLoop(bp, rowp, func(i, u int) operand.Mem { return strided(rowp[i/4], lda, lda3, i%4, 4*u) })
	kLoop("", kp, av.GP64(), step, advance, nil)
	k.epilogue(acc, breg, bc)
}

// pairLoop returns the step and advance functions of kLoop for k: one
// step is one k pair, B's nr columns (nr dwords, 4*nr bytes at bp) times
// each row's pair at aAddr(row, step); advancing moves bp and the row
// pointers rowp on.
func (k bf16Kernel) pairLoop(bp reg.Register, rowp []reg.Register, aAddr func(i, u int) operand.Mem) (step func(u int), advance func(steps int)) {
	nr, nacc := 16*k.nv, k.mr*k.nv
	bc := nacc + k.nv
	step = func(u int) {
		for v := range k.nv {
			av.VMOVDQU32(operand.Mem{Base: bp, Disp: u*4*nr + 64*v}, zmm(nacc+v))
		}
		for i := range k.mr {
			av.VPBROADCASTD(aAddr(i, u), zmm(bc))
			for v := range k.nv {
				vdpbf16ps(i*k.nv+v, nacc+v, bc)
			}
		}
	}
	advance = func(steps int) {
		for _, p := range rowp {
			av.ADDQ(operand.U32(4*steps), p)
		}
		av.ADDQ(operand.U32(4*nr*steps), bp)
	}
	return step, advance
}

// epilogue adds the bias and residual that flags select to the
// accumulators, applies the ReLU, stores the tile to c and returns.
func (k bf16Kernel) epilogue(acc func(i, v int) int, breg func(v int) int, bc int) {
	nacc := k.mr * k.nv
	flags := av.Load(av.Param("flags"), av.GP64())
	cp := av.Load(av.Param("c"), av.GP64())
	ldc := loadStride("ldc")

	av.TESTQ(operand.U32(kBias), flags)
	av.JZ(operand.LabelRef("nobias"))
	bias := av.Load(av.Param("bias"), av.GP64())
	for v := range k.nv {
		av.VMOVUPS(operand.Mem{Base: bias, Disp: 64 * v}, zmm(breg(v)))
	}
	for i := range k.mr {
		for v := range k.nv {
			av.VADDPS(zmm(breg(v)), zmm(acc(i, v)), zmm(acc(i, v)))
		}
	}
	av.Label("nobias")

	av.TESTQ(operand.U32(kResidual), flags)
	av.JZ(operand.LabelRef("nores"))
	res := av.Load(av.Param("res"), av.GP64())
	for i := range k.mr {
		for v := range k.nv {
			av.VADDPS(operand.Mem{Base: res, Disp: 64 * v}, zmm(acc(i, v)), zmm(acc(i, v)))
		}
		if i+1 < k.mr {
			av.ADDQ(ldc, res)
		}
	}
	av.Label("nores")

	av.TESTQ(operand.U32(kReLU), flags)
	av.JZ(operand.LabelRef("store"))
	av.VPXORD(zmm(bc), zmm(bc), zmm(bc))
	// VMAXPS returns its first (Go order) operand when either is NaN, so
	// NaN propagates as in the generic code.
	for i := range nacc {
		av.VMAXPS(zmm(i), zmm(bc), zmm(i))
	}
	av.Label("store")
	for i := range k.mr {
		for v := range k.nv {
			av.VMOVUPS(zmm(acc(i, v)), operand.Mem{Base: cp, Disp: 64 * v})
		}
		if i+1 < k.mr {
			av.ADDQ(ldc, cp)
		}
	}
	av.VZEROUPPER()
	av.RET()
}

// tName is the name of the form of k that reads A in pair rows.
func (k bf16Kernel) tName() string { return fmt.Sprintf("gemmBF16Tx%dx%d", k.mr, 16*k.nv) }

// generateT writes the form of k that reads A in pair rows (see
// bf16Kernel in kernels/bf16.go, "T" forms): pair p of row i is the
// 32-bit word at a + 2*(p*lda + 2*i) bytes, so that the rows of one pair
// are adjacent and each pair row is lda bfloat16 values on. B and the
// epilogue are as in generate.
func (k bf16Kernel) generateT() {
	nr := 16 * k.nv
	av.TEXT(k.tName(), attr.NOSPLIT, "func(kp int, a *uint16, lda int, b *uint16, c *float32, ldc int, bias *float32, res *float32, flags int)")
	av.Pragma("noescape")
	av.Doc(fmt.Sprintf("%s computes a %dx%d tile of C from bfloat16 A in pair rows and packed B (see bf16Kernel in bf16.go).", k.tName(), k.mr, nr))
	nacc := k.mr * k.nv
	acc := func(i, v int) int { return i*k.nv + v }
	breg := func(v int) int { return nacc + v }
	bc := nacc + k.nv
	av.Comment("Zero the accumulators.")
	for i := range nacc {
		av.VPXORD(zmm(i), zmm(i), zmm(i))
	}
	kp := av.Load(av.Param("kp"), av.GP64())
	ap := av.Load(av.Param("a"), av.GP64())
	lda := av.Load(av.Param("lda"), av.GP64())
	av.SHLQ(operand.U8(1), lda) // bytes per pair row
	lda3 := av.GP64()
	av.LEAQ(operand.Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	bp := av.Load(av.Param("b"), av.GP64())
	step, _ := k.pairLoop(bp, nil, func(i, u int) operand.Mem { return strided(ap, lda, lda3, u, 4*i) })
	advance := func(steps int) {
		if steps == 4 {
			av.LEAQ(operand.Mem{Base: ap, Index: lda, Scale: 4}, ap)
		} else {
			for range steps {
				av.ADDQ(lda, ap)
			}
		}
		av.ADDQ(operand.U32(4*nr*steps), bp)
	}
	kLoop("", kp, av.GP64(), step, advance, nil)
	k.epilogue(acc, breg, bc)
}

// pairRowsBF16 writes pairRowsBF16AVX512: for p < pairs and j < n (a
// multiple of 16), dst[2*(p*n+j)] and dst[2*(p*n+j)+1] are the bfloat16
// roundings (VCVTNEPS2BF16) of src[2p*n+j] and src[(2p+1)*n+j], each
// 32-bit word XORed with mask (0x80008000 negates both): the rows of a
// row-major matrix interleaved in pairs, as the BF16 kernels read their
// operands along k. Physical registers only (the raw conversions).
func pairRowsBF16() {
	name := "pairRowsBF16AVX512"
	av.TEXT(name, attr.NOSPLIT, "func(dst *uint16, src *float32, n int, pairs int, mask uint32)")
	av.Pragma("noescape")
	av.Doc(name + " interleaves rows 2p and 2p+1 of src (n floats each, n a multiple of 16) in bfloat16 into dst for p < pairs, XORing each word pair with mask.")
	dst := av.Load(av.Param("dst"), av.GP64())
	r0 := av.Load(av.Param("src"), av.GP64())
	n := av.Load(av.Param("n"), av.GP64())
	pairs := av.Load(av.Param("pairs"), av.GP64())
	mask := av.Load(av.Param("mask"), av.GP32())
	av.VPBROADCASTD(mask, zmm(6))
	row := av.GP64() // bytes per row
	av.MOVQ(n, row)
	av.SHLQ(operand.U8(2), row)
	av.SHRQ(operand.U8(4), n)
	r1, j := av.GP64(), av.GP64()
	av.TESTQ(pairs, pairs)
	av.JZ(operand.LabelRef("done"))
	av.Label("pair")
	av.LEAQ(operand.Mem{Base: r0, Index: row, Scale: 1}, r1)
	av.MOVQ(n, j)
	av.Label("col")
	av.VMOVUPS(operand.Mem{Base: r0}, zmm(0))
	av.VMOVUPS(operand.Mem{Base: r1}, zmm(1))
	vcvtneps2bf16(2, 0)
	vcvtneps2bf16(3, 1)
	av.VPMOVZXWD(reg.Y2, zmm(4))
	av.VPMOVZXWD(reg.Y3, zmm(5))
	av.VPSLLD(operand.U8(16), zmm(5), zmm(5))
	av.VPTERNLOGD(operand.U8(0x96), zmm(6), zmm(5), zmm(4)) // zmm4 ^ zmm5 ^ mask
	av.VMOVDQU32(zmm(4), operand.Mem{Base: dst})
	av.ADDQ(operand.U32(64), r0)
	av.ADDQ(operand.U32(64), r1)
	av.ADDQ(operand.U32(64), dst)
	av.DECQ(j)
	av.JNZ(operand.LabelRef("col"))
	av.MOVQ(r1, r0) // row 2p+2
	av.DECQ(pairs)
	av.JNZ(operand.LabelRef("pair"))
	av.Label("done")
	av.VZEROUPPER()
	av.RET()
}

// convName is the name of the implicit-convolution form of k.
func (k bf16Kernel) convName() string { return fmt.Sprintf("convBF16x%dx%d", k.mr, 16*k.nv) }

// generateConv writes the implicit-convolution form of k (see
// bf16ConvKernel in kernels/bf16.go): row i of A is read from rows[i] in
// three segments of kp3 pairs, the row pointer advancing by skip
// bfloat16 values between segments, B and the epilogue as in generate.
func (k bf16Kernel) generateConv() {
	nr := 16 * k.nv
	av.TEXT(k.convName(), attr.NOSPLIT, "func(kp3 int, rows *[8]*uint16, skip int, b *uint16, c *float32, ldc int, bias *float32, res *float32, flags int)")
	av.Pragma("noescape")
	av.Doc(fmt.Sprintf("%s computes a %dx%d tile of a 3x3 convolution from a padded bfloat16 image and packed B (see bf16ConvKernel in bf16.go).", k.convName(), k.mr, nr))
	nacc := k.mr * k.nv
	acc := func(i, v int) int { return i*k.nv + v }
	breg := func(v int) int { return nacc + v }
	bc := nacc + k.nv
	av.Comment("Zero the accumulators.")
	for i := range nacc {
		av.VPXORD(zmm(i), zmm(i), zmm(i))
	}
	rp := av.Load(av.Param("rows"), av.GP64())
	rowp := make([]reg.Register, k.mr)
	for i := range k.mr {
		rowp[i] = av.GP64()
		av.MOVQ(operand.Mem{Base: rp, Disp: 8 * i}, rowp[i])
	}
	skip := av.Load(av.Param("skip"), av.GP64())
	av.SHLQ(operand.U8(1), skip) // bytes
	bp := av.Load(av.Param("b"), av.GP64())
	seg := av.GP64()
	av.MOVQ(operand.U32(3), seg)
	n4, kk := av.GP64(), av.GP64()
	step, advance := k.pairLoop(bp, rowp, func(i, u int) operand.Mem { return operand.Mem{Base: rowp[i], Disp: 4 * u} })
	av.Label("segment")
	av.Load(av.Param("kp3"), kk)
	kLoop("", kk, n4, step, advance, nil)
	for _, p := range rowp {
		av.ADDQ(skip, p)
	}
	av.DECQ(seg)
	av.JNZ(operand.LabelRef("segment"))
	k.epilogue(acc, breg, bc)
}

// vcvtneps2bf16 emits VCVTNEPS2BF16 ymm(dst), zmm(src): src's 16 floats
// rounded to bfloat16 into the 16 words of ymm(dst).
func vcvtneps2bf16(dst, src int) {
	raw(fmt.Sprintf("VCVTNEPS2BF16 ymm%d, zmm%d", dst, src), evex512(2, 0x72, dst, 0, src))
}

// toBF16 writes toBF16AVX512: dst[i] = bfloat16(src[i]) (round to nearest
// even, VCVTNE2PS2BF16's rules) for i < n, n a multiple of 32.
func toBF16() {
	av.TEXT("toBF16AVX512", attr.NOSPLIT, "func(dst *uint16, src *float32, n int)")
	av.Pragma("noescape")
	av.Doc("toBF16AVX512 rounds src[i] to bfloat16 into dst[i] for i < n (a multiple of 32) with VCVTNE2PS2BF16.")
	dst := av.Load(av.Param("dst"), av.GP64())
	src := av.Load(av.Param("src"), av.GP64())
	n := av.Load(av.Param("n"), av.GP64())
	av.SHRQ(operand.U8(5), n)
	countedLoop(n, func() {
		av.VMOVUPS(operand.Mem{Base: src}, zmm(0))
		av.VMOVUPS(operand.Mem{Base: src, Disp: 64}, zmm(1))
		vcvtne2ps2bf16(2, 1, 0)
		av.VMOVDQU16(zmm(2), operand.Mem{Base: dst})
		av.ADDQ(operand.U32(128), src)
		av.ADDQ(operand.U32(64), dst)
	})
}

// peakBF16 writes dpbf16Peak: a loop of 12 independent VDPBF16PS without
// memory operands, the BF16 counterpart of fmaPeak.
func peakBF16() {
	av.TEXT("dpbf16Peak", attr.NOSPLIT, "func(n int)")
	av.Pragma("noescape")
	av.Doc("dpbf16Peak runs n iterations of 12 independent VDPBF16PS (for benchmarks only).")
	n := av.Load(av.Param("n"), av.GP64())
	for i := range 14 {
		av.VPXORD(zmm(i), zmm(i), zmm(i))
	}
	countedLoop(n, func() {
		for i := range 12 {
			vdpbf16ps(i, 12, 13)
		}
	})
}

// bf16TileSets are the BF16 register tiles: 6x64 for 64 output channels and
// more, 8x32 for narrower layers.
var bf16TileSets = []bf16Kernel{{mr: 8, nv: 2}, {mr: 6, nv: 4}}

// generateBF16 writes the BF16 kernels and returns the Go table of their
// tile sets.
func generateBF16() string {
	tab := "\n// The BF16 tile sets of gemm_amd64.s (tail[r] computes r rows).\nvar (\n"
	for _, ts := range bf16TileSets {
		var names, convNames, tNames []string
		for r := 1; r <= ts.mr; r++ {
			k := bf16Kernel{mr: r, nv: ts.nv}
			k.generate()
			k.generateConv()
			k.generateT()
			names = append(names, k.name())
			convNames = append(convNames, k.convName())
			tNames = append(tNames, k.tName())
		}
		tab += fmt.Sprintf("\ttilesBF16x%dx%d = &bf16TileSet{mr: %d, nr: %d, kern: %s, conv: %s, kernT: %s,\n\t\ttail: []bf16Kernel{nil, %s},\n\t\tconvTail: []bf16ConvKernel{nil, %s},\n\t\ttailT: []bf16Kernel{nil, %s}}\n",
			ts.mr, 16*ts.nv, ts.mr, 16*ts.nv, names[ts.mr-1], convNames[ts.mr-1], tNames[ts.mr-1],
			strings.Join(names[:ts.mr-1], ", "), strings.Join(convNames[:ts.mr-1], ", "), strings.Join(tNames[:ts.mr-1], ", "))
	}
	toBF16()
	peakBF16()
	pairRowsBF16()
	return tab + ")\n"
}
