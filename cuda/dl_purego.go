//go:build darwin || linux

package cuda

import "github.com/ebitengine/purego"

// dlopen loads a shared library with RTLD_NOW|RTLD_GLOBAL (global, so that
// cuBLAS finds the cuBLASLt loaded before it).
func dlopen(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

func dlsym(lib uintptr, name string) (uintptr, error) { return purego.Dlsym(lib, name) }

func registerFunc(fptr any, sym uintptr) { purego.RegisterFunc(fptr, sym) }
