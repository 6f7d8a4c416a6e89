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

// winoInVec and winoOutVec are never called here: no implementation sets
// impl.sum9.
func winoInVec(v *float32, vs int, d *float32, ds int, n int) {
	panic("kernels: no SIMD Winograd transform on this platform")
}

func winoOutVec(y *float32, ys int, m *float32, ms int, n int) {
	panic("kernels: no SIMD Winograd transform on this platform")
}

// winoGatherInVec is never called here: no implementation sets impl.sum9.
func winoGatherInVec(v *float32, vs int, src *[16]*float32, n int) {
	panic("kernels: no SIMD Winograd transform on this platform")
}

// The AVX-512 Winograd loops are never called here: no implementation
// sets impl.wino512.
func winoGatherInVec512(v *float32, vs int, src *[16]*float32, n int) {
	panic("kernels: no AVX-512 on this platform")
}

func winoGatherInBF16Vec512(v *uint16, vs int, src *[16]*float32, n int) {
	panic("kernels: no AVX-512 on this platform")
}

func winoOutVec512(y *float32, ys int, m *float32, ms int, n int) {
	panic("kernels: no AVX-512 on this platform")
}
