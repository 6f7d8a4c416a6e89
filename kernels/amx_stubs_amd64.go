//go:build amd64

package kernels

// amxGemmBF16 runs n tasks of C = A x B on the AMX tiles (amx_amd64.s): kt
// k tiles, strides in bytes, flags amxWide and amxAccumulate. Only for an
// implementation with amx set (the CPU has AMX-BF16 and the OS granted the
// tile state).
//
//go:noescape
func amxGemmBF16(cfg *amxConfig, tasks *amxTask, n, kt, lda, ldb, ldc, flags int)
