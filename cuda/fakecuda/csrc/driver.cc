// driver.cc: the emulated CUDA driver (libcuda.so.1).
//
// It implements the driver API subset Canopy binds (package cuda, driver.go)
// on host memory and checks what a real driver rejects, or what would break
// silently on a real GPU:
//   - a live context current on the calling thread for every context call,
//     cuInit before use, valid handles;
//   - device allocations with guard bytes before and after (checked after
//     every operation: an overrun is CUDA_ERROR_ILLEGAL_ADDRESS, sticky as
//     on a GPU), uninitialised memory filled with NaN bytes, copies and
//     kernel pointer arguments inside live allocations, the profile's memory
//     size;
//   - page-locked host memory for asynchronous copies, and no change to
//     the host bytes of a cuMemcpyHtoDAsync before a synchronisation
//     completes it (a GPU's DMA may read them any time until then; the
//     bytes are hashed at the call and again at completion);
//   - stream ordering: work runs when it is enqueued, but each write to
//     device memory stays "pending" on its stream until a synchronisation
//     completes it; an access from a stream not ordered after that write (a
//     non-blocking stream after the legacy default stream, or two
//     non-blocking streams) is a race, reported as a violation. A
//     synchronous copy from pageable memory is pending on the legacy stream
//     (the real driver may return before its DMA ends);
//   - graph capture: no capture on the legacy stream, no legacy-stream or
//     synchronising call while a capture is in progress on the thread
//     (the capture is invalidated), replay reads host buffers at launch;
//   - launch limits of the profile (block and grid sizes, threads per
//     block, shared memory), no `extra` launch parameters;
//   - modules: only images of the emulated NVRTC, for the device's
//     architecture (CUBIN) or an older one (PTX), from an NVRTC whose major
//     version the driver supports, of a source compiled into this library.
#include <dlfcn.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "shim.h"

