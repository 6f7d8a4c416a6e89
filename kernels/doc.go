// Package kernels holds the float32 numeric kernels of Canopy's CPU neural
// networks: a general matrix multiply (Gemm) with all four transpose
// combinations, a fused inference GEMM with bias, residual and ReLU
// (GemmBiasAct), a fused 3x3 convolution (Conv3x3BiasAct) and its Winograd
// variant (Conv3x3Winograd), their bfloat16 variants for inference and
// training (Conv3x3BiasActBF16, Conv3x3WinogradBF16, GemmBiasActBF16,
// Conv3x3WinogradWeightGradBF16, and F(3x4)'s Conv3x3Winograd34BF16 and
// Conv3x3Winograd34WeightGradBF16; the weights repacked in place by
// RepackBF16 as training updates them), the 3x3 im2col / col2im
// transforms that turn a convolution into a GEMM, and a few elementwise
// helpers (ReLU, AddBias, AddBiasReLU, Axpy, Dot, Softmax).
//
// It is for: dense row-major float32 arithmetic on the CPU, fast enough to be
// the inner loop of network inference and training. It is not for: tensors,
// shapes, layers, autograd or model files (package nets), GPU execution
// (package cuda), or quantised arithmetic. Where the CPU has AMX
// (Intel Sapphire Rapids and later) and Linux grants the tile state, the
// "avx512amx" implementation runs the bfloat16 Winograd products and
// weight gradients on the tiles (amx.go): its sums agree with the
// portable code to float32 rounding, not bit for bit.
//
// # Memory layout (the contract nets and the CUDA backend rely on)
//
// Every matrix is row-major float32 with an explicit leading dimension: element
// (i, j) of a matrix X with leading dimension ldx is x[i*ldx+j], and ldx is at
// least the number of columns actually stored. Transposition flags describe how
// a stored matrix is read: with transA, A is stored k x m (lda >= m) and used as
// its transpose.
//
// Activations are NHWC: a batch of images with C channels, height H and width W
// is a []float32 of length N*H*W*C where element (n, y, x, c) sits at
// ((n*H+y)*W+x)*C + c. Channels are innermost, so an activation tensor is also a
// row-major matrix of N*H*W rows ("cells") and C columns.
//
// A 3x3 "same" convolution (stride 1, zero padding 1) of an NHWC input with Cin
// channels into Cout channels is
//
//	cols := make([]float32, N*H*W*9*Cin)
//	kernels.Im2Col3x3(in, N, Cin, H, W, cols)            // [N*H*W, 9*Cin]
//	kernels.GemmBiasAct(N*H*W, Cout, 9*Cin, cols, 9*Cin,  // M, N, K
//		weights, Cout, bias, nil, true, out, Cout)        // out: NHWC [N*H*W, Cout]
//
// or, equivalently and faster (the im2col matrix is expanded a few rows at a
// time into per-goroutine scratch that stays in cache, and its expansion is
// split across threads with the GEMM),
//
//	kernels.Conv3x3BiasAct(in, N, Cin, H, W, weights, Cout, bias, nil, true, out)
//
// where the weights are a [9*Cin, Cout] row-major matrix whose row index is
// (kh*3+kw)*Cin + cin, that is kh, kw, cin from major to minor, and kh, kw in
// 0..2 select the input pixel (y+kh-1, x+kw-1) for output pixel (y, x). Column
// (kh*3+kw)*Cin + cin of the im2col matrix holds that input pixel's channel cin,
// or 0 where the pixel lies outside the image. (This is the cross-correlation
// convention of every deep-learning framework; a PyTorch weight
// [Cout][Cin][kh][kw] maps to row (kh*3+kw)*Cin+cin, column cout.)
//
// Conv3x3Winograd computes the same convolution by Winograd's F(2x2,3x3)
// algorithm from weights transformed once by WinogradWeights: 16 GEMMs with
// K = cin instead of one with K = 9*cin, and transforms that are additions.
// It agrees with Conv3x3BiasAct to float32 rounding of the transforms
// (about 2e-7 of the absolute sum of an output's products), not bit for
// bit. On the 2-vCPU AMD EPYC machines of docs/BENCHMARKS.md a whole
// network runs 10% (AVX2, before the transforms moved out of the GEMMs)
// and 55-90% (AVX-512, after) faster than with Conv3x3BiasAct.
// Conv3x3Winograd34 (weights by WinogradWeights34) uses larger tiles,
// F(3x4,3x3): 30 GEMMs per 3x4 outputs instead of 16 per 2x2, 37.5% fewer
// products on the 6x7 Connect Four board, with a float32 error of about
// 1e-6 of the products' absolute sum; nets trains with it where it pays
// (Conv3x3Winograd34Moments, Conv3x3Winograd34WeightGrad,
// WinogradWeights34Grad), in bfloat16 too (Conv3x3Winograd34BF16,
// Conv3x3Winograd34BF16Moments, Conv3x3Winograd34WeightGradBF16: weights
// packed by PackWinograd34BF16; an error about 3.7x F(2x2)'s in bfloat16).
//
// Conv3x3BiasActBF16 rounds the image and the weights (packed once by
// PackBF16) to bfloat16 and sums the products in float32;
// Conv3x3WinogradBF16 does the same for Winograd's 16 products over
// channels (weights packed by PackWinogradBF16, transforms in float32).
// With AVX-512 BF16 their micro-kernels run VDPBF16PS, two multiply-adds
// per float32 lane and instruction: one convolution runs at 1.9-2.3x the
// throughput of Conv3x3BiasAct, and a whole Connect Four network at
// 1.5-1.7x that of float32 Winograd, on the AVX-512 machine of
// docs/BENCHMARKS.md. Elsewhere the portable code computes the same sums
// in the same order (BF16Kernels names what runs); the two agreed bit
// for bit on that machine.
//
// A 1x1 convolution or a fully connected layer over NHWC activations is a plain
// GEMM with M = N*H*W rows and K = Cin. For training, the weight gradient of a
// 3x3 convolution is Gemm(true, false, 9*Cin, Cout, N*H*W, 1, cols, 9*Cin, dOut,
// Cout, 1, dW, Cout) and the input gradient is Col2Im3x3 of dOut*W^T (or,
// as package nets computes it, the 3x3 convolution of dOut with the kernel
// rotated by 180 degrees, by im2col or Winograd). Batch normalisation's
// per-channel passes in training (ScaleShift, Affine2, ReLUSums, Moments)
// have AVX-512 loops for channels a multiple of 16, bit for bit like their
// Go loops. Conv3x3WinogradMoments (and its bfloat16 twin) is the
// convolution in front of a batch norm with the norm's statistics (sums
// of the outputs and their squares around a shift) taken in the output
// transform's store, so training's forward does not read the outputs
// again for Moments.
//
// # Implementations and dispatch
//
// Each kernel has a portable Go implementation ("generic", every platform) and,
// on amd64, AVX2+FMA ("avx2", 6x16 register tiles) and AVX-512F ("avx512",
// 8x32, 8x48 or 6x64 tiles: those whose strips pad n least, the widest of
// them) micro-kernels in Go assembly generated by the avo program in _generate (see
// the go:generate line in gemm_amd64.go; never edit gemm_amd64.s,
// gemm_stubs_amd64.go or gemm_tiles_amd64.go by hand). The fastest
// implementation the CPU supports is chosen at init with klauspost/cpuid,
// never by build tag alone; the environment variable
// CANOPY_KERNELS=generic|avx2|avx512 overrides that choice (an unavailable
// name is reported on stderr and the default kept). Use forces a path for
// tests and benchmarks (it also accepts the single-tile tuning variants
// "avx512/8x32", "avx512/8x48" and "avx512/6x64"); Available and Current report. Results of
// different paths agree to float32 rounding (summation order and FMA differ),
// not bit for bit. Besides the GEMM, the inner loop of Col2Im3x3 (nine
// rows added into one), Winograd's transforms and the batch-norm loops
// have SIMD code, each bit for bit like its Go loop: im2col is copies, and
// the other elementwise helpers are memory bound.
//
// # Performance
//
// BenchmarkConvGemm runs GemmBiasAct on the convolution shapes of the game
// networks (M = batch x 42 or 100 cells, K = 9 x 64 or 9 x 128, N = 64 or
// 128) for every implementation with 1 and 2 threads; BenchmarkFMAPeak
// measures the core's practical FMA peak and BenchmarkMicroKernel the
// micro-kernels alone:
//
//	go test -run '^$' -bench 'ConvGemm|FMAPeak|MicroKernel' -benchtime 0.3s ./kernels
//
// It reports GFLOP/s and GFLOP per CPU-second (GFLOP/cpu-s, the honest
// number on a shared machine). On the 2-core Xeon (Sapphire Rapids class,
// AVX-512) development machine, single-threaded, idle (2026-11-29):
// practical peak 118-120 (avx2) and 225 (avx512) GFLOP/s; micro-kernels
// 115 (6x16), 185 (8x32), 190 (6x64); 8x48 (added later, one run at
// 2026-11-30 11:12 UTC beside the others: 108, 172, 184) 189.
//
// The blocked GEMM reads B (a layer's weights) in place from L2 and A
// once from memory, which suits the convolutions, whose B fits L2 whole.
// A call whose op(B) holds 256K floats or more and whose A has 64 rows or
// more takes a cache-blocked loop order instead (largeRows: B packed into
// contiguous strips, blocks of 512 columns by 256 of K kept in L2 while
// every row tile passes over them, a transposed A packed into
// micro-panels). BenchmarkDenseGemm times it on study 002's PPO dense
// layer (2048 x 2688 -> 512): 142-168 GFLOP/s on one core of that Xeon,
// against 51-74 in the convolutions' order and 144-154 for OpenBLAS
// (kernels/testdata/np_gemm.py); in a slower hour of the same host 95-119
// against OpenBLAS's 127-145 (docs/BENCHMARKS.md). A GEMM with B transposed and at most
// four rows (an LSTM step) takes dot products of rows (dotRows).
//
// # Threads and allocation
//
// Large Gemm calls are split by blocks of rows over a small persistent pool of
// worker goroutines (SetThreads, default min(GOMAXPROCS, 8)); calls with less
// than about a million multiply-adds per goroutine run on the calling
// goroutine alone. The caller always works on its own call too, so a call
// never waits for an idle pool; concurrent callers share the pool, and a
// call splits only over the threads that the calls in flight leave free
// (callers that run their own goroutines, like the training of package
// nets, then get one thread per call instead of competing for the pool).
// Parallel runs a caller's own parts (the slices of a batch-sliced
// inference) on the same pool and counts the threads it takes as busy, so
// the kernel calls inside a part run single-threaded. A Team is a thread
// budget of its own for one user (a CPU backend's threads= option): its
// calls split over at most its threads, while the package functions use
// the default (SetThreads); every team shares the pool and the count of
// busy threads. Packing buffers are reused, so the kernels allocate
// nothing in steady state; the pool of packed-B buffers keeps one buffer
// per call that ran at once, as large as the largest B it packed (5.5 MB
// for the PPO network's dense layer), for the life of the process. Every function is safe for
// concurrent use by many goroutines as long as their output slices do not
// overlap; Use and SetThreads are configuration calls meant for start-up,
// tests and benchmarks, and must not race with kernel calls.
//
// Bad dimensions (negative sizes, slices too short for the given shape and
// leading dimensions) are programming errors and panic with a message naming
// the argument, like out-of-range slice indexing does.
package kernels
