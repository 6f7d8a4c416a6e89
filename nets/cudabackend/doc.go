// Package cudabackend runs Canopy's policy-value networks on an NVIDIA GPU
// through package cuda, and registers itself as the nets backend "cuda"
// (priority 10, above "cpu"), so nets.OpenBackend("auto", ...) uses the GPU
// when one opens and falls back to the CPU otherwise. Registration does not
// touch the GPU; the driver is looked for when a backend is opened. Import
// it for its side effect where a GPU should be used:
//
//	import _ "github.com/canopy-go/canopy/nets/cudabackend"
//
// It is for: inference of nets.Net (AlphaZero ResNets and the PPO CNN) in
// FP32 (cuBLAS SGEMM), TF32, FP16 or BF16 (cublasGemmEx with FP32
// accumulation), optionally replayed from CUDA graphs per batch size. It is
// not for: training (package nets), request batching (package batcher), or
// CUDA bindings themselves (package cuda).
//
// # Mirroring the CPU network
//
// The layer list (plan) is the net's own nets.InferenceGraph: the same
// layers, buffers and batch-norm-folded weights (already in the GEMM layout
// of package kernels) that the CPU Forward uses, so the topology and the
// folding exist in one place. A test runs the plan on the CPU with package
// kernels and compares it with nets' own Forward, which pins the execution
// order and buffer reuse without a GPU.
//
// Each unit is: (im2col for 3x3 convolutions) -> GEMM with cuBLAS -> one
// epilogue kernel adding bias and residual and applying ReLU (and tanh for
// the value). In reduced precision the GEMM operands (weights, im2col
// matrix, 1x1 and dense inputs) are FP16/BF16 and everything else,
// accumulation and activations included, stays FP32.
//
// # Options
//
// The backend spec takes device=N, precision=fp32|tf32|fp16|bf16|auto and
// graphs=true|false (for example "cuda:precision=fp16,graphs=true"; see
// nets.OpenBackendSpec). precision defaults to auto (DefaultPrecision of
// the device, BF16 on sm_80 and newer, FP16 on sm_7x), graphs to false,
// device to nets.BackendOptions.Device. The environment variables that
// once stood in for precision and graphs (CANOPY_CUDA_PRECISION,
// CANOPY_CUDA_GRAPHS) are no longer read: opening refuses while one is
// set and names the option to give instead. Open takes Options explicitly. Where no GPU
// can be used, opening "cuda" fails with an error that matches
// nets.ErrBackendUnavailable and names the reason (Probe's).
//
// # Precision checks
//
// FP16 conversions set a device flag when a finite value overflows to
// infinity; Open and Evaluate then fail with ErrFP16Overflow (which also
// matches nets.ErrNonFinite) instead of returning outputs computed from
// infinities. Compare and Tolerance judge GPU outputs against the CPU's
// relative to the output scale (logits reach tens).
//
// The index kernels (nchw_to_nhwc, im2col, the epilogue) are row kernels:
// one warp per matrix row, its lanes over the row's columns, so a row's
// coordinates are divided out once and its loads and stores are
// contiguous. 3x3 convolutions whose K = 9*cin is not a multiple of 8 run
// with K padded by zero columns and zero weight rows, so cuBLAS gets
// aligned operands.
//
// # Streams and inputs
//
// All GPU work runs on one non-blocking stream. Weights are uploaded with
// cuda.Ctx.CopyHtoD, which waits until the data is on the device (the
// legacy stream it uses is not waited for by the non-blocking one).
// Inputs are uploaded asynchronously from page-locked memory: from a
// caller's buffer registered with RegisterInput (nets.InputRegistrar; the
// batcher registers its ring) when the rows lie inside one, else from the
// backend's staging buffer after a copy. The upload stays outside the
// captured graphs, which start at the first kernel.
//
// # Concurrency
//
// A Backend is safe for concurrent use: Evaluate calls are serialised, and
// all GPU work runs on the cuda.Device's thread.
package cudabackend