namespace fakecuda {

int violation(const char* fmt, ...);

thread_local uint3 tl_blockIdx, tl_threadIdx, tl_gridDim, tl_blockDim;

namespace {

const Profile kProfiles[] = {
    {"h100", "NVIDIA H100 80GB HBM3 (fakecuda)", 9, 0, 132, 85031714816ULL, 1024, {1024, 1024, 64}, {2147483647, 65535, 65535}, 49152},
    {"t4", "Tesla T4 (fakecuda)", 7, 5, 40, 15642329088ULL, 1024, {1024, 1024, 64}, {2147483647, 65535, 65535}, 49152},
};

constexpr size_t kGuard = 256;
constexpr unsigned char kGuardByte = 0xfd;

struct Alloc {
    uint64_t base = 0;
    size_t size = 0;
    unsigned char* raw = nullptr;
    // The last write not yet completed by a synchronisation.
    bool pending = false;
    uint64_t wstream = 0;  // stream id of that write
    bool wnonblocking = false;
    uint64_t wseq = 0;
    std::string wwhat;
};

struct Stream {
    uint64_t id;
    bool nonblocking;
    bool capturing = false;
    bool invalidated = false;
    int mode = 0;
    std::thread::id thread;
    struct Graph* graph = nullptr;
};

struct Op {
    std::string what;
    std::vector<Access> acc;
    std::function<void()> run;
};

struct Graph {
    std::vector<Op> ops;
};

struct Event {
    bool recorded = false;
    uint64_t stream = 0;
    uint64_t seq = 0;
    unsigned flags = 0;
    std::chrono::steady_clock::time_point t;
};

struct Module {
    uint64_t source;
};

struct Ctx {
    int refs = 0;
};

std::recursive_mutex g_mu;
bool g_init = false;
int g_sticky = 0;
Ctx g_ctx;
bool g_ctx_live = false;
uint64_t g_seq = 0;
uint64_t g_next_stream = 1;
size_t g_used = 0;
std::map<uint64_t, Alloc> g_allocs;  // by base
std::map<uintptr_t, size_t> g_pinned;  // host base -> size
std::set<uintptr_t> g_registered;      // the bases in g_pinned from cuMemHostRegister
std::set<Stream*> g_streams;
std::set<Event*> g_events;
std::set<Module*> g_modules;
std::set<Graph*> g_graphs;
std::set<Graph*> g_execs;
Stream g_legacy{0, false};

std::mutex g_report_mu;
std::string g_report;

thread_local void* tl_ctx = nullptr;
thread_local int tl_last_code = 0;
thread_local std::string tl_last_detail;
thread_local std::string tl_msg;

std::deque<KernelInfo>& kernels() {
    static std::deque<KernelInfo> k;
    return k;
}

std::map<uint64_t, std::string>& sources() {
    static std::map<uint64_t, std::string> s;
    return s;
}

bool strict() {
    const char* v = getenv("FAKECUDA_STRICT");
    return !(v && strcmp(v, "0") == 0);
}

void report(const std::string& line) {
    std::lock_guard<std::mutex> l(g_report_mu);
    g_report += line;
    g_report += '\n';
}

std::string vformat(const char* fmt, va_list ap) {
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    return buf;
}

const char* result_name(int code) {
    switch (code) {
    case 0: return "CUDA_SUCCESS";
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    case 200: return "CUDA_ERROR_INVALID_IMAGE";
    case 201: return "CUDA_ERROR_INVALID_CONTEXT";
    case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 400: return "CUDA_ERROR_INVALID_HANDLE";
    case 401: return "CUDA_ERROR_ILLEGAL_STATE";
    case 500: return "CUDA_ERROR_NOT_FOUND";
    case 600: return "CUDA_ERROR_NOT_READY";
    case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 712: return "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED";
    case 713: return "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED";
    case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case 801: return "CUDA_ERROR_NOT_SUPPORTED";
    case 900: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case 901: return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    case 906: return "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT";
    case 908: return "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD";
    }
    return nullptr;
}

const char* result_desc(int code) {
    switch (code) {
    case 0: return "no error";
    case 1: return "invalid argument";
    case 2: return "out of memory";
    case 3: return "initialization error";
    case 100: return "no CUDA-capable device is detected";
    case 101: return "invalid device ordinal";
    case 200: return "device kernel image is invalid";
    case 201: return "invalid device context";
    case 209: return "no kernel image is available for execution on the device";
    case 222: return "the provided PTX was compiled with an unsupported toolchain.";
    case 400: return "invalid resource handle";
    case 401: return "the operation cannot be performed in the present state";
    case 500: return "named symbol not found";
    case 600: return "device not ready";
    case 700: return "an illegal memory access was encountered";
    case 712: return "part or all of the requested memory range is already mapped";
    case 713: return "pointer does not correspond to a registered memory region";
    case 701: return "too many resources requested for launch";
    case 801: return "operation not supported";
    case 900: return "operation not permitted when stream is capturing";
    case 901: return "operation failed due to a previous error during capture";
    case 906: return "operation would make the legacy stream depend on a capturing blocking stream";
    case 908: return "attempt to terminate a thread-local capture sequence from another thread";
    }
    return nullptr;
}

bool is_legacy(uintptr_t h) { return h == 0 || h == 1; }  // 0 and CU_STREAM_LEGACY

Stream* stream_of(uintptr_t h) {
    if (is_legacy(h)) {
        return &g_legacy;
    }
    Stream* s = reinterpret_cast<Stream*>(h);
    return g_streams.count(s) ? s : nullptr;
}

// ordered reports whether work on stream b starts after earlier work on
// stream a has finished, without any explicit synchronisation.
bool ordered(uint64_t a, bool a_nonblocking, const Stream* b) {
    if (a == b->id) {
        return true;
    }
    if (a == 0) {
        return !b->nonblocking;
    }
    if (b->id == 0) {
        return !a_nonblocking;
    }
    return false;
}

std::string stream_name(uint64_t id, bool nonblocking) {
    if (id == 0) {
        return "the legacy default stream";
    }
    return std::string(nonblocking ? "non-blocking" : "blocking") + " stream #" + std::to_string(id);
}

Alloc* find_alloc(uint64_t p) {
    auto it = g_allocs.upper_bound(p);
    if (it == g_allocs.begin()) {
        return nullptr;
    }
    --it;
    Alloc& a = it->second;
    return p >= a.base && p < a.base + a.size ? &a : nullptr;
}

bool find_pinned(const void* p, size_t n) {
    uintptr_t u = reinterpret_cast<uintptr_t>(p);
    auto it = g_pinned.upper_bound(u);
    if (it == g_pinned.begin()) {
        return false;
    }
    --it;
    return u >= it->first && u + n <= it->first + it->second;
}

// guards_ok checks every allocation's guard bytes; a damaged guard makes the
// context's error sticky, as a memory fault does on a GPU.
int guards_ok(const std::string& what) {
    for (auto& kv : g_allocs) {
        Alloc& a = kv.second;
        const unsigned char* front = a.raw;
        const unsigned char* back = a.raw + kGuard + a.size;
        for (size_t i = 0; i < kGuard; i++) {
            if (front[i] != kGuardByte || back[i] != kGuardByte) {
                bool after = back[i] != kGuardByte;
                g_sticky = kIllegalAddress;
                return fail(kIllegalAddress, "%s wrote %s device allocation 0x%llx (%zu bytes): guard byte %zu %s it damaged",
                            what.c_str(), after ? "past the end of" : "before the start of", (unsigned long long)a.base, a.size,
                            i, after ? "after" : "before");
            }
        }
    }
    return kSuccess;
}

// complete marks pending writes finished.
template <typename Pred>
void complete(Pred pred) {
    for (auto& kv : g_allocs) {
        Alloc& a = kv.second;
        if (a.pending && pred(a)) {
            a.pending = false;
        }
    }
}

// HostRead is the host range of a cuMemcpyHtoDAsync not yet completed by
// a synchronisation: the host must not change it before then.
struct HostRead {
    const void* p;
    size_t n;
    uint64_t stream;
    bool nonblocking;
    uint64_t seq;
    uint64_t hash;
};
std::vector<HostRead> g_host_reads;

// hash_bytes is a fast 64-bit hash (8 bytes a step) of n host bytes.
uint64_t hash_bytes(const void* p, size_t n) {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    for (; i < n; i++) {
        h = (h ^ b[i]) * 0x100000001b3ULL;
    }
    return h;
}

// check_host_reads reports (once) a pending host read whose bytes changed.
// Every driver call runs it, so a change is seen at the next call even if
// later bytes (a download into the same buffer) would hide it by the sync.
int check_host_reads() {
    for (size_t i = 0; i < g_host_reads.size(); i++) {
        HostRead h = g_host_reads[i];
        if (hash_bytes(h.p, h.n) != h.hash) {
            g_host_reads.erase(g_host_reads.begin() + i);
            return violation("race: host memory [%p, +%zu) given to cuMemcpyHtoDAsync on %s changed before a synchronisation "
                             "completed the copy (a GPU may upload the new bytes): synchronise before reusing the buffer",
                             h.p, h.n, stream_name(h.stream, h.nonblocking).c_str());
        }
    }
    return kSuccess;
}

// settle_host_reads completes the pending host reads that pred selects and
// reports any whose bytes changed since the copy was enqueued.
template <typename Pred>
int settle_host_reads(Pred pred) {
    if (int r = check_host_reads()) {
        return r;
    }
    std::vector<HostRead> keep;
    for (const HostRead& h : g_host_reads) {
        if (!pred(h.stream, h.nonblocking, h.seq)) {
            keep.push_back(h);
        }
    }
    g_host_reads.swap(keep);
    return kSuccess;
}

// complete_legacy finishes the legacy stream's work and, since the legacy
// stream waits for blocking streams, theirs.
int complete_legacy() {
    complete([](const Alloc& a) { return a.wstream == 0 || !a.wnonblocking; });
    return settle_host_reads([](uint64_t st, bool nb, uint64_t) { return st == 0 || !nb; });
}

// capture_on_thread returns the stream capturing on the calling thread, if any.
Stream* capture_on_thread() {
    for (Stream* s : g_streams) {
        if (s->capturing && s->thread == std::this_thread::get_id()) {
            return s;
        }
    }
    return nullptr;
}

int invalidate_capture(Stream* s, int code, const char* what) {
    s->invalidated = true;
    return fail(code, "%s while stream #%llu is being captured (the capture is invalidated)", what, (unsigned long long)s->id);
}

// run_now checks the ordering of acc on s, runs op, checks the guards and
// records the writes as pending on s.
int run_now(Stream* s, const std::string& what, const std::vector<Access>& acc, const std::function<void()>& op) {
    for (const Access& x : acc) {
        if (x.bytes == 0) {
            continue;
        }
        Alloc* a = find_alloc(x.ptr);
        if (a == nullptr) {
            return fail(kInvalidValue, "%s: 0x%llx is not device memory", what.c_str(), (unsigned long long)x.ptr);
        }
        if (a->pending && !ordered(a->wstream, a->wnonblocking, s)) {
            int r = violation("race: %s on %s %s device memory 0x%llx that %s wrote on %s, with no synchronisation in between",
                              what.c_str(), stream_name(s->id, s->nonblocking).c_str(), x.write ? "writes" : "reads",
                              (unsigned long long)a->base, a->wwhat.c_str(), stream_name(a->wstream, a->wnonblocking).c_str());
            if (r != kSuccess) {
                return r;
            }
        }
    }
    op();
    int r = guards_ok(what);
    if (r != kSuccess) {
        return r;
    }
    for (const Access& x : acc) {
        if (!x.write || x.bytes == 0) {
            continue;
        }
        Alloc* a = find_alloc(x.ptr);
        a->pending = true;
        a->wstream = s->id;
        a->wnonblocking = s->nonblocking;
        a->wseq = ++g_seq;
        a->wwhat = what;
    }
    return kSuccess;
}

int ctx_check() {
    if (!g_init) {
        return fail(kNotInitialized, "cuInit has not been called");
    }
    if (!current_ctx_ok()) {
        return fail(kInvalidContext, "no live context is current on this thread (cuCtxSetCurrent on the calling thread first)");
    }
    if (g_sticky) {
        return fail(g_sticky, "the context has a sticky error from an earlier fault");
    }
    return kSuccess;
}

void free_all() {
    for (auto& kv : g_allocs) {
        free(kv.second.raw);
    }
    g_allocs.clear();
    g_used = 0;
    for (auto& kv : g_pinned) {
        free(reinterpret_cast<void*>(kv.first));
    }
    g_pinned.clear();
    for (Stream* s : g_streams) {
        delete s;
    }
    g_streams.clear();
    for (Event* e : g_events) {
        delete e;
    }
    g_events.clear();
    for (Module* m : g_modules) {
        delete m;
    }
    g_modules.clear();
    for (Graph* g : g_graphs) {
        delete g;
    }
    g_graphs.clear();
    for (Graph* g : g_execs) {
        delete g;
    }
    g_execs.clear();
    g_sticky = 0;
}

}  // namespace

const Profile& profile() {
    const char* v = getenv("FAKECUDA_PROFILE");
    for (const Profile& p : kProfiles) {
        if (v && strcmp(v, p.key) == 0) {
            return p;
        }
    }
    return kProfiles[0];
}

int fail(int code, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string d = vformat(fmt, ap);
    va_end(ap);
    tl_last_code = code;
    tl_last_detail = d;
    const char* n = result_name(code);
    report(std::string("error ") + (n ? n : std::to_string(code)) + ": " + d);
    return code;
}

int violation(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string d = vformat(fmt, ap);
    va_end(ap);
    report("violation: " + d);
    fprintf(stderr, "fakecuda: violation: %s\n", d.c_str());
    if (!strict()) {
        return kSuccess;
    }
    tl_last_code = kIllegalState;
    tl_last_detail = d;
    return kIllegalState;
}

void report_line(const std::string& line) { report(line); }

bool current_ctx_ok() { return tl_ctx == &g_ctx && g_ctx_live; }

bool check_range(uint64_t ptr, size_t bytes) {
    std::lock_guard<std::recursive_mutex> l(g_mu);
    Alloc* a = find_alloc(ptr);
    return a != nullptr && ptr + bytes <= a->base + a->size;
}

int enqueue(uintptr_t h, const std::string& what, std::vector<Access> acc, std::function<void()> op) {
    std::lock_guard<std::recursive_mutex> l(g_mu);
    if (int r = ctx_check()) {
        return r;
    }
    Stream* s = stream_of(h);
    if (s == nullptr) {
        return fail(kInvalidHandle, "%s: stream 0x%llx does not exist", what.c_str(), (unsigned long long)h);
    }
    for (const Access& x : acc) {
        if (x.bytes > 0) {
            Alloc* a = find_alloc(x.ptr);
            if (a == nullptr || x.ptr + x.bytes > a->base + a->size) {
                return fail(kInvalidValue, "%s: device range [0x%llx, +%zu) is not inside one allocation", what.c_str(),
                            (unsigned long long)x.ptr, x.bytes);
            }
        }
    }
    if (s->id == 0) {
        if (Stream* c = capture_on_thread()) {
            return invalidate_capture(c, kCaptureImplicit, (what + " on the legacy default stream").c_str());
        }
    }
    if (s->capturing) {
        if (s->invalidated) {
            return fail(kCaptureInvalidated, "%s: the capture of stream #%llu was invalidated earlier", what.c_str(),
                        (unsigned long long)s->id);
        }
        s->graph->ops.push_back(Op{what, std::move(acc), std::move(op)});
        return kSuccess;
    }
    return run_now(s, what, acc, op);
}

void register_kernel(const KernelInfo& k) { kernels().push_back(k); }

void register_source(const char* name, uint64_t hash) { sources()[hash] = name; }

}  // namespace fakecuda

