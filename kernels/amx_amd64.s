//go:build amd64

// AMX tile kernels and the AMX weight gradient's transposition (see
// amx.go). Written by hand: neither Go's assembler
// nor avo (which generates gemm_amd64.s) knows the AMX instructions, so
// the macros below emit their VEX encodings byte by byte, with fixed
// registers (checked against GNU as 2.40's encodings):
//
//	A tile loads     [SI + DX*1 + disp32]   (A rows, stride lda bytes)
//	B tile loads     [BX + CX*1 + disp32]   (B pair rows, stride ldb bytes)
//	C loads, stores  [DI + AX*1 + disp32]   (C rows, stride ldc bytes)
//
// Tiles: tmm0-3 the C tiles (16 float32 columns each), tmm4 the A tile
// (16 k pairs), tmm5-7 the B tiles (16 k pairs x 16 columns).
// transposePairsBF16AVX512's unrolled body was written out by a throwaway
// script: each of its VCVTNE2PS2BF16 carries its EVEX bytes (Go's
// assembler lacks the instruction) with the registers in a comment.

#include "textflag.h"

#define LDTILECFG_AX BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0x00
#define TILERELEASE BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0xC0
#define TILEZERO(t) BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $(0xC0|((t)<<3))
#define TILELOADD_A(t, disp) BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $(0x84|((t)<<3)); BYTE $0x16; LONG $(disp)
#define TILELOADD_B(t, disp) BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $(0x84|((t)<<3)); BYTE $0x0B; LONG $(disp)
#define TILELOADD_C(t, disp) BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $(0x84|((t)<<3)); BYTE $0x07; LONG $(disp)
#define TILESTORED_C(t, disp) BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $(0x84|((t)<<3)); BYTE $0x07; LONG $(disp)
#define TDPBF16PS(d, a, b) BYTE $0xC4; BYTE $0xE2; BYTE $(((15-(b))<<3)|0x02); BYTE $0x5C; BYTE $(0xC0|((d)<<3)|(a))

// func amxGemmBF16(cfg *amxConfig, tasks *amxTask, n, kt, lda, ldb, ldc, flags int)
//
// For each of the n tasks: C = A x B (or C += A x B with amxAccumulate),
// kt k tiles of 32 bfloat16 values (16 pairs) each, 64 columns of C with
// amxWide else 32. The tile shapes (rows of A and C) come from cfg. Tiles
// are released before returning: an assembly function is never preempted
// asynchronously, so no goroutine switch can come between the
// configuration and the release.
TEXT ·amxGemmBF16(SB), NOSPLIT, $0-64
	MOVQ cfg+0(FP), AX
	LDTILECFG_AX
	MOVQ tasks+8(FP), R8
	MOVQ n+16(FP), R9
	MOVQ kt+24(FP), R11
	MOVQ lda+32(FP), DX
	MOVQ ldb+40(FP), CX
	MOVQ ldc+48(FP), AX
	MOVQ flags+56(FP), R13
	MOVQ CX, R12
	SHLQ $4, R12 // bytes of B per k tile: 16 pair rows
	TESTQ R9, R9
	JZ done
	TESTQ $1, R13
	JZ narrow

wide:
	MOVQ 0(R8), SI
	MOVQ 8(R8), BX
	MOVQ 16(R8), DI
	TESTQ $2, R13
	JNZ wideload
	TILEZERO(0)
	TILEZERO(1)
	TILEZERO(2)
	TILEZERO(3)
	JMP widek
wideload:
	TILELOADD_C(0, 0)
	TILELOADD_C(1, 64)
	TILELOADD_C(2, 128)
	TILELOADD_C(3, 192)
widek:
	MOVQ R11, R10
