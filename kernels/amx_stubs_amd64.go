//go:build amd64

package kernels

// amxGemmBF16 runs n tasks of C = A x B on the AMX tiles (amx_amd64.s): kt
// k tiles, strides in bytes, flags amxWide and amxAccumulate. Only for an
// implementation with amx set (the CPU has AMX-BF16 and the OS granted the
// tile state).
//
//go:noescape
func amxGemmBF16(cfg *amxConfig, tasks *amxTask, n, kt, lda, ldb, ldc, flags int)

// transposeWordsAVX512 transposes 32-bit words by gathers (amx_amd64.s):
// row i of dst (ldd bytes apart) gets column i of src, 16*blocks words,
// source rows idx[1] bytes apart (idx[p] = p*idx[1]).
//
//go:noescape
func transposeWordsAVX512(dst, src *uint32, idx *[16]int32, rows, blocks, ldd int)