using namespace fakecuda;

#define API extern "C" __attribute__((visibility("default")))
#define LOCK std::lock_guard<std::recursive_mutex> lock_(g_mu)
#define CTX                          \
    LOCK;                            \
    if (int r_ = ctx_check()) {      \
        return r_;                   \
    }                                \
    if (int r_ = check_host_reads()) { \
        return r_;                   \
    }

API int cuInit(unsigned flags) {
    LOCK;
    if (flags != 0) {
        return fail(kInvalidValue, "cuInit: flags must be 0");
    }
    g_init = true;
    return kSuccess;
}

API int cuDriverGetVersion(int* v) {
    if (!v) {
        return fail(kInvalidValue, "cuDriverGetVersion: null pointer");
    }
    const char* e = getenv("FAKECUDA_DRIVER_VERSION");
    *v = e ? atoi(e) : 12040;
    return kSuccess;
}

API int cuDeviceGetCount(int* n) {
    LOCK;
    if (!g_init) {
        return fail(kNotInitialized, "cuInit has not been called");
    }
    *n = 1;
    return kSuccess;
}

API int cuDeviceGet(int* dev, int ordinal) {
    LOCK;
    if (!g_init) {
        return fail(kNotInitialized, "cuInit has not been called");
    }
    if (ordinal != 0) {
        return fail(kInvalidDevice, "device %d does not exist (1 device)", ordinal);
    }
    *dev = 0;
    return kSuccess;
}

