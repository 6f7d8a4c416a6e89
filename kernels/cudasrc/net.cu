// net.cu: the kernels of Canopy's CUDA network backend.
//
// No headers are included (NVRTC finds none without a toolkit install):
// half and bfloat16 values are raw 16-bit patterns (unsigned short) and
// conversions use PTX cvt instructions or integer rounding. Every kernel
// is extern "C" with a grid-stride loop, so any launch grid covers the
// whole problem. Two shapes:
//
//   - element kernels (GRID_STRIDE): one 1-D index per value, for work
//     that needs no index arithmetic beyond it;
//   - row kernels (ROW_STRIDE, launched with blockDim (32, rows per
//     block)): each warp row threadIdx.y takes whole matrix rows, and its
//     lanes walk the row's columns (c = threadIdx.x, +blockDim.x, ...).
//     A row's coordinates (sample, pixel) are divided out once per row,
//     not once per value (64-bit divisions per value made the first
//     im2col compute-bound on a real GPU: 2026-11-28, H200), and a warp's
//     loads and stores of one row are contiguous.

#define GRID_STRIDE(i, n) \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (long long)blockDim.x * gridDim.x)

#define ROW_STRIDE(r, n) \
    for (long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y; r < (n); \
         r += (long long)blockDim.y * gridDim.x)

// The four conversions below use inline PTX. CANOPY_CUDA_HOST is defined
// only by the host shim of the emulated device (cuda/fakecuda), which
// provides functions of the same names and results; NVRTC never sees it.
#ifndef CANOPY_CUDA_HOST
__device__ __forceinline__ unsigned int f32_bits(float f) {
    unsigned int u;
    asm("mov.b32 %0, %1;" : "=r"(u) : "f"(f));
    return u;
}

__device__ __forceinline__ float bits_f32(unsigned int u) {
    float f;
    asm("mov.b32 %0, %1;" : "=f"(f) : "r"(u));
    return f;
}

