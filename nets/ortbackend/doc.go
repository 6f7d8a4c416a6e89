// Package ortbackend runs ONNX policy-value models in ONNX Runtime, loaded
// at run time through purego (no cgo), and registers the nets backend
// "ort":
//
//	--backend ort:model=FILE.onnx[,provider=cpu|cuda|tensorrt,device=0,threads=N,spin=false]
//
// Import it for its side effect where the backend should be offered:
//
//	import _ "github.com/canopy-go/canopy/nets/ortbackend"
//
// It is for: inference of an ONNX model with one float32 input [B, ...]
// (the game's observation) and two outputs, policy logits [B, A] and a
// value [B] or [B, 1] in [-1, 1] (a value head ending in tanh; a value
// outside is an error, ErrValueRange), or [B, P] when the network it
// stands in for has a per-player value head (nets.Config.ValuePlayers;
// ValueSize says P), batch-first like every nets.Backend, on ONNX
// Runtime's CPU kernels or its CUDA and TensorRT execution providers. It
// is not for: reading or writing ONNX files (package nets/onnx), Canopy's
// own networks (nets, nets/cudabackend), or training.
//
// # How a model reaches the backend
//
// A nets.BackendFactory receives a *nets.Net, Canopy's network; ONNX
// Runtime needs the model file. The spec names it: ort:model=FILE.onnx.
// The net the caller resolved (--net, default the game's) then stands for
// the game's shapes only: the model must take its input size and give its
// policy size, which is how a model for another game or encoding is
// refused, and the net's weights are not used. This keeps the wiring to
// one option and no change to nets.OpenNet; a model imported into Canopy
// (`canopy net import`) can instead run on any Canopy backend. A spec
// without model is a bad option whose message says how to make one
// (`canopy net export NET --onnx OUT.onnx`). Paths cannot hold ','
// (the spec separator).
//
// # Library
//
// Load looks for libonnxruntime.so.1 (then libonnxruntime.so) in
// $CANOPY_ORT_LIB (a file or a folder; when set, nothing else is tried),
// then .cache/ort/ in the current directory and each parent, canopy/ort
// in the user's cache folder (where `make ort` puts the CPU build carried
// by npm's onnxruntime-node package), the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache),
// $ORT_HOME/lib, $ONNXRUNTIME_DIR/lib, /usr/local/lib,
// /usr/lib/x86_64-linux-gnu, /usr/lib and /opt/onnxruntime/lib. None
// found: the backend is unavailable, in one line saying what to set.
// OrtGetApiBase()->GetApi(15) gives the OrtApi table; a library older than
// ONNX Runtime 1.15 returns NULL and is refused, naming its version. The
// indices of the table entries called here are a Go table (apiIndex) with
// the version each appeared in, counted from the published header
// (onnxruntime_c_api.h, API 24); the table only grows at its end. A loaded
// library is never unloaded.
//
// # Providers
//
// cpu is every build's. cuda and tensorrt are appended with the V2
// provider-options API (device_id = device; TensorRT gets one
// optimisation profile for batches 1..MaxBatch, so that varying batches
// do not rebuild its engine, and CUDA behind it for the nodes it leaves;
// untested here, without a GPU) when the library lists them
// (GetAvailableProviders) and their shared libraries, CUDA and a GPU are
// there; otherwise opening is unavailable with ONNX Runtime's reason. The
// npm CPU build lists CUDA and TensorRT but lacks
// libonnxruntime_providers_shared.so: unavailable. Inputs and outputs
// stay in host memory (ONNX Runtime copies them to the device).
//
// # Auto
//
// "ort" registers with priority -10, below cpu, so "auto" never opens it:
// auto has no model file to give it, and it must not replace Canopy's own
// CPU backend unless measured faster (docs/BENCHMARKS.md has ORT-CPU beside
// Canopy's CPU backend on the same network shape).
//
// # Memory
//
// Evaluate makes the input, policy and value tensors over the caller's
// slices (CreateTensorWithDataAsOrtValue, pre-allocated outputs): no
// copies. Go's collector does not move heap objects, but a goroutine
// stack moves when it grows; the slices are pinned with runtime.Pinner
// for the duration of Run (pinning also keeps them alive), and every
// uintptr(unsafe.Pointer(&x)) handed to C is written in the argument
// list of a go:uintptrescapes function (ccall, Lib.call), which moves x to
// the heap and keeps it alive for the call. Arrays passed to C (names,
// values) hold C pointers only.
//
// # Threads and concurrency
//
// Each backend owns one session with its own intra-op pool of threads=N
// threads (default min(GOMAXPROCS, 8)) and one inter-op thread; nothing is
// process-wide, unlike the cpu backend's threads. The pool's threads park
// between runs unless spin=true (ONNX Runtime's own default is to spin:
// on a shared 2-core machine that cost about twice the CPU per evaluation
// at 2 threads, docs/BENCHMARKS.md, and the searches beside the backend
// need the cores). A Backend is safe for
// concurrent use: Evaluate calls are serialised. Close releases the
// session, its options, the memory info, the names and the environment
// (ONNX Runtime's threads end with the session); no finalizers are
// relied upon, and Evaluate after Close is an error.
//
// # Errors
//
// A failing call's OrtStatus becomes an *Error (call, OrtErrorCode name,
// message) and is released.
package ortbackend
