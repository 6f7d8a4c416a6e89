//go:build !linux && amd64

package kernels

// amxPermit reports false: the AMX tile state is requested on Linux only.
func amxPermit() bool { return false }
