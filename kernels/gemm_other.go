//go:build !amd64

package kernels

// platformImpls returns the SIMD implementations of this platform: none, so
// every kernel runs the portable Go code.
func platformImpls() (main, variants []*impl) { return nil, nil }

// sum9Vec is never called here: no implementation sets impl.sum9.
func sum9Vec(dst *float32, taps *[9]*float32, n int) { panic("kernels: no SIMD sum9 on this platform") }

// finishVec is never called here: no implementation sets impl.sum9.
func finishVec(out, y, bias, res *float32, lo float32, n int) {
	panic("kernels: no SIMD finish on this platform")
}