API int cuDeviceGetName(char* name, int n, int dev) {
    LOCK;
    if (!g_init) {
        return fail(kNotInitialized, "cuInit has not been called");
    }
    if (dev != 0 || !name || n <= 0) {
        return fail(kInvalidValue, "cuDeviceGetName: bad device or buffer");
    }
    snprintf(name, n, "%s", profile().name);
    return kSuccess;
}

API int cuDeviceTotalMem_v2(size_t* bytes, int dev) {
    LOCK;
    if (!g_init) {
        return fail(kNotInitialized, "cuInit has not been called");
    }
    if (dev != 0) {
        return fail(kInvalidDevice, "device %d does not exist", dev);
    }
    *bytes = profile().total_mem;
    return kSuccess;
}

API int cuDeviceGetAttribute(int* v, int attr, int dev) {
    LOCK;
    if (!g_init) {
        return fail(kNotInitialized, "cuInit has not been called");
    }
    if (dev != 0) {
        return fail(kInvalidDevice, "device %d does not exist", dev);
    }
    const Profile& p = profile();
    switch (attr) {
    case 1: *v = p.max_threads_per_block; break;
    case 2: case 3: case 4: *v = p.max_block[attr - 2]; break;
    case 5: case 6: case 7: *v = p.max_grid[attr - 5]; break;
    case 8: *v = p.max_shared_per_block; break;
    case 16: *v = p.sms; break;
    case 75: *v = p.major; break;
    case 76: *v = p.minor; break;
    default:
        return fail(kInvalidValue, "cuDeviceGetAttribute: attribute %d is not emulated", attr);
    }
    return kSuccess;
}

API int cuDevicePrimaryCtxRetain(void** ctx, int dev) {
    LOCK;
    if (!g_init) {
        return fail(kNotInitialized, "cuInit has not been called");
    }
    if (dev != 0) {
        return fail(kInvalidDevice, "device %d does not exist", dev);
    }
    g_ctx.refs++;
    g_ctx_live = true;
    *ctx = &g_ctx;
    return kSuccess;
}

API int cuDevicePrimaryCtxRelease_v2(int dev) {
    LOCK;
    if (dev != 0 || g_ctx.refs == 0) {
        return fail(kInvalidContext, "cuDevicePrimaryCtxRelease: the primary context is not retained");
    }
    if (--g_ctx.refs == 0) {
        free_all();  // the driver frees what the context still owns
        g_ctx_live = false;
    }
    return kSuccess;
}

API int cuCtxSetCurrent(void* ctx) {
    LOCK;
    if (ctx != nullptr && (ctx != &g_ctx || !g_ctx_live)) {
        return fail(kInvalidContext, "cuCtxSetCurrent: not a live context");
    }
    tl_ctx = ctx;
    return kSuccess;
}

API int cuCtxSynchronize() {
    CTX;
    if (Stream* c = capture_on_thread()) {
        return invalidate_capture(c, kCaptureUnsupported, "cuCtxSynchronize");
    }
    complete([](const Alloc&) { return true; });
    return settle_host_reads([](uint64_t, bool, uint64_t) { return true; });
}

API int cuMemAlloc_v2(uint64_t* p, size_t size) {
    CTX;
    if (size == 0) {
        return fail(kInvalidValue, "cuMemAlloc: size 0");
    }
    if (size > profile().total_mem - g_used) {
        return fail(kOutOfMemory, "cuMemAlloc: %zu bytes requested, %zu of %zu in use on %s", size, g_used,
                    profile().total_mem, profile().name);
    }
    size_t raw_size = (kGuard + size + kGuard + 255) / 256 * 256;
    unsigned char* raw = static_cast<unsigned char*>(aligned_alloc(256, raw_size));
    if (!raw) {
        return fail(kOutOfMemory, "cuMemAlloc: host memory for %zu bytes unavailable", size);
    }
    memset(raw, kGuardByte, kGuard);
    memset(raw + kGuard, 0xff, size);  // uninitialised memory reads as NaN
    memset(raw + kGuard + size, kGuardByte, kGuard);
    Alloc a;
    a.base = reinterpret_cast<uint64_t>(raw + kGuard);
    a.size = size;
    a.raw = raw;
    g_allocs[a.base] = a;
    g_used += size;
    *p = a.base;
    return kSuccess;
}

