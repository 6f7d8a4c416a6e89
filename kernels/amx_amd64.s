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
