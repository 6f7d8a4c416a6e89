// fake.h: what the emulated driver (libcuda.so.1) exports to the emulated
// cuBLAS and to the host-compiled kernels. Not a CUDA header: the Canopy
// bindings see only the C entry points of driver.cc, cublas.cc and nvrtc.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fakecuda {

// CUresult values used by the emulation (cuda.h).
enum : int {
    kSuccess = 0,
    kInvalidValue = 1,
    kOutOfMemory = 2,
    kNotInitialized = 3,
    kNoDevice = 100,
    kInvalidDevice = 101,
    kInvalidImage = 200,
    kInvalidContext = 201,
    kNoBinaryForGPU = 209,
    kUnsupportedPTXVersion = 222,
    kInvalidHandle = 400,
    kIllegalState = 401,
    kHostMemoryAlreadyRegistered = 712,
    kHostMemoryNotRegistered = 713,
    kNotFound = 500,
    kNotReady = 600,
    kIllegalAddress = 700,
    kLaunchOutOfResources = 701,
    kNotSupported = 801,
    kCaptureUnsupported = 900,
    kCaptureInvalidated = 901,
    kCaptureImplicit = 906,
};

// Access is one device memory range an operation reads or writes.
struct Access {
    uint64_t ptr;
    size_t bytes;
    bool write;
};

// Profile is an emulated GPU model (FAKECUDA_PROFILE=t4|h100).
struct Profile {
    const char* key;
    const char* name;
    int major, minor;
    int sms;
    size_t total_mem;
    int max_threads_per_block;
    int max_block[3];
    int max_grid[3];
    int max_shared_per_block;
};

// profile returns the selected device profile.
const Profile& profile();

// fail records a diagnostic for code (shown by cuGetErrorString and kept in
// the report) and returns code, so callers write `return fail(...)`.
int fail(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// violation records a rule broken without an error code a real GPU would
// give (a race): it goes to stderr and the report, and makes the calling
// operation fail with CUDA_ERROR_ILLEGAL_STATE unless FAKECUDA_STRICT=0.
int violation(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// report_line appends one line to the report (fakecuda_report).
void report_line(const std::string& line);

// current_ctx_ok reports whether the calling thread has a live context.
bool current_ctx_ok();

// check_range reports whether [ptr, ptr+bytes) lies inside one live device
// allocation.
bool check_range(uint64_t ptr, size_t bytes);

// enqueue runs (or, while the stream is being captured, records) one
// operation on stream: it checks the calling thread's context, the
// accesses' bounds and their ordering against unsynchronised writes of
// other streams, then runs op and checks every allocation's guard bytes.
int enqueue(uintptr_t stream, const std::string& what, std::vector<Access> acc, std::function<void()> op);

// Kernel registration (host-compiled CUDA C++, see shim.h).
struct KernelInfo {
    uint64_t source;  // FNV-1a 64 of the source text the kernel came from
    const char* name;
    void* fn;
    int nargs;
    size_t size[32];
    bool ptr[32];
    bool constptr[32];
    void (*invoke)(void* fn, void** params);
};
void register_kernel(const KernelInfo& k);
void register_source(const char* name, uint64_t hash);

// fnv1a64 hashes bytes (the NVRTC emulation and the Go builder agree on it).
inline uint64_t fnv1a64(const char* p, size_t n) {
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

}  // namespace fakecuda