API int cuMemFree_v2(uint64_t p) {
    CTX;
    auto it = g_allocs.find(p);
    if (it == g_allocs.end()) {
        return fail(kInvalidValue, "cuMemFree: 0x%llx is not the start of a live allocation", (unsigned long long)p);
    }
    if (int r = guards_ok("an earlier operation")) {
        return r;
    }
    g_used -= it->second.size;
    free(it->second.raw);
    g_allocs.erase(it);
    return kSuccess;
}

API int cuMemAllocHost_v2(void** p, size_t size) {
    CTX;
    if (size == 0) {
        return fail(kInvalidValue, "cuMemAllocHost: size 0");
    }
    void* m = malloc(size);
    if (!m) {
        return fail(kOutOfMemory, "cuMemAllocHost: %zu bytes", size);
    }
    memset(m, 0xff, size);
    g_pinned[reinterpret_cast<uintptr_t>(m)] = size;
    *p = m;
    return kSuccess;
}

// drop_host_reads forgets the pending host reads inside [lo, hi): freeing
// or unregistering page-locked memory waits for the copies that read it.
void drop_host_reads(uintptr_t lo, uintptr_t hi) {
    std::vector<HostRead> keep;
    for (const HostRead& h : g_host_reads) {
        uintptr_t q = reinterpret_cast<uintptr_t>(h.p);
        if (q < lo || q >= hi) {
            keep.push_back(h);
        }
    }
    g_host_reads.swap(keep);
}

API int cuMemFreeHost(void* p) {
    CTX;
    uintptr_t u = reinterpret_cast<uintptr_t>(p);
    auto it = g_pinned.find(u);
    if (it == g_pinned.end() || g_registered.count(u)) {
        return fail(kInvalidValue, "cuMemFreeHost: %p is not page-locked memory from cuMemAllocHost", p);
    }
    drop_host_reads(it->first, it->first + it->second);
    free(p);
    g_pinned.erase(it);
    return kSuccess;
}

// cuMemHostRegister page-locks existing host memory (no flags emulated).
// Like the driver, it refuses a range that overlaps page-locked memory.
API int cuMemHostRegister_v2(void* p, size_t size, unsigned flags) {
    CTX;
    uintptr_t u = reinterpret_cast<uintptr_t>(p);
    if (p == nullptr || size == 0 || flags != 0) {
        return fail(kInvalidValue, "cuMemHostRegister: pointer %p, size %zu, flags %u (only flags 0 is emulated)", p, size, flags);
    }
    for (const auto& kv : g_pinned) {
        if (u < kv.first + kv.second && kv.first < u + size) {
            return fail(kHostMemoryAlreadyRegistered, "cuMemHostRegister: [%p, +%zu) overlaps page-locked memory at 0x%llx",
                        p, size, (unsigned long long)kv.first);
        }
    }
    g_pinned[u] = size;
    g_registered.insert(u);
    return kSuccess;
}

API int cuMemHostUnregister(void* p) {
    CTX;
    uintptr_t u = reinterpret_cast<uintptr_t>(p);
    if (!g_registered.count(u)) {
        return fail(kHostMemoryNotRegistered, "cuMemHostUnregister: %p is not the start of memory from cuMemHostRegister", p);
    }
    drop_host_reads(u, u + g_pinned[u]);
    g_pinned.erase(u);
    g_registered.erase(u);
    return kSuccess;
}

API int cuMemcpyHtoD_v2(uint64_t dst, const void* src, size_t n) {
    CTX;
    if (!check_range(dst, n)) {
        return fail(kInvalidValue, "cuMemcpyHtoD: [0x%llx, +%zu) is not inside one device allocation", (unsigned long long)dst, n);
    }
    if (Stream* c = capture_on_thread()) {
        return invalidate_capture(c, kCaptureImplicit, "cuMemcpyHtoD (legacy default stream)");
    }
    // The copy waits for earlier legacy-stream work; from pageable memory
    // it returns once the data is staged, before the DMA has finished.
    if (int r0 = complete_legacy()) {
        return r0;
    }
    bool pinned = find_pinned(src, n);
    int r = run_now(&g_legacy, pinned ? "cuMemcpyHtoD" : "cuMemcpyHtoD from pageable memory", {{dst, n, true}},
                    [=] { memcpy(reinterpret_cast<void*>(dst), src, n); });
    if (r == kSuccess && pinned) {
        if (int r0 = complete_legacy()) {
            return r0;
        }
    }
    return r;
}

API int cuMemcpyDtoH_v2(void* dst, uint64_t src, size_t n) {
    CTX;
    if (!check_range(src, n)) {
        return fail(kInvalidValue, "cuMemcpyDtoH: [0x%llx, +%zu) is not inside one device allocation", (unsigned long long)src, n);
    }
    if (Stream* c = capture_on_thread()) {
        return invalidate_capture(c, kCaptureImplicit, "cuMemcpyDtoH (legacy default stream)");
    }
    if (int r0 = complete_legacy()) {
        return r0;
    }
    int r = run_now(&g_legacy, "cuMemcpyDtoH", {{src, n, false}}, [=] { memcpy(dst, reinterpret_cast<void*>(src), n); });
    if (r == kSuccess) {
        if (int r0 = complete_legacy()) {
            return r0;
        }
    }
    return r;
}

API int cuMemcpyHtoDAsync_v2(uint64_t dst, const void* src, size_t n, uintptr_t s) {
    CTX;
    if (!find_pinned(src, n)) {
        return fail(kInvalidValue,
                    "cuMemcpyHtoDAsync: host range [%p, +%zu) is not page-locked memory from cuMemAllocHost "
                    "(pageable memory makes the copy synchronous and cannot be captured)",
                    src, n);
    }
    int r = enqueue(s, "cuMemcpyHtoDAsync", {{dst, n, true}}, [=] { memcpy(reinterpret_cast<void*>(dst), src, n); });
    Stream* st = stream_of(s);
    if (r == kSuccess && st != nullptr && !st->capturing) {
        g_host_reads.push_back({src, n, st->id, st->nonblocking, g_seq, hash_bytes(src, n)});
    }
    return r;
}

