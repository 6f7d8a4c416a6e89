//go:build !amd64

package kernels

// platformImpls returns the SIMD implementations of this platform: none, so
// every kernel runs the portable Go code.
func platformImpls() (main, variants []*impl) { return nil, nil }