wideloop:
	TILELOADD_A(4, 0)
	TILELOADD_B(5, 0)
	TDPBF16PS(0, 4, 5)
	TILELOADD_B(6, 64)
	TDPBF16PS(1, 4, 6)
	TILELOADD_B(7, 128)
	TDPBF16PS(2, 4, 7)
	TILELOADD_B(5, 192)
	TDPBF16PS(3, 4, 5)
	ADDQ $64, SI
	ADDQ R12, BX
	DECQ R10
	JNZ wideloop
	TILESTORED_C(0, 0)
	TILESTORED_C(1, 64)
	TILESTORED_C(2, 128)
	TILESTORED_C(3, 192)
	ADDQ $24, R8
	DECQ R9
	JNZ wide
	JMP done

narrow:
	MOVQ 0(R8), SI
	MOVQ 8(R8), BX
	MOVQ 16(R8), DI
	TESTQ $2, R13
	JNZ narrowload
	TILEZERO(0)
	TILEZERO(1)
	JMP narrowk
narrowload:
	TILELOADD_C(0, 0)
	TILELOADD_C(1, 64)
narrowk:
	MOVQ R11, R10
narrowloop:
	TILELOADD_A(4, 0)
	TILELOADD_B(5, 0)
	TDPBF16PS(0, 4, 5)
	TILELOADD_B(6, 64)
	TDPBF16PS(1, 4, 6)
	ADDQ $64, SI
	ADDQ R12, BX
	DECQ R10
	JNZ narrowloop
	TILESTORED_C(0, 0)
	TILESTORED_C(1, 64)
	ADDQ $24, R8
	DECQ R9
	JNZ narrow

done:
	TILERELEASE
	RET

// func transposePairsBF16AVX512(dst *uint16, src *float32, perm *[32]uint16, ld, n, blocks, ldd int)
//
// For each group of 16 channels (n a multiple of 16) and each block of 32
// source rows (tiles): rows 2p and 2p+1 are loaded, rounded to bfloat16
// and interleaved (VCVTNE2PS2BF16, then VPERMW by perm: word i = channel
// i's pair p) into Z0-Z15, the 16 x 16 matrix of words is transposed in
// registers (dword and qword unpacks, then two rounds of 128-bit lane
// shuffles), and row i of the result (channel i's 16 pairs of tiles) is
// stored at dst + i*ldd + block*64. ld and ldd are in bytes.
TEXT ·transposePairsBF16AVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+24(FP), AX
	MOVQ n+32(FP), CX
	MOVQ ldd+48(FP), R9
	LEAQ (R9)(R9*2), R10 // 3*ldd
	SHRQ $4, CX
	TESTQ CX, CX
	JZ tpdone
	MOVQ blocks+40(FP), R8
	TESTQ R8, R8
	JZ tpdone
tpgroup:
	MOVQ blocks+40(FP), R8
	MOVQ SI, R11
	MOVQ DI, R12
