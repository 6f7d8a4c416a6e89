//go:build amd64

package kernels

// amxGemmBF16 runs n tasks of C = A x B on the AMX tiles (amx_amd64.s): kt
// k tiles, strides in bytes, flags amxWide and amxAccumulate. Only for an
// implementation with amx set (the CPU has AMX-BF16 and the OS granted the
// tile state).
//
//go:noescape
func amxGemmBF16(cfg *amxConfig, tasks *amxTask, n, kt, lda, ldb, ldc, flags int)

// transposePairsBF16AVX512 rounds and transposes pairs of float32 rows
// into the AMX A operand's words (amx_amd64.s, see transposePairs): n
// channels (a multiple of 16), blocks of 32 source rows, ld and ldd in
// bytes.
//
//go:noescape
func transposePairsBF16AVX512(dst *uint16, src *float32, perm *[32]uint16, ld, n, blocks, ldd int)
