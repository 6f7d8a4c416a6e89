// net.cu: the kernels of Canopy's CUDA network backend.
//
// No headers are included (NVRTC finds none without a toolkit install):
// half and bfloat16 values are raw 16-bit patterns (unsigned short) and
// conversions use PTX cvt instructions or integer rounding. Every kernel
// is extern "C" with a grid-stride loop over a 64-bit index, so any launch
// grid covers the whole problem.

#define GRID_STRIDE(i, n) \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (long long)blockDim.x * gridDim.x)

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
// games write observations); dst gets them as cells x planes (NHWC).
extern "C" __global__ void nchw_to_nhwc(const float* __restrict__ src, float* __restrict__ dst,
                                        int batch, int planes, int cells) {
    long long per = (long long)planes * cells;
    long long total = (long long)batch * per;
    GRID_STRIDE(i, total) {
        long long n = i / per;
        long long r = i - n * per;   // s*planes + c in dst order
        long long s = r / planes;
        long long c = r - s * planes;
        dst[i] = src[n * per + c * cells + s];
    }
}

// im2col for a 3x3 convolution, stride 1, zero padding 1, over NHWC src
// (batch x h x w x ch). dst row (n*h+y)*w+x, column (kh*3+kw)*ch+c holds
// src pixel (n, y+kh-1, x+kw-1) channel c, or 0 outside the image; this is
// kernels.Im2Col3x3's layout. The FP16 variant reports overflow to
// infinity in *overflow (see f32_to_f16_checked).
template <typename T, typename Store>
__device__ __forceinline__ void im2col3x3(const float* __restrict__ src, T* __restrict__ dst,
                                          int batch, int ch, int h, int w, unsigned int* overflow) {
    long long cols = 9LL * ch;
    long long total = (long long)batch * h * w * cols;
    GRID_STRIDE(i, total) {
        long long row = i / cols;
        int col = (int)(i - row * cols);
        int kk = col / ch;
        int c = col - kk * ch;
        int kh = kk / 3, kw = kk - 3 * (kk / 3);
        long long cell = row % ((long long)h * w);
        long long n = row / ((long long)h * w);
        int y = (int)(cell / w), x = (int)(cell % w);
        int iy = y + kh - 1, ix = x + kw - 1;
        float v = 0.0f;
        if (iy >= 0 && iy < h && ix >= 0 && ix < w) {
            v = src[((n * h + iy) * w + ix) * ch + c];
        }
        Store::put(dst, i, v, overflow);
    }
}

extern "C" __global__ void im2col3x3_f32(const float* src, float* dst, int batch, int ch, int h, int w) {
    im2col3x3<float, StoreF32>(src, dst, batch, ch, h, w, 0);
}
extern "C" __global__ void im2col3x3_f16(const float* src, unsigned short* dst, int batch, int ch, int h, int w,
                                         unsigned int* overflow) {
    im2col3x3<unsigned short, StoreF16>(src, dst, batch, ch, h, w, overflow);
}
extern "C" __global__ void im2col3x3_bf16(const float* src, unsigned short* dst, int batch, int ch, int h, int w) {
    im2col3x3<unsigned short, StoreBF16>(src, dst, batch, ch, h, w, 0);
}

// bias_act is the GEMM epilogue, in place over the rows x cols row-major
// matrix out: out = act(out + bias[col] + res), where res (same layout) may
// be null, act is ReLU when relu != 0, then tanh when use_tanh != 0.
extern "C" __global__ void bias_act(float* __restrict__ out, const float* __restrict__ bias,
                                    const float* __restrict__ res, int rows, int cols,
                                    int relu, int use_tanh) {
    long long total = (long long)rows * cols;
    GRID_STRIDE(i, total) {
        float v = out[i] + bias[i % cols];
        if (res != 0) {
            v += res[i];
        }
        if (relu && v < 0.0f) {
            v = 0.0f;
        }
        if (use_tanh) {
            v = tanhf(v);
        }
        out[i] = v;
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
