package cuda

import (
	"fmt"
	"unsafe"
)

// cublasAPI holds the cuBLAS entry points (cublasStatus_t is int32,
// cublasHandle_t is uintptr, device pointers are uint64).
type cublasAPI struct {
	cublasCreate       func(h *uintptr) int32 // cublasCreate_v2
	cublasDestroy      func(h uintptr) int32  // cublasDestroy_v2
	cublasSetStream    func(h, s uintptr) int32
	cublasSetMathMode  func(h uintptr, mode int32) int32
	cublasSetWorkspace func(h uintptr, ws uint64, bytes uintptr) int32 // cublasSetWorkspace_v2 (optional)
	cublasGetProperty  func(typ int32, v *int32) int32
	cublasSgemm        func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, lda int32, b uint64, ldb int32, beta *float32, c uint64, ldc int32) int32
	cublasGemmEx       func(h uintptr, ta, tb, m, n, k int32, alpha unsafe.Pointer, a uint64, atype, lda int32, b uint64, btype, ldb int32, beta unsafe.Pointer, c uint64, ctype, ldc int32, compute, algo int32) int32
}

func (a *cublasAPI) symbols() []symbol {
	return []symbol{
		{&a.cublasCreate, []string{"cublasCreate_v2"}},
		{&a.cublasDestroy, []string{"cublasDestroy_v2"}},
		{&a.cublasSetStream, []string{"cublasSetStream_v2"}},
		{&a.cublasSetMathMode, []string{"cublasSetMathMode"}},
		{&a.cublasGetProperty, []string{"cublasGetProperty"}},
		{&a.cublasSgemm, []string{"cublasSgemm_v2"}},
		{&a.cublasGemmEx, []string{"cublasGemmEx"}},
	}
}

func (l *Libs) loadCublas(env searchEnv) error {
	// cuBLASLt first, global, so cuBLAS finds it even where its RUNPATH
	// does not point at it; failing that, cuBLAS may still find it itself.
	_, _, _ = openLib(specLt, env)
	h, path, err := openLib(specCublas, env)
	if err != nil {
		return err
	}
	api := &cublasAPI{}
	if err := bindAll(h, path, api.symbols()); err != nil {
		return err
	}
	_ = bindAll(h, path, []symbol{{&api.cublasSetWorkspace, []string{"cublasSetWorkspace_v2"}}}) // optional
	var maj, mnr, pat int32
	if api.cublasGetProperty(0, &maj) == 0 && api.cublasGetProperty(1, &mnr) == 0 && api.cublasGetProperty(2, &pat) == 0 {
		l.CublasVersion = int(maj)*10000 + int(mnr)*100 + int(pat)
	}
	l.CublasPath, l.cublas = path, api
	return nil
}

func cublasCheck(call string, r int32) error {
	if r == 0 {
		return nil
	}
	return &Error{Call: call, Code: int(r), Name: CublasStatusName(int(r))}
}

// cuBLAS and CUDA library constants (cublas_api.h, library_types.h).
const (
	opN = 0 // CUBLAS_OP_N
	opT = 1 // CUBLAS_OP_T

	// DataType values (cudaDataType).
	DataF32  = 0  // CUDA_R_32F
	DataF16  = 2  // CUDA_R_16F
	DataBF16 = 14 // CUDA_R_16BF

	// ComputeType values (cublasComputeType_t).
	Compute32F         = 68 // CUBLAS_COMPUTE_32F
	Compute32FFastTF32 = 77 // CUBLAS_COMPUTE_32F_FAST_TF32

	gemmDefault = -1 // CUBLAS_GEMM_DEFAULT

	// MathMode values (cublasMath_t).
	MathDefault  = 0 // CUBLAS_DEFAULT_MATH
	MathPedantic = 2 // CUBLAS_PEDANTIC_MATH
	MathTF32     = 3 // CUBLAS_TF32_TENSOR_OP_MATH
)

// GemmCall is a cuBLAS (column-major) GEMM call: C = op(A)*op(B) with C
// m x n, op(A) m x k, op(B) k x n, all column-major with the given leading
// dimensions, and A, B naming which row-major operand goes in each slot.
type GemmCall struct {
	TransA, TransB bool
	M, N, K        int
	A, B           string // "A" or "B": which row-major operand is passed here
	LDA, LDB, LDC  int
}

// MapGemm maps a row-major GEMM onto cuBLAS's column-major one.
//
// A row-major r x c matrix with leading dimension ld has exactly the bytes
// of a column-major c x r matrix with the same leading dimension: its
// transpose. So the row-major product C = op(A) op(B) (C m x n) is, seen
// column-major, C^T = op(B)^T op(A)^T, an n x m product: call cuBLAS with
// the operands swapped (B first), the sizes swapped (m' = n, n' = m), k
// unchanged, each operand keeping its own transpose flag and leading
// dimension, and ldc unchanged. No data moves.
func MapGemm(transA, transB bool, m, n, k, lda, ldb, ldc int) GemmCall {
	return GemmCall{
		TransA: transB, TransB: transA,
		M: n, N: m, K: k,
		A: "B", B: "A",
		LDA: ldb, LDB: lda, LDC: ldc,
	}
}

