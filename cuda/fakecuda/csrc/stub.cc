// stub.cc: a library with nothing Canopy calls, standing in for
// libcublasLt.so.12 (loaded before cuBLAS) and libnvrtc-builtins.so.*
// (loaded by NVRTC when it compiles).
extern "C" __attribute__((visibility("default"))) int fakecuda_stub(void) { return 0; }
