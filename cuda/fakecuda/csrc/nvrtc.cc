// nvrtc.cc: the emulated NVRTC (libnvrtc.so.MAJOR), built once per
// emulated version with -DFAKE_NVRTC_MAJOR and -DFAKE_NVRTC_MINOR.
//
// "Compiling" checks the options as NVRTC does (a supported
// --gpu-architecture, known flags), needs libnvrtc-builtins.so.MAJOR.MINOR
// to be loadable by the dynamic loader (as the real NVRTC does when it
// compiles; Canopy loads it from its library folder first), and returns an
// image that names the source by its FNV-1a hash and the target. The
// emulated driver accepts the image when that source was compiled into it
// as host C++ (shim.h) and runs those host functions.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fake.h"

#ifndef FAKE_NVRTC_MAJOR
#define FAKE_NVRTC_MAJOR 12
#endif
#ifndef FAKE_NVRTC_MINOR
#define FAKE_NVRTC_MINOR 4
#endif

namespace {

enum : int { kOK = 0, kInvalidInput = 3, kInvalidProgram = 4, kInvalidOption = 5, kCompilation = 6, kBuiltin = 7 };

#if FAKE_NVRTC_MAJOR >= 13
const int kArchs[] = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
#else
const int kArchs[] = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90};
#endif

struct Program {
    std::string src, name, log, image;
    bool compiled = false, cubin = false;
};

bool supported(int arch) {
    for (int a : kArchs) {
        if (a == arch) {
            return true;
        }
    }
    return false;
}

}  // namespace

#define API extern "C" __attribute__((visibility("default")))

API int nvrtcVersion(int* major, int* minor) {
    *major = FAKE_NVRTC_MAJOR;
    *minor = FAKE_NVRTC_MINOR;
    return kOK;
}

API int nvrtcGetNumSupportedArchs(int* n) {
    *n = sizeof kArchs / sizeof kArchs[0];
    return kOK;
}

API int nvrtcGetSupportedArchs(int* out) {
    memcpy(out, kArchs, sizeof kArchs);
    return kOK;
}

API int nvrtcCreateProgram(Program** p, const char* src, const char* name, int nheaders, const char* const*, const char* const*) {
    if (!p || !src) {
        return kInvalidInput;
    }
    if (nheaders != 0) {
        return kInvalidInput;  // headers are not emulated
    }
    *p = new Program{src, name ? name : "default_program"};
    return kOK;
}

API int nvrtcDestroyProgram(Program** p) {
    if (!p || !*p) {
        return kInvalidProgram;
    }
    delete *p;
    *p = nullptr;
    return kOK;
}

API int nvrtcCompileProgram(Program* p, int nopts, const char* const* opts) {
    if (!p) {
        return kInvalidProgram;
    }
    p->log.clear();
    int arch = -1;
    bool cubin = false;
    for (int i = 0; i < nopts; i++) {
        const char* o = opts[i];
        const char* v = nullptr;
        if (strncmp(o, "--gpu-architecture=", 19) == 0) {
            v = o + 19;
        } else if (strncmp(o, "-arch=", 6) == 0) {
            v = o + 6;
        }
        if (v) {
            int n = 0;
            if (sscanf(v, "sm_%d", &n) == 1) {
                cubin = true;
            } else if (sscanf(v, "compute_%d", &n) == 1) {
                cubin = false;
            }
            if (!supported(n)) {
                p->log = std::string("nvrtc: error: invalid value for --gpu-architecture (-arch): ") + v + "\n";
                return kInvalidOption;
            }
            arch = n;
            continue;
        }
        if (strcmp(o, "--std=c++17") == 0 || strcmp(o, "--std=c++14") == 0 || strcmp(o, "--fmad=true") == 0 ||
            strcmp(o, "--fmad=false") == 0 || strcmp(o, "--use_fast_math") == 0 || strcmp(o, "-lineinfo") == 0) {
            continue;
        }
        p->log = std::string("nvrtc: error: unrecognized option ") + o + "\n";
        return kInvalidOption;
    }
    if (arch < 0) {
        arch = 52;
    }
    char builtins[64];
    snprintf(builtins, sizeof builtins, "libnvrtc-builtins.so.%d.%d", FAKE_NVRTC_MAJOR, FAKE_NVRTC_MINOR);
    if (!dlopen(builtins, RTLD_NOW)) {
        p->log = std::string("nvrtc: error: failed to open ") + builtins + ".\n  Make sure that " + builtins + " is installed correctly.\n";
        return kBuiltin;
    }
    if (p->src.find("__global__") == std::string::npos) {
        p->log = p->name + ": warning: no __global__ function\n";
    }
    char img[512];
    snprintf(img, sizeof img, "FAKECUDA-IMAGE 1\nkind %s\narch %d\nnvrtc %d %d\nsource %016llx %s\n", cubin ? "cubin" : "ptx", arch,
             FAKE_NVRTC_MAJOR, FAKE_NVRTC_MINOR, (unsigned long long)fakecuda::fnv1a64(p->src.data(), p->src.size()),
             p->name.c_str());
    p->image = img;
    p->cubin = cubin;
    p->compiled = true;
    return kOK;
}

API int nvrtcGetProgramLogSize(Program* p, size_t* n) {
    if (!p) {
        return kInvalidProgram;
    }
    *n = p->log.size() + 1;
    return kOK;
}

API int nvrtcGetProgramLog(Program* p, char* out) {
    if (!p) {
        return kInvalidProgram;
    }
    memcpy(out, p->log.c_str(), p->log.size() + 1);
    return kOK;
}

// A real NVRTC gives PTX only for a virtual target and CUBIN only for a
// real one; asking for the other is an error here, so that Canopy's choice
// of target and output stays consistent.
static int image(Program* p, bool want_cubin, size_t* n, char* out) {
    if (!p || !p->compiled || p->cubin != want_cubin) {
        return kInvalidProgram;
    }
    size_t len = p->image.size() + 1;  // NUL-terminated, like PTX
    if (n) {
        *n = len;
    }
    if (out) {
        memcpy(out, p->image.c_str(), len);
    }
    return kOK;
}

API int nvrtcGetPTXSize(Program* p, size_t* n) { return image(p, false, n, nullptr); }
API int nvrtcGetPTX(Program* p, char* out) { return image(p, false, nullptr, out); }
API int nvrtcGetCUBINSize(Program* p, size_t* n) { return image(p, true, n, nullptr); }
API int nvrtcGetCUBIN(Program* p, char* out) { return image(p, true, nullptr, out); }