API int cuMemcpyDtoHAsync_v2(void* dst, uint64_t src, size_t n, uintptr_t s) {
    CTX;
    if (!find_pinned(dst, n)) {
        return fail(kInvalidValue, "cuMemcpyDtoHAsync: host range [%p, +%zu) is not page-locked memory from cuMemAllocHost", dst, n);
    }
    // A download into the range of an upload on the same stream runs after
    // it: that upload's bytes may change from here on.
    if (Stream* st = stream_of(s)) {
        uintptr_t lo = reinterpret_cast<uintptr_t>(dst), hi = lo + n;
        std::vector<HostRead> keep;
        for (const HostRead& h : g_host_reads) {
            uintptr_t q = reinterpret_cast<uintptr_t>(h.p);
            if (h.stream != st->id || q + h.n <= lo || q >= hi) {
                keep.push_back(h);
            }
        }
        g_host_reads.swap(keep);
    }
    return enqueue(s, "cuMemcpyDtoHAsync", {{src, n, false}}, [=] { memcpy(dst, reinterpret_cast<void*>(src), n); });
}

API int cuMemsetD32Async(uint64_t dst, unsigned v, size_t n, uintptr_t s) {
    CTX;
    if (dst % 4 != 0) {
        return fail(kInvalidValue, "cuMemsetD32Async: 0x%llx is not 4-byte aligned", (unsigned long long)dst);
    }
    return enqueue(s, "cuMemsetD32Async", {{dst, 4 * n, true}}, [=] {
        unsigned* p = reinterpret_cast<unsigned*>(dst);
        for (size_t i = 0; i < n; i++) {
            p[i] = v;
        }
    });
}

API int cuStreamCreate(uintptr_t* s, unsigned flags) {
    CTX;
    if (flags > 1) {
        return fail(kInvalidValue, "cuStreamCreate: flags %u (want CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING)", flags);
    }
    Stream* st = new Stream{g_next_stream++, flags == 1};
    g_streams.insert(st);
    *s = reinterpret_cast<uintptr_t>(st);
    return kSuccess;
}

API int cuStreamDestroy_v2(uintptr_t h) {
    CTX;
    Stream* s = is_legacy(h) ? nullptr : stream_of(h);
    if (!s) {
        return fail(kInvalidHandle, "cuStreamDestroy: 0x%llx is not a stream", (unsigned long long)h);
    }
    if (s->capturing) {
        return fail(kIllegalState, "cuStreamDestroy: stream #%llu is being captured", (unsigned long long)s->id);
    }
    g_streams.erase(s);
    delete s;
    return kSuccess;
}

API int cuStreamSynchronize(uintptr_t h) {
    CTX;
    Stream* s = stream_of(h);
    if (!s) {
        return fail(kInvalidHandle, "cuStreamSynchronize: 0x%llx is not a stream", (unsigned long long)h);
    }
    if (s->capturing) {
        return invalidate_capture(s, kCaptureUnsupported, "cuStreamSynchronize of the capturing stream");
    }
    if (s->id == 0) {
        if (Stream* c = capture_on_thread()) {
            return invalidate_capture(c, kCaptureImplicit, "cuStreamSynchronize(legacy default stream)");
        }
        return complete_legacy();
    }
    uint64_t id = s->id;
    complete([id](const Alloc& a) { return a.wstream == id; });
    return settle_host_reads([id](uint64_t st, bool, uint64_t) { return st == id; });
}

API int cuEventCreate(uintptr_t* e, unsigned flags) {
    CTX;
    Event* ev = new Event;
    ev->flags = flags;
    g_events.insert(ev);
    *e = reinterpret_cast<uintptr_t>(ev);
    return kSuccess;
}

API int cuEventDestroy_v2(uintptr_t h) {
    CTX;
    Event* e = reinterpret_cast<Event*>(h);
    if (!g_events.erase(e)) {
        return fail(kInvalidHandle, "cuEventDestroy: not an event");
    }
    delete e;
    return kSuccess;
}

API int cuEventRecord(uintptr_t h, uintptr_t sh) {
    CTX;
    Event* e = reinterpret_cast<Event*>(h);
    Stream* s = stream_of(sh);
    if (!g_events.count(e) || !s) {
        return fail(kInvalidHandle, "cuEventRecord: bad event or stream");
    }
    if (s->capturing) {
        return fail(kNotSupported, "cuEventRecord during capture is not emulated");
    }
    e->recorded = true;
    e->stream = s->id;
    e->seq = g_seq;
    e->t = std::chrono::steady_clock::now();
    return kSuccess;
}

API int cuEventSynchronize(uintptr_t h) {
    CTX;
    Event* e = reinterpret_cast<Event*>(h);
    if (!g_events.count(e)) {
        return fail(kInvalidHandle, "cuEventSynchronize: not an event");
    }
    if (e->recorded) {
        uint64_t id = e->stream, seq = e->seq;
        complete([=](const Alloc& a) { return a.wstream == id && a.wseq <= seq; });
        return settle_host_reads([=](uint64_t st, bool, uint64_t s) { return st == id && s <= seq; });
    }
    return kSuccess;
}

