// cublas.cc: the emulated cuBLAS (libcublas.so.12), on top of the emulated
// driver's streams and memory.
//
// It checks what cuBLAS rejects (a handle created and used with a current
// context, transpose flags, negative sizes, leading dimensions below the
// column-major minimum, operand type and compute type combinations) and that
// every operand lies inside one device allocation, then enqueues the GEMM on
// the handle's stream. The product is computed on the host with exact input
// rounding: FP16 and BF16 operands are widened exactly; float operands are
// rounded to TF32 (10 mantissa bits, round to nearest with ties away from
// zero, as cvt.rna.tf32.f32) for CUBLAS_COMPUTE_32F_FAST_TF32 or the TF32
// math mode on sm_80 and newer, and kept exact on older GPUs, which have no
// TF32. Products are accumulated in float in k order.
#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "shim.h"

using namespace fakecuda;

namespace {

enum : int {
    kBlasOK = 0,
    kBlasNotInit = 1,
    kBlasInvalid = 7,
    kBlasArchMismatch = 8,
    kBlasExecFailed = 13,
    kBlasNotSupported = 15,
};

enum : int { kR32F = 0, kR16F = 2, kR16BF = 14 };
enum : int { kCompute32F = 68, kCompute32FFastTF32 = 77, kCompute32FPedantic = 69 };

struct Handle {
    uintptr_t stream = 0;
    int math = 0;
};

std::set<Handle*> g_handles;

int bad(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
int bad(int code, const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    report_line(std::string("error cuBLAS status ") + std::to_string(code) + ": " + buf);
    return code;
}

float tf32(float f) {
    unsigned int u = f32_bits(f);
    if ((u & 0x7f800000u) == 0x7f800000u) {
        return f;
    }
    return bits_f32((u + 0x1000u) & 0xffffe000u);
}

float bf16_to_f32(unsigned short b) { return bits_f32((unsigned int)b << 16); }

bool has_tf32() { return profile().major >= 8; }

struct Operand {
    uint64_t ptr;
    int type;
    int ld;
    bool trans;
    int rows, cols;  // of op(X)
};

// load widens op(X) (rows x cols) into a column-major float matrix.
std::vector<float> load(const Operand& x, bool round_tf32) {
    std::vector<float> out((size_t)x.rows * x.cols);
    for (int j = 0; j < x.cols; j++) {
        for (int i = 0; i < x.rows; i++) {
            size_t idx = x.trans ? (size_t)j + (size_t)i * x.ld : (size_t)i + (size_t)j * x.ld;
            float v;
            switch (x.type) {
            case kR16F: v = f16_to_f32(reinterpret_cast<const unsigned short*>(x.ptr)[idx]); break;
            case kR16BF: v = bf16_to_f32(reinterpret_cast<const unsigned short*>(x.ptr)[idx]); break;
            default:
                v = reinterpret_cast<const float*>(x.ptr)[idx];
                if (round_tf32) {
                    v = tf32(v);
                }
            }
            out[(size_t)i + (size_t)j * x.rows] = v;
        }
    }
    return out;
}

size_t elem_size(int type) { return type == kR32F ? 4 : 2; }

// extent is the number of bytes a column-major operand with stored shape
// r x c and leading dimension ld spans.
size_t extent(int r, int c, int ld, int type) {
    if (r == 0 || c == 0) {
        return 0;
    }
    return ((size_t)ld * (c - 1) + r) * elem_size(type);
}

int gemm(const char* call, Handle* h, int ta, int tb, int m, int n, int k, const float* alpha, uint64_t a, int atype, int lda, uint64_t b,
         int btype, int ldb, const float* beta, uint64_t c, int ldc, int compute) {
    if (!g_handles.count(h)) {
        return bad(kBlasNotInit, "%s: handle is not initialised", call);
    }
    if (!current_ctx_ok()) {
        return bad(kBlasNotInit, "%s: no live context current on the calling thread", call);
    }
    if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1)) {
        return bad(kBlasInvalid, "%s: transpose flags %d, %d (only N and T are emulated)", call, ta, tb);
    }
    if (m < 0 || n < 0 || k < 0) {
        return bad(kBlasInvalid, "%s: negative size m=%d n=%d k=%d", call, m, n, k);
    }
    int arows = ta ? k : m, brows = tb ? n : k;
    if (lda < (arows > 1 ? arows : 1) || ldb < (brows > 1 ? brows : 1) || ldc < (m > 1 ? m : 1)) {
        return bad(kBlasInvalid, "%s: leading dimensions lda=%d ldb=%d ldc=%d below the minimum %d, %d, %d (transa=%d transb=%d m=%d n=%d k=%d)",
                   call, lda, ldb, ldc, arows > 1 ? arows : 1, brows > 1 ? brows : 1, m > 1 ? m : 1, ta, tb, m, n, k);
    }
    if (atype != btype || !(atype == kR32F || atype == kR16F || atype == kR16BF)) {
        return bad(kBlasNotSupported, "%s: operand types %d, %d", call, atype, btype);
    }
    if (compute == kCompute32FFastTF32 && atype != kR32F) {
        return bad(kBlasNotSupported, "%s: CUBLAS_COMPUTE_32F_FAST_TF32 needs float operands", call);
    }
    if (compute != kCompute32F && compute != kCompute32FFastTF32 && compute != kCompute32FPedantic) {
        return bad(kBlasNotSupported, "%s: compute type %d is not emulated", call, compute);
    }
    Operand A{a, atype, lda, ta == 1, m, k}, B{b, btype, ldb, tb == 1, k, n};
    size_t ea = ta ? extent(k, m, lda, atype) : extent(m, k, lda, atype);
    size_t eb = tb ? extent(n, k, ldb, btype) : extent(k, n, ldb, btype);
    size_t ec = extent(m, n, ldc, kR32F);
    const char* which[] = {"A", "B", "C"};
    uint64_t ptrs[] = {a, b, c};
    size_t ext[] = {ea, eb, ec};
    for (int i = 0; i < 3; i++) {
        if (ext[i] > 0 && !check_range(ptrs[i], ext[i])) {
            return bad(kBlasExecFailed, "%s: operand %s [0x%llx, +%zu bytes) is not inside one device allocation", call, which[i],
                       (unsigned long long)ptrs[i], ext[i]);
        }
    }
    bool round = has_tf32() && atype == kR32F && (compute == kCompute32FFastTF32 || (compute == kCompute32F && h->math == 3));
    float al = *alpha, be = *beta;  // host pointer mode: read at the call
    std::vector<Access> acc;
    if (ea) acc.push_back({a, ea, false});
    if (eb) acc.push_back({b, eb, false});
    if (ec) acc.push_back({c, ec, true});
    int r = enqueue(h->stream, call, acc, [=] {
        if (m == 0 || n == 0) {
            return;
        }
        std::vector<float> av = load(A, round), bv = load(B, round);
        std::vector<float> col(m);
        float* C = reinterpret_cast<float*>(c);
        for (int j = 0; j < n; j++) {
            std::fill(col.begin(), col.end(), 0.0f);
            for (int p = 0; p < k; p++) {
                float s = bv[(size_t)p + (size_t)j * k];
                const float* ap = &av[(size_t)p * m];
                for (int i = 0; i < m; i++) {
                    col[i] += ap[i] * s;
                }
            }
            float* cj = C + (size_t)j * ldc;
            for (int i = 0; i < m; i++) {
                cj[i] = be == 0.0f ? al * col[i] : al * col[i] + be * cj[i];  // beta 0: C is not read
            }
        }
    });
    if (r != 0) {
        return bad(kBlasExecFailed, "%s: the driver refused the launch (CUresult %d)", call, r);
    }
    return kBlasOK;
}

}  // namespace

