// shim.h: compiles CUDA C++ kernels as host C++ for the emulated device.
//
// A kernel becomes a plain extern "C" function; the emulated cuLaunchKernel
// runs it once per (block, thread), blocks one after another and the
// threads of a block as a loop, with blockIdx/threadIdx/gridDim/blockDim
// as thread-local variables. That is exact for kernels whose threads do
// not communicate (Canopy's grid-stride kernels); __syncthreads and
// __shared__ are deliberately not defined, so a kernel that needs them
// fails to build here instead of running wrongly. Atomics are plain
// read-modify-write operations (threads run one at a time).
//
// CANOPY_CUDA_HOST is defined so that a kernel file can replace inline PTX
// (asm) by the host functions below, which have the same results.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "fake.h"

#define CANOPY_CUDA_HOST 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

struct uint3 {
    unsigned int x, y, z;
};

namespace fakecuda {
extern thread_local uint3 tl_blockIdx, tl_threadIdx, tl_gridDim, tl_blockDim;
}

#define blockIdx (::fakecuda::tl_blockIdx)
#define threadIdx (::fakecuda::tl_threadIdx)
#define gridDim (::fakecuda::tl_gridDim)
#define blockDim (::fakecuda::tl_blockDim)

// Bit casts (PTX mov.b32).
static inline unsigned int f32_bits(float f) {
    unsigned int u;
    std::memcpy(&u, &f, 4);
    return u;
}

static inline float bits_f32(unsigned int u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// IEEE binary16 from float, round to nearest even (PTX cvt.rn.f16.f32):
// overflow gives infinity, NaN a quiet NaN, tiny values subnormals or 0.
static inline unsigned short f32_to_f16(float f) {
    unsigned int u = f32_bits(f);
    unsigned int sign = (u >> 16) & 0x8000u;
    unsigned int a = u & 0x7fffffffu;
    if (a > 0x7f800000u) {
        return (unsigned short)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    }
    if (a >= 0x477ff000u) {  // >= 65520 rounds to infinity (and infinity itself)
        return (unsigned short)(sign | 0x7c00u);
    }
    if (a < 0x38800000u) {  // below 2^-14: subnormal half (or zero)
        if (a < 0x33000000u) {  // below 2^-25: rounds to zero
            return (unsigned short)sign;
        }
        unsigned int e = a >> 23;
        unsigned int m = (a & 0x7fffffu) | 0x800000u;
        unsigned int shift = 126 - e;  // 14..24 (value = m * 2^(e-150), half step 2^-24)
        unsigned int h = m >> shift;
        unsigned int rem = m & ((1u << shift) - 1);
        unsigned int halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (h & 1u))) {
            h++;
        }
        return (unsigned short)(sign | h);
    }
    unsigned int h = ((a - 0x38000000u) >> 13);  // rebias 127 -> 15
    unsigned int rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) {
        h++;
    }
    return (unsigned short)(sign | h);
}

// float from IEEE binary16 (exact; PTX cvt.f32.f16).
static inline float f16_to_f32(unsigned short h) {
    unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
    unsigned int e = (h >> 10) & 0x1fu;
    unsigned int m = h & 0x3ffu;
    if (e == 0x1f) {
        return bits_f32(sign | 0x7f800000u | (m << 13));
    }
    if (e == 0) {
        float v = std::ldexp((float)m, -24);
        return sign ? -v : v;
    }
    return bits_f32(sign | ((e + 112) << 23) | (m << 13));
}

template <typename T>
static inline T atomicAdd(T* p, T v) {
    T old = *p;
    *p = old + v;
    return old;
}

static inline unsigned int atomicOr(unsigned int* p, unsigned int v) {
    unsigned int old = *p;
    *p = old | v;
    return old;
}

static inline unsigned int atomicMax(unsigned int* p, unsigned int v) {
    unsigned int old = *p;
    *p = old > v ? old : v;
    return old;
}

namespace fakecuda {

template <typename T>
struct ArgTraits {
    static constexpr bool ptr = false;
    static constexpr bool constptr = false;
};
template <typename T>
struct ArgTraits<T*> {
    static constexpr bool ptr = true;
    static constexpr bool constptr = std::is_const<T>::value;
};

template <typename... A, std::size_t... I>
void invoke_impl(void* fn, void** p, std::index_sequence<I...>) {
    auto f = reinterpret_cast<void (*)(A...)>(fn);
    f(*static_cast<typename std::remove_cv<A>::type*>(p[I])...);
}

template <typename... A>
void invoke(void* fn, void** p) {
    invoke_impl<A...>(fn, p, std::index_sequence_for<A...>{});
}

// KernelReg registers one host-compiled kernel with the emulated driver.
struct KernelReg {
    template <typename... A>
    KernelReg(uint64_t source, const char* name, void (*fn)(A...)) {
        static_assert(sizeof...(A) <= 32, "too many kernel arguments");
        KernelInfo k{};
        k.source = source;
        k.name = name;
        k.fn = reinterpret_cast<void*>(fn);
        k.nargs = sizeof...(A);
        std::size_t sizes[] = {sizeof(A)..., 0};
        bool ptrs[] = {ArgTraits<A>::ptr..., false};
        bool consts[] = {ArgTraits<A>::constptr..., false};
        for (int i = 0; i < k.nargs; i++) {
            k.size[i] = sizes[i];
            k.ptr[i] = ptrs[i];
            k.constptr[i] = consts[i];
        }
        k.invoke = &invoke<A...>;
        register_kernel(k);
    }
};

struct SourceReg {
    SourceReg(const char* name, uint64_t hash) { register_source(name, hash); }
};

}  // namespace fakecuda

#define FAKECUDA_SOURCE(id, name, hash) static ::fakecuda::SourceReg fakecuda_src_##id(name, hash);
#define FAKECUDA_KERNEL(hash, fn) static ::fakecuda::KernelReg fakecuda_kernel_##fn(hash, #fn, &fn);
