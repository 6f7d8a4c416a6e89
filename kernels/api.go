package kernels

import (
	"fmt"
	"math"
)

// Gemm computes C = alpha*op(A)*op(B) + beta*C where op(X) is X or its
// transpose. C is m x n (leading dimension ldc >= n), op(A) is m x k and
// op(B) is k x n. Without transA, A is stored m x k (lda >= k); with it, A is
// stored k x m (lda >= m). Likewise B is stored k x n (ldb >= n) or, with
// transB, n x k (ldb >= k).
//
// When beta is 0, C is not read (it may hold NaN or garbage). A and B must
// not overlap C. With m == 0 or n == 0 Gemm does nothing; with k == 0 it
// scales C by beta.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	gemm(0, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil, nil, false)
}

// GemmBiasAct is the fused inference GEMM:
//
//	C[i][j] = act(sum_p A[i][p]*B[p][j] + bias[j] + residual[i*ldc+j])
//
// with A m x k (lda >= k), B k x n (ldb >= n), C m x n (ldc >= n). bias (length
// >= n) and residual (same layout and leading dimension as C) may be nil;
// act is max(x, 0) when relu is set and the identity otherwise. residual may
// be exactly c (an in-place residual connection) but must not otherwise
// overlap it. C is not read unless it is the residual.
func GemmBiasAct(m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, residual []float32, relu bool, c []float32, ldc int) {
	gemmBiasAct(0, m, n, k, a, lda, b, ldb, bias, residual, relu, c, ldc)
}

// gemmBiasAct is GemmBiasAct on a thread budget (see Team).
func gemmBiasAct(limit, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, residual []float32, relu bool, c []float32, ldc int) {
	checkGemm(false, false, m, n, k, a, lda, b, ldb, c, ldc)
	if bias != nil && len(bias) < n {
		panic(fmt.Sprintf("kernels: GemmBiasAct: len(bias)=%d < n=%d", len(bias), n))
	}
	if residual != nil && m > 0 && n > 0 && len(residual) < (m-1)*ldc+n {
		panic(fmt.Sprintf("kernels: GemmBiasAct: len(residual)=%d too short for %dx%d with ldc=%d", len(residual), m, n, ldc))
	}
	if m == 0 || n == 0 {
		return
	}
	gemm(limit, false, false, m, n, k, 1, a, lda, b, ldb, 0, c, ldc, bias, residual, relu)
}

// Im2Col3x3 expands an NHWC image batch src (batch*h*w*channels values) into
// the im2col matrix dst of batch*h*w rows and 9*channels columns for a 3x3
// convolution with stride 1 and zero padding 1: row (n*h+y)*w+x, column
// (kh*3+kw)*channels+c holds src pixel (n, y+kh-1, x+kw-1) channel c, or 0
// outside the image. See the package documentation for the weight layout.
// dst must hold batch*h*w*9*channels values and must not overlap src.
func Im2Col3x3(src []float32, batch, channels, h, w int, dst []float32) {
	checkConv("Im2Col3x3", src, batch, channels, h, w, dst)
	im2col3x3(src, batch, channels, h, w, dst)
}

// Col2Im3x3 is the adjoint of Im2Col3x3, used for the input gradient of a 3x3
// convolution: it ADDS every entry of the im2col-shaped matrix src
// (batch*h*w rows, 9*channels columns) into the NHWC pixel of dst it was
// copied from by Im2Col3x3, and drops entries that fell on the padding. Zero
// dst first for a plain gradient.
func Col2Im3x3(src []float32, batch, channels, h, w int, dst []float32) {
	checkConv("Col2Im3x3", dst, batch, channels, h, w, src)
	col2im3x3(src, batch, channels, h, w, dst)
}

// ReLU sets x[i] = max(x[i], 0) in place. NaN stays NaN.
func ReLU(x []float32) {
	// The builtin max keeps NaN and compiles without a branch (activations
	// are negative about half the time, so a branch mispredicts often;
	// measured 4x faster).
	for i, v := range x {
		x[i] = max(v, 0)
	}
}