#define API extern "C" __attribute__((visibility("default")))

API int cublasCreate_v2(Handle** h) {
    if (!current_ctx_ok()) {
        return bad(kBlasNotInit, "cublasCreate: no live context current on the calling thread");
    }
    *h = new Handle;
    g_handles.insert(*h);
    return kBlasOK;
}

API int cublasDestroy_v2(Handle* h) {
    if (!g_handles.erase(h)) {
        return bad(kBlasNotInit, "cublasDestroy: not a handle");
    }
    delete h;
    return kBlasOK;
}

API int cublasSetStream_v2(Handle* h, uintptr_t s) {
    if (!g_handles.count(h)) {
        return bad(kBlasNotInit, "cublasSetStream: not a handle");
    }
    h->stream = s;
    return kBlasOK;
}

API int cublasSetMathMode(Handle* h, int mode) {
    if (!g_handles.count(h)) {
        return bad(kBlasNotInit, "cublasSetMathMode: not a handle");
    }
    if (mode != 0 && mode != 2 && mode != 3) {
        return bad(kBlasInvalid, "cublasSetMathMode: mode %d", mode);
    }
    h->math = mode;
    return kBlasOK;
}

API int cublasSetWorkspace_v2(Handle* h, uint64_t ws, size_t bytes) {
    if (!g_handles.count(h)) {
        return bad(kBlasNotInit, "cublasSetWorkspace: not a handle");
    }
    if (bytes > 0 && !check_range(ws, bytes)) {
        return bad(kBlasInvalid, "cublasSetWorkspace: [0x%llx, +%zu) is not inside one device allocation", (unsigned long long)ws, bytes);
    }
    if (ws % 256 != 0) {
        return bad(kBlasInvalid, "cublasSetWorkspace: workspace 0x%llx is not 256-byte aligned", (unsigned long long)ws);
    }
    return kBlasOK;
}

API int cublasGetProperty(int type, int* v) {
    switch (type) {
    case 0: *v = 12; return kBlasOK;
    case 1: *v = 4; return kBlasOK;
    case 2: *v = 5; return kBlasOK;
    }
    return kBlasInvalid;
}

API int cublasSgemm_v2(Handle* h, int ta, int tb, int m, int n, int k, const float* alpha, uint64_t a, int lda, uint64_t b, int ldb,
                       const float* beta, uint64_t c, int ldc) {
    return gemm("cublasSgemm_v2", h, ta, tb, m, n, k, alpha, a, kR32F, lda, b, kR32F, ldb, beta, c, ldc, kCompute32F);
}

API int cublasGemmEx(Handle* h, int ta, int tb, int m, int n, int k, const void* alpha, uint64_t a, int atype, int lda, uint64_t b,
                     int btype, int ldb, const void* beta, uint64_t c, int ctype, int ldc, int compute, int algo) {
    if (ctype != kR32F) {
        return bad(kBlasNotSupported, "cublasGemmEx: C type %d is not emulated (float only)", ctype);
    }
    if (algo != -1 && algo != 99) {
        return bad(kBlasNotSupported, "cublasGemmEx: algorithm %d is not emulated", algo);
    }
    return gemm("cublasGemmEx", h, ta, tb, m, n, k, static_cast<const float*>(alpha), a, atype, lda, b, btype, ldb,
                static_cast<const float*>(beta), c, ldc, compute);
}
