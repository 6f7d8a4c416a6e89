//go:build !(darwin || linux)

package ortbackend

import (
	"errors"
	"runtime"
)

var errUnsupportedOS = errors.New("ortbackend: library loading is not implemented on " + runtime.GOOS)

func dlopen(string) (uintptr, error)         { return 0, errUnsupportedOS }
func dlsym(uintptr, string) (uintptr, error) { return 0, errUnsupportedOS }
func ccall(uintptr, ...uintptr) uintptr      { panic(errUnsupportedOS) }
