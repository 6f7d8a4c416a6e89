//go:build !(darwin || linux)

package cuda

import (
	"errors"
	"runtime"
)

var errUnsupportedOS = errors.New("cuda: library loading is not implemented on " + runtime.GOOS)

func dlopen(string) (uintptr, error)         { return 0, errUnsupportedOS }
func dlsym(uintptr, string) (uintptr, error) { return 0, errUnsupportedOS }
func registerFunc(any, uintptr)              { panic(errUnsupportedOS) }
