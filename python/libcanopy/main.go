// Command libcanopy is the C shared library behind the `canopy` Python
// package: a thin cgo shim over package pyapi, built with
//
//	go build -buildmode=c-shared -o python/canopy/libcanopy.so ./python/libcanopy
//
// (make python). Every exported function recovers panics into an error
// string, takes and returns integer handles (never Go pointers), and
// reads or writes only memory that Python owns (numpy arrays), during
// the call. The one package-level variable, lib, is the handle table the
// C entry points need: a C caller has no other way to reach it.
//
// Error convention: a function that fails stores a C string (malloc'd;
// the caller frees it with canopy_free) in *err, of the form
// "Kind: message" where Kind is the Python exception to raise.
package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"os"
	"runtime"
	"time"
	"unsafe"

	"github.com/canopy-go/canopy/pyapi"
)

var lib = pyapi.NewLibrary()

// init gives the Go runtime one P more than it would take (unless the
// user set GOMAXPROCS): a search keeps GOMAXPROCS-1 workers
// (pyapi's default), so the P left over is there for the Python
// thread's calls into Go and the batcher consumers they wake, and the
// tree work still has one worker per core. Without it, a Python call
// into Go waited for a busy worker to be preempted (up to 10ms) between
// most batches (docs/BENCHMARKS.md, "Python API").
func init() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	}
}

func main() {}

// fail stores err in *errp.
func fail(errp **C.char, err error) {
	if errp != nil && err != nil {
		*errp = C.CString(err.Error())
	}
}

// guard recovers a panic into *errp; deferred by every export.
func guard(errp **C.char) {
	if v := recover(); v != nil {
		fail(errp, pyapi.Recovered(v))
	}
}

// buffers views Python's n buffers (addresses and byte lengths).
func buffers(ptrs *unsafe.Pointer, lens *C.longlong, n C.longlong) [][]byte {
	if n <= 0 {
		return nil
	}
	ps := unsafe.Slice(ptrs, int(n))
	ls := unsafe.Slice(lens, int(n))
	out := make([][]byte, n)
	for i := range out {
		if ps[i] != nil && ls[i] > 0 {
			out[i] = unsafe.Slice((*byte)(ps[i]), int(ls[i]))
		}
	}
	return out
}

// cbytes returns b as a malloc'd C string (the caller frees it).
func cbytes(b []byte) *C.char {
	p := C.malloc(C.size_t(len(b) + 1))
	s := unsafe.Slice((*byte)(p), len(b)+1)
	copy(s, b)
	s[len(b)] = 0
	return (*C.char)(p)
}

//export canopy_free
func canopy_free(p *C.char) { C.free(unsafe.Pointer(p)) }

//export canopy_call
func canopy_call(req *C.char, n C.longlong, errp **C.char) (out *C.char) {
	defer guard(errp)
	b, err := lib.Call(C.GoBytes(unsafe.Pointer(req), C.int(n)))
	if err != nil {
		fail(errp, err)
		return nil
	}
	return cbytes(b)
}

//export canopy_open
func canopy_open(req *C.char, n C.longlong, ptrs *unsafe.Pointer, lens *C.longlong, nbufs C.longlong, info **C.char, errp **C.char) (h C.longlong) {
	defer guard(errp)
	id, js, err := lib.Open(C.GoBytes(unsafe.Pointer(req), C.int(n)), buffers(ptrs, lens, nbufs))
	if err != nil {
		fail(errp, err)
		return -1
	}
	*info = cbytes(js)
	return C.longlong(id)
}

//export canopy_step
func canopy_step(h C.longlong, errp **C.char) (rc C.int) {
	defer guard(errp)
	if err := lib.Step(int64(h)); err != nil {
		fail(errp, err)
		return -1
	}
	return 0
}

//export canopy_wait
func canopy_wait(h C.longlong, timeoutMs C.longlong, errp **C.char) (rc C.longlong) {
	defer guard(errp)
	ev, err := lib.Wait(int64(h), time.Duration(timeoutMs)*time.Millisecond)
	if err != nil {
		fail(errp, err)
		return -1
	}
	return C.longlong(ev)
}

//export canopy_submit
func canopy_submit(h C.longlong, errp **C.char) (rc C.int) {
	defer guard(errp)
	if err := lib.Submit(int64(h)); err != nil {
		fail(errp, err)
		return -1
	}
	return 0
}

//export canopy_exchange
func canopy_exchange(h C.longlong, op *C.char, args *C.char, n C.longlong, ptrs *unsafe.Pointer, lens *C.longlong, nbufs C.longlong, errp **C.char) (out *C.char) {
	defer guard(errp)
	b, err := lib.Exchange(int64(h), C.GoString(op), C.GoBytes(unsafe.Pointer(args), C.int(n)), buffers(ptrs, lens, nbufs))
	if err != nil {
		fail(errp, err)
		return nil
	}
	return cbytes(b)
}

//export canopy_close_all
func canopy_close_all() {
	defer func() { _ = recover() }()
	lib.CloseAll()
}