// IEEE half, round to nearest even (PTX cvt.rn).
__device__ __forceinline__ unsigned short f32_to_f16(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

__device__ __forceinline__ float f16_to_f32(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
#endif

// bfloat16 = the high 16 bits of a float, rounded to nearest even; NaN
// stays a (quiet) NaN.
__device__ __forceinline__ unsigned short f32_to_bf16(float f) {
    unsigned int u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (unsigned short)((u >> 16) | 0x0040u);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}

__device__ __forceinline__ float bf16_to_f32(unsigned short b) {
    return bits_f32(((unsigned int)b) << 16);
}

// f32_to_f16_checked converts like f32_to_f16 and, when a finite value
// becomes infinite (|v| >= 65520 rounds past the largest half, 65504),
// sets *overflow to 1 (when overflow is not null). Every thread that
// stores writes the same value, so no atomic is needed.
__device__ __forceinline__ unsigned short f32_to_f16_checked(float f, unsigned int* overflow) {
    unsigned short h = f32_to_f16(f);
    if ((h & 0x7fffu) == 0x7c00u && (f32_bits(f) & 0x7f800000u) != 0x7f800000u && overflow != 0) {
        *overflow = 1u;
    }
    return h;
}

// Stores of the im2col kernel; overflow is only used by the FP16 one.
struct StoreF32 {
    __device__ __forceinline__ static void put(float* p, long long i, float v, unsigned int*) { p[i] = v; }
};
struct StoreF16 {
    __device__ __forceinline__ static void put(unsigned short* p, long long i, float v, unsigned int* overflow) {
        p[i] = f32_to_f16_checked(v, overflow);
    }
};
struct StoreBF16 {
    __device__ __forceinline__ static void put(unsigned short* p, long long i, float v, unsigned int*) { p[i] = f32_to_bf16(v); }
};

// nchw_to_nhwc: src holds batch samples of planes x cells (planar, as the
// games write observations); dst gets them as cells x planes (NHWC). A row
// kernel over the batch*cells output rows (one pixel's planes each).
extern "C" __global__ void nchw_to_nhwc(const float* __restrict__ src, float* __restrict__ dst,
                                        int batch, int planes, int cells) {
    long long per = (long long)planes * cells;
    ROW_STRIDE(row, (long long)batch * cells) {
        long long n = row / cells;
        long long s = row - n * cells;
        const float* in = src + n * per + s;
        float* out = dst + row * planes;
        for (int c = threadIdx.x; c < planes; c += blockDim.x) {
            out[c] = in[(long long)c * cells];
        }
    }
}

// im2col for a 3x3 convolution, stride 1, zero padding 1, over NHWC src
// (batch x h x w x ch). dst row (n*h+y)*w+x, column (kh*3+kw)*ch+c holds
// src pixel (n, y+kh-1, x+kw-1) channel c, or 0 outside the image; this is
// kernels.Im2Col3x3's layout, with rows ld >= 9*ch long (columns 9*ch..ld
// are zeros, matching zero weight rows: aligned GEMM operands). A row
// kernel over the batch*h*w rows: each tap's ch values are one contiguous
// load and one contiguous store per warp. The FP16 variant reports
// overflow to infinity in *overflow (see f32_to_f16_checked).
template <typename T, typename Store>
__device__ __forceinline__ void im2col3x3(const float* __restrict__ src, T* __restrict__ dst,
                                          int batch, int ch, int h, int w, int ld, unsigned int* overflow) {
    int cells = h * w;
    ROW_STRIDE(row, (long long)batch * cells) {
        long long n = row / cells;
        int cell = (int)(row - n * cells);
        int y = cell / w, x = cell - (cell / w) * w;
        T* d = dst + row * ld;
        for (int c = 9 * ch + threadIdx.x; c < ld; c += blockDim.x) {
            Store::put(d, c, 0.0f, overflow);
        }
        for (int kh = 0; kh < 3; kh++) {
            int iy = y + kh - 1;
            for (int kw = 0; kw < 3; kw++) {
                int ix = x + kw - 1;
                long long tap = (kh * 3 + kw) * ch;
                if (iy >= 0 && iy < h && ix >= 0 && ix < w) {
                    long long off = ((n * h + iy) * w + ix) * ch;
                    for (int c = threadIdx.x; c < ch; c += blockDim.x) {
                        Store::put(d, tap + c, src[off + c], overflow);
                    }
                } else {
                    for (int c = threadIdx.x; c < ch; c += blockDim.x) {
                        Store::put(d, tap + c, 0.0f, overflow);
                    }
                }
            }
        }
    }
}

extern "C" __global__ void im2col3x3_f32(const float* src, float* dst, int batch, int ch, int h, int w, int ld) {
    im2col3x3<float, StoreF32>(src, dst, batch, ch, h, w, ld, 0);
}
extern "C" __global__ void im2col3x3_f16(const float* src, unsigned short* dst, int batch, int ch, int h, int w, int ld,
                                         unsigned int* overflow) {
    im2col3x3<unsigned short, StoreF16>(src, dst, batch, ch, h, w, ld, overflow);
}
extern "C" __global__ void im2col3x3_bf16(const float* src, unsigned short* dst, int batch, int ch, int h, int w, int ld) {
    im2col3x3<unsigned short, StoreBF16>(src, dst, batch, ch, h, w, ld, 0);
}

// bias_act is the GEMM epilogue, in place over the rows x cols row-major
// matrix out: out = act(out + bias[col] + res), where res (same layout) may
// be null, act is ReLU when relu != 0, then tanh when use_tanh != 0. A row
// kernel (no per-value modulo for the column).
extern "C" __global__ void bias_act(float* __restrict__ out, const float* __restrict__ bias,
                                    const float* __restrict__ res, int rows, int cols,
                                    int relu, int use_tanh) {
    ROW_STRIDE(r, (long long)rows) {
        float* o = out + r * cols;
        const float* q = res != 0 ? res + r * cols : 0;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            float v = o[c] + bias[c];
            if (q != 0) {
                v += q[c];
            }
            if (relu && v < 0.0f) {
                v = 0.0f;
            }
            if (use_tanh) {
                v = tanhf(v);
            }
            o[c] = v;
        }
    }
}

// tanh_inplace: x = tanh(x) for n values (the value head).
extern "C" __global__ void tanh_inplace(float* x, long long n) {
    GRID_STRIDE(i, n) { x[i] = tanhf(x[i]); }
}

// masked_softmax: for each of rows rows of cols logits, probs = softmax of
// the logits whose mask byte is nonzero, 0 elsewhere; a row with no legal
// entry is all zeros. One thread per row (policy rows are short).
extern "C" __global__ void masked_softmax(const float* __restrict__ logits, const unsigned char* __restrict__ mask,
                                          float* __restrict__ probs, int rows, int cols) {
    GRID_STRIDE(r, (long long)rows) {
        const float* l = logits + r * cols;
        const unsigned char* m = mask + r * cols;
        float* p = probs + r * cols;
        float mx = 0.0f;
        int any = 0;
        for (int j = 0; j < cols; j++) {
            if (m[j] && (!any || l[j] > mx)) {
                mx = l[j];
                any = 1;
            }
        }
        float sum = 0.0f;
        for (int j = 0; j < cols; j++) {
            float e = 0.0f;
            if (any && m[j]) {
                e = expf(l[j] - mx);
            }
            p[j] = e;
            sum += e;
        }
        if (any) {
            float inv = 1.0f / sum;
            for (int j = 0; j < cols; j++) {
                p[j] *= inv;
            }
        }
    }
}

// Precision conversions, n values each. f32_to_f16_kernel reports
// overflow to infinity in *overflow (may be null).
extern "C" __global__ void f32_to_f16_kernel(const float* src, unsigned short* dst, long long n, unsigned int* overflow) {
    GRID_STRIDE(i, n) { dst[i] = f32_to_f16_checked(src[i], overflow); }
}
extern "C" __global__ void f16_to_f32_kernel(const unsigned short* src, float* dst, long long n) {
    GRID_STRIDE(i, n) { dst[i] = f16_to_f32(src[i]); }
}
extern "C" __global__ void f32_to_bf16_kernel(const float* src, unsigned short* dst, long long n) {
    GRID_STRIDE(i, n) { dst[i] = f32_to_bf16(src[i]); }
}
extern "C" __global__ void bf16_to_f32_kernel(const unsigned short* src, float* dst, long long n) {
    GRID_STRIDE(i, n) { dst[i] = bf16_to_f32(src[i]); }
}
