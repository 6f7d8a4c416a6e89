//go:build darwin || linux

package ortbackend

import "github.com/ebitengine/purego"

// dlopen loads a shared library with RTLD_NOW|RTLD_LOCAL: ONNX Runtime's
// symbols stay out of the global namespace, so a second copy loaded by
// another component of the process cannot bind to this one.
func dlopen(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

func dlsym(lib uintptr, name string) (uintptr, error) { return purego.Dlsym(lib, name) }

// ccall calls the C function at fn with integer and pointer arguments and
// returns its integer or pointer result. It is marked go:uintptrescapes,
// as purego.SyscallN is: a uintptr(unsafe.Pointer(p)) written in the
// argument list of a ccall moves p to the heap (which Go's collector
// never moves) and keeps it alive until the call returns.
//
//go:uintptrescapes
func ccall(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