API int cuEventElapsedTime(float* ms, uintptr_t a, uintptr_t b) {
    CTX;
    Event* ea = reinterpret_cast<Event*>(a);
    Event* eb = reinterpret_cast<Event*>(b);
    if (!g_events.count(ea) || !g_events.count(eb)) {
        return fail(kInvalidHandle, "cuEventElapsedTime: not an event");
    }
    if (!ea->recorded || !eb->recorded) {
        return fail(kInvalidHandle, "cuEventElapsedTime: event not recorded");
    }
    if ((ea->flags | eb->flags) & 2) {
        return fail(kInvalidHandle, "cuEventElapsedTime: event created with CU_EVENT_DISABLE_TIMING");
    }
    *ms = std::chrono::duration<float, std::milli>(eb->t - ea->t).count();
    return kSuccess;
}

// Module images come from nvrtc.cc:
//   FAKECUDA-IMAGE 1\nkind cubin|ptx\narch N\nnvrtc MAJOR MINOR\nsource HASH NAME\n
API int cuModuleLoadData(uintptr_t* m, const void* image) {
    CTX;
    const char* img = static_cast<const char*>(image);
    char kind[16] = {0}, name[256] = {0};
    int arch = 0, maj = 0, mnr = 0;
    unsigned long long hash = 0;
    if (!img || sscanf(img, "FAKECUDA-IMAGE 1\nkind %15s\narch %d\nnvrtc %d %d\nsource %llx %255s", kind, &arch, &maj, &mnr, &hash, name) != 6) {
        return fail(kInvalidImage, "cuModuleLoadData: not an image of the emulated NVRTC");
    }
    int dev = profile().major * 10 + profile().minor;
    int drv = 0;
    cuDriverGetVersion(&drv);
    if (maj > drv / 1000) {
        return fail(kUnsupportedPTXVersion, "cuModuleLoadData: %s from NVRTC %d.%d, newer than the driver (CUDA %d.%d)", kind, maj, mnr,
                    drv / 1000, drv % 1000 / 10);
    }
    if (strcmp(kind, "cubin") == 0 && arch != dev) {
        return fail(kNoBinaryForGPU, "cuModuleLoadData: CUBIN for sm_%d on a sm_%d device", arch, dev);
    }
    if (strcmp(kind, "ptx") == 0 && arch > dev) {
        return fail(kNoBinaryForGPU, "cuModuleLoadData: PTX for compute_%d on a sm_%d device", arch, dev);
    }
    if (!sources().count(hash)) {
        return fail(kInvalidImage, "cuModuleLoadData: source %s (%016llx) was not compiled into the emulated device (rebuild it)", name, hash);
    }
    Module* mod = new Module{hash};
    g_modules.insert(mod);
    *m = reinterpret_cast<uintptr_t>(mod);
    return kSuccess;
}

API int cuModuleUnload(uintptr_t h) {
    CTX;
    Module* m = reinterpret_cast<Module*>(h);
    if (!g_modules.erase(m)) {
        return fail(kInvalidHandle, "cuModuleUnload: not a module");
    }
    delete m;
    return kSuccess;
}

API int cuModuleGetFunction(uintptr_t* f, uintptr_t h, const char* name) {
    CTX;
    Module* m = reinterpret_cast<Module*>(h);
    if (!g_modules.count(m)) {
        return fail(kInvalidHandle, "cuModuleGetFunction: not a module");
    }
    for (KernelInfo& k : kernels()) {
        if (k.source == m->source && strcmp(k.name, name) == 0) {
            *f = reinterpret_cast<uintptr_t>(&k);
            return kSuccess;
        }
    }
    return fail(kNotFound, "cuModuleGetFunction: no kernel %s in the module (extern \"C\" __global__ missing?)", name);
}

API int cuLaunchKernel(uintptr_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                       uintptr_t s, void** params, void** extra) {
    CTX;
    const KernelInfo* k = nullptr;
    for (KernelInfo& x : kernels()) {
        if (reinterpret_cast<uintptr_t>(&x) == f) {
            k = &x;
        }
    }
    if (!k) {
        return fail(kInvalidHandle, "cuLaunchKernel: not a function handle");
    }
    const Profile& p = profile();
    unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    for (int i = 0; i < 3; i++) {
        if (g[i] == 0 || b[i] == 0 || g[i] > (unsigned)p.max_grid[i] || b[i] > (unsigned)p.max_block[i]) {
            return fail(kInvalidValue, "cuLaunchKernel %s: grid (%u,%u,%u) block (%u,%u,%u) outside the limits of %s", k->name, gx, gy, gz, bx,
                        by, bz, p.name);
        }
    }
    if ((unsigned long long)bx * by * bz > (unsigned long long)p.max_threads_per_block) {
        return fail(kInvalidValue, "cuLaunchKernel %s: %llu threads per block (max %d)", k->name, (unsigned long long)bx * by * bz,
                    p.max_threads_per_block);
    }
    if (shmem > (unsigned)p.max_shared_per_block) {
        return fail(kInvalidValue, "cuLaunchKernel %s: %u bytes of dynamic shared memory (max %d)", k->name, shmem, p.max_shared_per_block);
    }
    if (extra != nullptr) {
        return fail(kNotSupported, "cuLaunchKernel %s: `extra` parameters are not emulated", k->name);
    }
    if (k->nargs > 0 && params == nullptr) {
        return fail(kInvalidValue, "cuLaunchKernel %s: %d arguments expected, kernelParams is null", k->name, k->nargs);
    }
    // The driver copies the argument values at launch.
    auto vals = std::make_shared<std::vector<uint64_t>>(k->nargs > 0 ? k->nargs : 1);
    std::vector<Access> acc;
    for (int i = 0; i < k->nargs; i++) {
        memcpy(&(*vals)[i], params[i], k->size[i]);
        if (k->ptr[i]) {
            uint64_t ptr = (*vals)[i];
            if (ptr == 0) {
                continue;
            }
            Alloc* a = find_alloc(ptr);
            if (!a) {
                g_sticky = kIllegalAddress;
                return fail(kIllegalAddress, "cuLaunchKernel %s: argument %d (0x%llx) is not device memory", k->name, i,
                            (unsigned long long)ptr);
            }
            acc.push_back({ptr, a->base + a->size - ptr, !k->constptr[i]});
        }
    }
    std::string what = std::string("kernel ") + k->name;
    return enqueue(s, what, acc, [=] {
        std::vector<void*> ptrs(k->nargs > 0 ? k->nargs : 1);
        for (int i = 0; i < k->nargs; i++) {
            ptrs[i] = &(*vals)[i];
        }
        tl_gridDim = {gx, gy, gz};
        tl_blockDim = {bx, by, bz};
        for (unsigned z = 0; z < gz; z++) {
            for (unsigned y = 0; y < gy; y++) {
                for (unsigned x = 0; x < gx; x++) {
                    tl_blockIdx = {x, y, z};
                    for (unsigned tz = 0; tz < bz; tz++) {
                        for (unsigned ty = 0; ty < by; ty++) {
                            for (unsigned tx = 0; tx < bx; tx++) {
                                tl_threadIdx = {tx, ty, tz};
                                k->invoke(k->fn, ptrs.data());
                            }
                        }
                    }
                }
            }
        }
    });
}