// Blas is a cuBLAS handle bound to a device and stream. Use it only on the
// device thread (inside Device.Do).
type Blas struct {
	c *Ctx
	h uintptr
	// alpha and beta live here (heap) for the pointer arguments of GEMM;
	// with the default host pointer mode cuBLAS reads them during the call.
	alpha, beta float32
}

// NewBlas creates a cuBLAS handle on the current context using stream s.
func (c *Ctx) NewBlas(s Stream) (*Blas, error) {
	api := c.d.libs.cublas
	if api == nil {
		return nil, fmt.Errorf("cuda: cuBLAS unavailable: %w", c.d.libs.CublasErr)
	}
	b := &Blas{c: c}
	if err := cublasCheck("cublasCreate_v2", api.cublasCreate(&b.h)); err != nil {
		return nil, err
	}
	if err := cublasCheck("cublasSetStream_v2", api.cublasSetStream(b.h, uintptr(s))); err != nil {
		api.cublasDestroy(b.h)
		return nil, err
	}
	return b, nil
}

// SetMathMode sets the handle's math mode (MathDefault, MathPedantic,
// MathTF32).
func (b *Blas) SetMathMode(mode int) error {
	return cublasCheck("cublasSetMathMode", b.c.d.libs.cublas.cublasSetMathMode(b.h, int32(mode)))
}

// SetWorkspace gives cuBLAS a fixed workspace (recommended before CUDA
// graph capture, so cuBLAS allocates nothing while capturing). It is a
// no-op returning nil when the library lacks cublasSetWorkspace_v2.
func (b *Blas) SetWorkspace(ws DevicePtr, bytes int) error {
	f := b.c.d.libs.cublas.cublasSetWorkspace
	if f == nil {
		return nil
	}
	return cublasCheck("cublasSetWorkspace_v2", f(b.h, uint64(ws), uintptr(bytes)))
}

// Destroy releases the handle.
func (b *Blas) Destroy() error {
	if b.h == 0 {
		return nil
	}
	err := cublasCheck("cublasDestroy_v2", b.c.d.libs.cublas.cublasDestroy(b.h))
	b.h = 0
	return err
}

func flag(t bool) int32 {
	if t {
		return opT
	}
	return opN
}

func checkGemmDims(m, n, k int) error {
	const lim = 1<<31 - 1
	if m < 0 || n < 0 || k < 0 || m > lim || n > lim || k > lim {
		return fmt.Errorf("cuda: GEMM sizes m=%d n=%d k=%d out of range", m, n, k)
	}
	return nil
}

// Sgemm computes the row-major float32 C = alpha*op(A)*op(B) + beta*C on
// the handle's stream, with the same argument meaning as kernels.Gemm.
func (b *Blas) Sgemm(transA, transB bool, m, n, k int, alpha float32, a DevicePtr, lda int, bm DevicePtr, ldb int, beta float32, c DevicePtr, ldc int) error {
	if err := checkGemmDims(m, n, k); err != nil {
		return err
	}
	g := MapGemm(transA, transB, m, n, k, lda, ldb, ldc)
	b.alpha, b.beta = alpha, beta
	r := b.c.d.libs.cublas.cublasSgemm(b.h, flag(g.TransA), flag(g.TransB), int32(g.M), int32(g.N), int32(g.K),
		&b.alpha, uint64(bm), int32(g.LDA), uint64(a), int32(g.LDB), &b.beta, uint64(c), int32(g.LDC))
	return cublasCheck("cublasSgemm_v2", r)
}

// GemmEx is Sgemm with typed operands: A and B of abType (DataF32, DataF16
// or DataBF16), C float32, accumulated with compute (Compute32F, or
// Compute32FFastTF32 for TF32 tensor cores on float32 operands). alpha and
// beta are float32 (the scale type of the 32F compute types).
func (b *Blas) GemmEx(transA, transB bool, m, n, k int, alpha float32, a DevicePtr, lda int, bm DevicePtr, ldb int, abType int, beta float32, c DevicePtr, ldc int, compute int) error {
	if err := checkGemmDims(m, n, k); err != nil {
		return err
	}
	g := MapGemm(transA, transB, m, n, k, lda, ldb, ldc)
	b.alpha, b.beta = alpha, beta
	r := b.c.d.libs.cublas.cublasGemmEx(b.h, flag(g.TransA), flag(g.TransB), int32(g.M), int32(g.N), int32(g.K),
		unsafe.Pointer(&b.alpha), uint64(bm), int32(abType), int32(g.LDA), uint64(a), int32(abType), int32(g.LDB),
		unsafe.Pointer(&b.beta), uint64(c), DataF32, int32(g.LDC), int32(compute), gemmDefault)
	return cublasCheck("cublasGemmEx", r)
}
