package main

// The canopy command can evaluate networks on an NVIDIA GPU when one is
// usable: the cuda backend registers with a higher priority than cpu and
// `--backend auto` falls back to cpu (with the reason) when no driver,
// NVRTC or cuBLAS library is found. No cgo is involved; the libraries are
// loaded at run time.
import _ "github.com/canopy-go/canopy/nets/cudabackend"