API int cuStreamBeginCapture_v2(uintptr_t h, int mode) {
    CTX;
    Stream* s = stream_of(h);
    if (!s) {
        return fail(kInvalidHandle, "cuStreamBeginCapture: not a stream");
    }
    if (s->id == 0) {
        return fail(kCaptureUnsupported, "cuStreamBeginCapture: the legacy default stream cannot be captured");
    }
    if (s->capturing) {
        return fail(kIllegalState, "cuStreamBeginCapture: stream #%llu is already capturing", (unsigned long long)s->id);
    }
    if (mode < 0 || mode > 2) {
        return fail(kInvalidValue, "cuStreamBeginCapture: mode %d", mode);
    }
    s->capturing = true;
    s->invalidated = false;
    s->mode = mode;
    s->thread = std::this_thread::get_id();
    s->graph = new Graph;
    return kSuccess;
}

API int cuStreamEndCapture(uintptr_t h, uintptr_t* g) {
    CTX;
    Stream* s = stream_of(h);
    if (!s || !s->capturing) {
        return fail(kIllegalState, "cuStreamEndCapture: stream is not capturing");
    }
    if (s->mode == 1 && s->thread != std::this_thread::get_id()) {
        return fail(908, "cuStreamEndCapture: thread-local capture ended from another thread");
    }
    s->capturing = false;
    Graph* graph = s->graph;
    s->graph = nullptr;
    if (s->invalidated) {
        delete graph;
        *g = 0;
        return fail(kCaptureInvalidated, "cuStreamEndCapture: the capture was invalidated by an earlier call");
    }
    g_graphs.insert(graph);
    *g = reinterpret_cast<uintptr_t>(graph);
    return kSuccess;
}

API int cuGraphInstantiateWithFlags(uintptr_t* exec, uintptr_t g, unsigned long long flags) {
    CTX;
    Graph* graph = reinterpret_cast<Graph*>(g);
    if (!g_graphs.count(graph)) {
        return fail(kInvalidHandle, "cuGraphInstantiateWithFlags: not a graph");
    }
    if (flags != 0) {
        return fail(kNotSupported, "cuGraphInstantiateWithFlags: flags %llu are not emulated", flags);
    }
    Graph* e = new Graph(*graph);
    g_execs.insert(e);
    *exec = reinterpret_cast<uintptr_t>(e);
    return kSuccess;
}

API int cuGraphLaunch(uintptr_t exec, uintptr_t h) {
    CTX;
    Graph* e = reinterpret_cast<Graph*>(exec);
    if (!g_execs.count(e)) {
        return fail(kInvalidHandle, "cuGraphLaunch: not an executable graph");
    }
    Stream* s = stream_of(h);
    if (!s) {
        return fail(kInvalidHandle, "cuGraphLaunch: not a stream");
    }
    if (s->capturing) {
        return fail(kNotSupported, "cuGraphLaunch into a capturing stream is not emulated");
    }
    for (const Op& op : e->ops) {
        if (int r = run_now(s, op.what + " (graph replay)", op.acc, op.run)) {
            return r;
        }
    }
    return kSuccess;
}

API int cuGraphExecDestroy(uintptr_t exec) {
    CTX;
    Graph* e = reinterpret_cast<Graph*>(exec);
    if (!g_execs.erase(e)) {
        return fail(kInvalidHandle, "cuGraphExecDestroy: not an executable graph");
    }
    delete e;
    return kSuccess;
}

API int cuGraphDestroy(uintptr_t g) {
    CTX;
    Graph* graph = reinterpret_cast<Graph*>(g);
    if (!g_graphs.erase(graph)) {
        return fail(kInvalidHandle, "cuGraphDestroy: not a graph");
    }
    delete graph;
    return kSuccess;
}

API int cuGetErrorName(int code, const char** s) {
    const char* n = result_name(code);
    if (!n) {
        *s = nullptr;
        return kInvalidValue;
    }
    *s = n;
    return kSuccess;
}

// cuGetErrorString gives the driver's description and, for the calling
// thread's last failure with this code, what the emulation found.
API int cuGetErrorString(int code, const char** s) {
    const char* d = result_desc(code);
    if (!d) {
        *s = nullptr;
        return kInvalidValue;
    }
    tl_msg = d;
    if (code == tl_last_code && !tl_last_detail.empty()) {
        tl_msg += "; fakecuda: " + tl_last_detail;
    }
    *s = tl_msg.c_str();
    return kSuccess;
}

// fakecuda_report returns every error and violation so far, one per line.
API const char* fakecuda_report() {
    static std::string copy;
    std::lock_guard<std::mutex> l(g_report_mu);
    copy = g_report;
    return copy.c_str();
}

// fakecuda_reset_report empties the report.
API void fakecuda_reset_report() {
    std::lock_guard<std::mutex> l(g_report_mu);
    g_report.clear();
}
