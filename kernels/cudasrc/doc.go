// Package cudasrc embeds the CUDA C++ kernel sources of Canopy's GPU
// backend (the *.cu files in this directory), compiled at run time by NVRTC
// through package cuda.
//
// It is for: shipping the kernel text inside a CGO_ENABLED=0 binary. It is
// not for: compiling or launching them (package cuda), or the network
// (package nets/cudabackend). The kernels use no headers (NVRTC needs no
// CUDA include directory), only extern "C" names, and grid-stride loops, so
// any grid size covers any problem size.
//
// Layouts follow package kernels: activations NHWC, the im2col matrix of a
// 3x3 same convolution has row (n*H+y)*W+x and column (kh*3+kw)*C+c, and
// half-precision values are stored as raw 16-bit patterns (unsigned short).
package cudasrc