tpblock:
	MOVQ perm+16(FP), R13
	VMOVDQU16 (R13), Z29
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm0, zmm31, zmm30
	BYTE $0x62; BYTE $0x92; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xc6
	VPERMW Z0, Z29, Z0
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm1, zmm31, zmm30
	BYTE $0x62; BYTE $0x92; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xce
	VPERMW Z1, Z29, Z1
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm2, zmm31, zmm30
	BYTE $0x62; BYTE $0x92; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xd6
	VPERMW Z2, Z29, Z2
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm3, zmm31, zmm30
	BYTE $0x62; BYTE $0x92; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xde
	VPERMW Z3, Z29, Z3
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm4, zmm31, zmm30
	BYTE $0x62; BYTE $0x92; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xe6
	VPERMW Z4, Z29, Z4
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm5, zmm31, zmm30
	BYTE $0x62; BYTE $0x92; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xee
	VPERMW Z5, Z29, Z5
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm6, zmm31, zmm30
	BYTE $0x62; BYTE $0x92; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xf6
	VPERMW Z6, Z29, Z6
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm7, zmm31, zmm30
	BYTE $0x62; BYTE $0x92; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xfe
	VPERMW Z7, Z29, Z7
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm8, zmm31, zmm30
	BYTE $0x62; BYTE $0x12; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xc6
	VPERMW Z8, Z29, Z8
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm9, zmm31, zmm30
	BYTE $0x62; BYTE $0x12; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xce
	VPERMW Z9, Z29, Z9
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm10, zmm31, zmm30
	BYTE $0x62; BYTE $0x12; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xd6
	VPERMW Z10, Z29, Z10
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm11, zmm31, zmm30
	BYTE $0x62; BYTE $0x12; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xde
	VPERMW Z11, Z29, Z11
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm12, zmm31, zmm30
	BYTE $0x62; BYTE $0x12; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xe6
	VPERMW Z12, Z29, Z12
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm13, zmm31, zmm30
	BYTE $0x62; BYTE $0x12; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xee
	VPERMW Z13, Z29, Z13
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm14, zmm31, zmm30
	BYTE $0x62; BYTE $0x12; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xf6
	VPERMW Z14, Z29, Z14
	LEAQ (R11)(AX*2), R11
	VMOVUPS (R11), Z30
	VMOVUPS (R11)(AX*1), Z31
	// VCVTNE2PS2BF16 zmm15, zmm31, zmm30
	BYTE $0x62; BYTE $0x12; BYTE $0x07; BYTE $0x40; BYTE $0x72; BYTE $0xfe
	VPERMW Z15, Z29, Z15
	LEAQ (R11)(AX*2), R11
	// Stage 1: dwords of row pairs; stage 2: qwords (4 x 4 within each lane).
	VPUNPCKLDQ Z1, Z0, Z16
	VPUNPCKHDQ Z1, Z0, Z17
	VPUNPCKLDQ Z3, Z2, Z18
	VPUNPCKHDQ Z3, Z2, Z19
	VPUNPCKLDQ Z5, Z4, Z20
	VPUNPCKHDQ Z5, Z4, Z21
	VPUNPCKLDQ Z7, Z6, Z22
	VPUNPCKHDQ Z7, Z6, Z23
	VPUNPCKLDQ Z9, Z8, Z24
	VPUNPCKHDQ Z9, Z8, Z25
	VPUNPCKLDQ Z11, Z10, Z26
	VPUNPCKHDQ Z11, Z10, Z27
	VPUNPCKLDQ Z13, Z12, Z28
	VPUNPCKHDQ Z13, Z12, Z29
	VPUNPCKLDQ Z15, Z14, Z30
	VPUNPCKHDQ Z15, Z14, Z31
	VPUNPCKLQDQ Z18, Z16, Z0
	VPUNPCKHQDQ Z18, Z16, Z1
	VPUNPCKLQDQ Z19, Z17, Z2
	VPUNPCKHQDQ Z19, Z17, Z3
	VPUNPCKLQDQ Z22, Z20, Z4
	VPUNPCKHQDQ Z22, Z20, Z5
	VPUNPCKLQDQ Z23, Z21, Z6
	VPUNPCKHQDQ Z23, Z21, Z7
	VPUNPCKLQDQ Z26, Z24, Z8
	VPUNPCKHQDQ Z26, Z24, Z9
	VPUNPCKLQDQ Z27, Z25, Z10
	VPUNPCKHQDQ Z27, Z25, Z11
	VPUNPCKLQDQ Z30, Z28, Z12
	VPUNPCKHQDQ Z30, Z28, Z13
	VPUNPCKLQDQ Z31, Z29, Z14
	VPUNPCKHQDQ Z31, Z29, Z15
	// The four 4 x 4 blocks of lanes; row 4l+c of the result to base l, offset c.
	LEAQ (R12)(R9*4), R13
	LEAQ (R13)(R9*4), DX
	LEAQ (DX)(R9*4), R11
	VSHUFI32X4 $0x44, Z4, Z0, Z16
	VSHUFI32X4 $0xEE, Z4, Z0, Z17
	VSHUFI32X4 $0x44, Z12, Z8, Z18
	VSHUFI32X4 $0xEE, Z12, Z8, Z19
	VSHUFI32X4 $0x88, Z18, Z16, Z20
	VSHUFI32X4 $0xDD, Z18, Z16, Z21
	VSHUFI32X4 $0x88, Z19, Z17, Z22
	VSHUFI32X4 $0xDD, Z19, Z17, Z23
	VMOVDQU32 Z20, (R12)
	VMOVDQU32 Z21, (R13)
	VMOVDQU32 Z22, (DX)
	VMOVDQU32 Z23, (R11)
	VSHUFI32X4 $0x44, Z5, Z1, Z16
	VSHUFI32X4 $0xEE, Z5, Z1, Z17
	VSHUFI32X4 $0x44, Z13, Z9, Z18
	VSHUFI32X4 $0xEE, Z13, Z9, Z19
	VSHUFI32X4 $0x88, Z18, Z16, Z20
	VSHUFI32X4 $0xDD, Z18, Z16, Z21
	VSHUFI32X4 $0x88, Z19, Z17, Z22
	VSHUFI32X4 $0xDD, Z19, Z17, Z23
	VMOVDQU32 Z20, (R12)(R9*1)
	VMOVDQU32 Z21, (R13)(R9*1)
	VMOVDQU32 Z22, (DX)(R9*1)
	VMOVDQU32 Z23, (R11)(R9*1)
	VSHUFI32X4 $0x44, Z6, Z2, Z16
	VSHUFI32X4 $0xEE, Z6, Z2, Z17
	VSHUFI32X4 $0x44, Z14, Z10, Z18
	VSHUFI32X4 $0xEE, Z14, Z10, Z19
	VSHUFI32X4 $0x88, Z18, Z16, Z20
	VSHUFI32X4 $0xDD, Z18, Z16, Z21
	VSHUFI32X4 $0x88, Z19, Z17, Z22
	VSHUFI32X4 $0xDD, Z19, Z17, Z23
	VMOVDQU32 Z20, (R12)(R9*2)
	VMOVDQU32 Z21, (R13)(R9*2)
	VMOVDQU32 Z22, (DX)(R9*2)
	VMOVDQU32 Z23, (R11)(R9*2)
	VSHUFI32X4 $0x44, Z7, Z3, Z16
	VSHUFI32X4 $0xEE, Z7, Z3, Z17
	VSHUFI32X4 $0x44, Z15, Z11, Z18
	VSHUFI32X4 $0xEE, Z15, Z11, Z19
	VSHUFI32X4 $0x88, Z18, Z16, Z20
	VSHUFI32X4 $0xDD, Z18, Z16, Z21
	VSHUFI32X4 $0x88, Z19, Z17, Z22
	VSHUFI32X4 $0xDD, Z19, Z17, Z23
	VMOVDQU32 Z20, (R12)(R10*1)
	VMOVDQU32 Z21, (R13)(R10*1)
	VMOVDQU32 Z22, (DX)(R10*1)
	VMOVDQU32 Z23, (R11)(R10*1)
	// The next block: 32 source rows on, 64 bytes on in every row of dst.
	MOVQ AX, R11
	SHLQ $5, R11
	ADDQ R11, SI
	ADDQ $64, R12
	MOVQ SI, R11
	DECQ R8
	JNZ tpblock
	// The next group: back to block 0 of the source, 16 rows on in dst.
	MOVQ AX, R11
	SHLQ $5, R11
	IMULQ blocks+40(FP), R11
	SUBQ R11, SI
	ADDQ $64, SI
	MOVQ R9, R11
	SHLQ $4, R11
	ADDQ R11, DI
	DECQ CX
	JNZ tpgroup
tpdone:
	VZEROUPPER
	RET
