//go:build amd64

// AMX tile kernels (see amx.go). Written by hand: neither Go's assembler
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

// func transposePairsBF16AVX512(dst *uint16, src *float32, idx *[32]int32, perm *[32]uint16, rows, blocks, ldd int)
//
// For i < rows and q < 16*blocks: the word q of row i of dst (ldd bytes
// apart) holds src's column i at rows 2q (low half) and 2q+1 (high half),
// each rounded to bfloat16 (VCVTNE2PS2BF16, as ToBF16). idx[p] and
// idx[16+p] are the byte offsets of rows 2p and 2p+1 from the block's
// first row (a block is 32 source rows, 16*idx[1] bytes); perm
// interleaves the two converted halves.
TEXT ·transposePairsBF16AVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ idx+16(FP), AX
	MOVQ perm+24(FP), R12
	MOVQ rows+32(FP), CX
	MOVQ blocks+40(FP), R9
	MOVQ ldd+48(FP), R10
	VMOVDQU32 (AX), Z4
	VMOVDQU32 64(AX), Z5
	VMOVDQU16 (R12), Z6
	// The bytes of 32 source rows: idx[1] is row 2's offset, 16 of them.
	MOVLQSX 4(AX), R11
	SHLQ $4, R11
	TESTQ CX, CX
	JZ pdone
	TESTQ R9, R9
	JZ pdone
prow:
	MOVQ SI, BX
	MOVQ DI, DX
	MOVQ R9, R8
pblock:
	KXNORW K1, K1, K1
	KXNORW K2, K2, K2
	VGATHERDPS (BX)(Z4*1), K1, Z0
	VGATHERDPS (BX)(Z5*1), K2, Z1
	// VCVTNE2PS2BF16 zmm2, zmm1, zmm0: words 0-15 from Z0 (the even
	// rows), 16-31 from Z1 (the odd rows); bytes as gemm_amd64.s's.
	LONG $0x4877f262
	WORD $0xd072
	VPERMW Z2, Z6, Z3
	VMOVDQU16 Z3, (DX)
	ADDQ R11, BX
	ADDQ $64, DX
	DECQ R8
	JNZ pblock
	ADDQ $4, SI
	ADDQ R10, DI
	DECQ CX
	JNZ prow
pdone:
	VZEROUPPER
	RET
