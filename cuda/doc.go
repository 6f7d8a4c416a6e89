// Package cuda binds the CUDA driver API, NVRTC and cuBLAS at run time
// through purego, without cgo: a CGO_ENABLED=0 build links on any machine
// and finds the NVIDIA libraries only when Open is called.
//
// It is for: opening a GPU (Open), running work on it from any goroutine
// (Device.Do executes closures on one OS thread locked to the device's
// primary context), device and pinned host memory, streams, events,
// compiling CUDA C++ with NVRTC (disk-cached per source, architecture,
// driver and NVRTC version), loading modules, launching kernels, capturing
// fixed-shape launch sequences into CUDA graphs, and cuBLAS SGEMM / GemmEx
// for row-major matrices (MapGemm). It is not for: network layers (package
// nets/cudabackend builds the ResNet from these pieces), the kernel sources
// themselves (package kernels/cudasrc embeds them), or multi-GPU scheduling.
//
// # Libraries
//
// Load searches for libcuda.so.1 (driver), libnvrtc.so.{13,12,} and
// libcublas.so.{13,12,} in this order of places: the directories or files
// in CANOPY_CUDA_LIBS (separated by ':' or ','), the dynamic loader's own
// search (LD_LIBRARY_PATH, ld.so.cache), $CUDA_HOME and $CUDA_PATH
// (lib64, lib, targets/x86_64-linux/lib), /usr/local/cuda/lib64,
// /usr/local/cuda-*/lib64 (newest version first), /usr/lib/x86_64-linux-gnu
// and /usr/local/nvidia/lib64. The newest library version found anywhere
// wins, except that an NVRTC whose major version is newer than the
// driver's is passed over for one the driver supports (its output would
// not load); Libs.NVRTCChoice says which was chosen and why. NVRTC's
// libnvrtc-builtins is loaded from NVRTC's own folder, since NVRTC opens
// it by name when compiling and a CANOPY_CUDA_LIBS folder is not on the
// loader's path. When nothing is found the error lists every path tried.
//
// # Streams
//
// Every Stream this package creates is non-blocking: it does not wait for
// the legacy default stream. Synchronous copies run on the legacy stream,
// so CopyHtoD waits until its data is on the device, and CopyDtoH must
// follow a synchronisation of the stream that wrote its source.
//
// # Testing without a GPU
//
// Package cuda/fakecuda builds an emulated device (the driver, NVRTC and
// cuBLAS subsets bound here, with the kernels compiled as host C++) that
// the tests of this package, nets/cudabackend and cmd/gpucheck use where no
// GPU is installed.
//
// Only driver entry points whose ABI has been stable since CUDA 11 are used
// (the _v2 names that cuda.h maps the plain names to, the primary context
// instead of cuCtxCreate, whose CUDA 13 form cuCtxCreate_v4 takes a params
// struct). A driver keeps exporting every older entry point, so these work
// with CUDA 12 and 13 drivers alike.
//
// # Threads
//
// A CUDA context is current per OS thread. Each Device owns one goroutine
// locked to an OS thread with the device's primary context current; Do
// sends a closure there and waits. A *Ctx (the closure's argument) must
// only be used inside that closure. Device methods are safe for concurrent
// use; work from different goroutines is serialised in submission order.
//
// # Errors
//
// Every failing call becomes an *Error naming the API call and the
// library's error name, e.g. "cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY
// (out of memory)".
package cuda