// AddBias adds bias[j] to every row of x, read as a row-major matrix of
// len(x)/len(bias) rows and len(bias) columns. len(x) must be a multiple of
// len(bias) (for an NHWC tensor, bias has one entry per channel).
func AddBias(x, bias []float32) {
	checkBias("AddBias", x, bias)
	addBias(x, bias, false)
}

// AddBiasReLU is AddBias followed by ReLU, in one pass.
func AddBiasReLU(x, bias []float32) {
	checkBias("AddBiasReLU", x, bias)
	addBias(x, bias, true)
}

// Axpy computes y[i] += alpha*x[i] for i < len(x); len(y) must be >= len(x).
func Axpy(alpha float32, x, y []float32) {
	if len(y) < len(x) {
		panic(fmt.Sprintf("kernels: Axpy: len(y)=%d < len(x)=%d", len(y), len(x)))
	}
	axpy(alpha, x, y[:len(x)])
}

// Dot returns sum x[i]*y[i] for i < len(x); len(y) must be >= len(x). The
// summation order is dot's (64 lane sums added pairwise, then the tail),
// the same on every implementation, so the result's bits are too.
func Dot(x, y []float32) float32 {
	if len(y) < len(x) {
		panic(fmt.Sprintf("kernels: Dot: len(y)=%d < len(x)=%d", len(y), len(x)))
	}
	return dot(x, y[:len(x)])
}

// Softmax replaces x by softmax(x) in place, computed stably (the maximum is
// subtracted first). Entries equal to -Inf (the usual way to mask illegal
// actions) get probability exactly 0. If every entry is -Inf, or x is empty,
// x is left unchanged and Softmax returns false; otherwise it returns true.
func Softmax(x []float32) bool {
	mx := float32(math.Inf(-1))
	for _, v := range x {
		if v > mx {
			mx = v
		}
	}
	if math.IsInf(float64(mx), -1) {
		return false
	}
	var sum float64
	for i, v := range x {
		e := float32(math.Exp(float64(v - mx)))
		x[i] = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	for i := range x {
		x[i] *= inv
	}
	return true
}

func checkGemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("kernels: Gemm: negative size m=%d n=%d k=%d", m, n, k))
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkMat("A", a, ar, ac, lda)
	checkMat("B", b, br, bc, ldb)
	checkMat("C", c, m, n, ldc)
}

// checkMat panics unless x can hold a rows x cols matrix with leading
// dimension ld.
func checkMat(name string, x []float32, rows, cols, ld int) {
	if ld < cols || ld < 0 {
		panic(fmt.Sprintf("kernels: Gemm: ld%s=%d < %d columns", name, ld, cols))
	}
	if rows == 0 || cols == 0 {
		return
	}
	if need := (rows-1)*ld + cols; len(x) < need {
		panic(fmt.Sprintf("kernels: Gemm: len(%s)=%d < %d needed for %dx%d with ld=%d", name, len(x), need, rows, cols, ld))
	}
}

func checkConv(name string, img []float32, batch, channels, h, w int, cols []float32) {
	if batch < 0 || channels < 0 || h < 0 || w < 0 {
		panic(fmt.Sprintf("kernels: %s: negative size batch=%d channels=%d h=%d w=%d", name, batch, channels, h, w))
	}
	n := batch * h * w * channels
	if len(img) < n {
		panic(fmt.Sprintf("kernels: %s: image has %d values, want %d", name, len(img), n))
	}
	if len(cols) < 9*n {
		panic(fmt.Sprintf("kernels: %s: im2col matrix has %d values, want %d", name, len(cols), 9*n))
	}
}

func checkBias(name string, x, bias []float32) {
	if len(bias) == 0 {
		if len(x) == 0 {
			return
		}
		panic(fmt.Sprintf("kernels: %s: empty bias for %d values", name, len(x)))
	}
	if len(x)%len(bias) != 0 {
		panic(fmt.Sprintf("kernels: %s: len(x)=%d is not a multiple of len(bias)=%d", name, len(x), len(bias)))
	}
}
