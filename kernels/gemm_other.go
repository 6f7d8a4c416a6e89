//go:build !amd64

package kernels

// platformImpls returns the SIMD implementations of this platform: none, so
// every kernel runs the portable Go code.
func platformImpls() (main, variants []*impl) { return nil, nil }

// The assembly helper loops of amd64, which no implementation here uses
// (none sets avx2Loops, avx512Loops or bf16).

func sum9AVX2(dst *float32, taps *[9]*float32, n int)                 { noSIMD() }
func winoInAVX2(v *float32, vs int, d *float32, ds int, n int)        { noSIMD() }
func winoGatherInAVX2(v *float32, vs int, src *[16]*float32, n int)   { noSIMD() }
func winoGatherInAVX512(v *float32, vs int, src *[16]*float32, n int) { noSIMD() }
func winoOutStoreAVX2(m *float32, ms int, out, res *[4]*float32, bias *float32, lo float32, n int) {
	noSIMD()
}
func winoOutStoreAVX512(m *float32, ms int, out, res *[4]*float32, bias *float32, lo float32, n int) {
	noSIMD()
}
func toBF16AVX512(dst *uint16, src *float32, n int)                               { noSIMD() }
func pairRowsBF16AVX512(dst *uint16, src *float32, n int, pairs int, mask uint32) { noSIMD() }
func scaleShiftAVX512(out, x, scale, shift *float32, lo float32, c, rows int) {
	noSIMD()
}
func scaleShiftResAVX512(out, x, res, scale, shift *float32, lo float32, c, rows int) {
	noSIMD()
}
func affine2AVX512(out, d, z, k1, k2, k3 *float32, c, rows int)               { noSIMD() }
func reluSumsAVX512(d, y, z *float32, sd, sdz *float64, c, rows int)          { noSIMD() }
func reluSumsResAVX512(d, y, z, res *float32, sd, sdz *float64, c, rows int)  { noSIMD() }
func reluSumsCopyAVX512(d, y, z, res *float32, sd, sdz *float64, c, rows int) { noSIMD() }
func momentsAVX512(z *float32, shift, s1, s2 *float64, c, rows int)           { noSIMD() }

func scaleShiftAVX2(out, x, scale, shift *float32, lo float32, c, rows int) {
	noSIMD()
}
func scaleShiftResAVX2(out, x, res, scale, shift *float32, lo float32, c, rows int) {
	noSIMD()
}
func affine2AVX2(out, d, z, k1, k2, k3 *float32, c, rows int)               { noSIMD() }
func reluSumsAVX2(d, y, z *float32, sd, sdz *float64, c, rows int)          { noSIMD() }
func reluSumsResAVX2(d, y, z, res *float32, sd, sdz *float64, c, rows int)  { noSIMD() }
func reluSumsCopyAVX2(d, y, z, res *float32, sd, sdz *float64, c, rows int) { noSIMD() }
func momentsAVX2(z *float32, shift, s1, s2 *float64, c, rows int)           { noSIMD() }

func noSIMD() { panic("kernels: no SIMD loops on this platform") }
func winoOutStatsAVX2(m *float32, ms int, out *[4]*float32, keep *[4]uint32, shift, s1, s2 *float32, n int) {
	noSIMD()
}
func winoOutStatsAVX512(m *float32, ms int, out *[4]*float32, keep *[4]uint32, shift, s1, s2 *float32, n int) {
	noSIMD()
}

// The weight gradient's loops (winograd_grad.go).
func winoGradOutAVX2(v *float32, vs int, src *[4]*float32, n int)               { noSIMD() }
func winoGradOutAVX512(v *float32, vs int, src *[4]*float32, n int)             { noSIMD() }
func winoGradOutPairsBF16AVX512(dst *uint16, ds int, src *[8]*float32, n int)   { noSIMD() }
func winoGatherInPairsBF16AVX512(dst *uint16, ds int, src *[32]*float32, n int) { noSIMD() }
func prefetch4(p *[4]*float32, lines int)                                       { noSIMD() }

// The run-of-tiles gathers (winograd.go, transformIn).
func winoGatherTilesAVX2(v *float32, vs int, img *float32, tab *int32, zero *float32, cin, nt int) {
	noSIMD()
}
func winoGatherTilesAVX512(v *float32, vs int, img *float32, tab *int32, zero *float32, cin, nt int) {
	noSIMD()
}
func winoGatherTilesBF16AVX512(v *uint16, vs int, img *float32, tab *int32, zero *float32, cin, nt int) {
	noSIMD()
}

// The run-of-tiles stores (winograd.go, chunk).
func winoStoreTilesAVX2(m *float32, ms int, dst, res *float32, tab *int32, sink, zero, bias *float32, lo float32, cout, nt int) {
	noSIMD()
}
func winoStoreTilesAVX512(m *float32, ms int, dst, res *float32, tab *int32, sink, zero, bias *float32, lo float32, cout, nt int) {
	noSIMD()
}
func winoStatsTilesAVX2(m *float32, ms int, dst *float32, tab *int32, sink, shift, s1, s2 *float32, cout, nt int) {
	noSIMD()
}
func winoStatsTilesAVX512(m *float32, ms int, dst *float32, tab *int32, sink, shift, s1, s2 *float32, cout, nt int) {
	noSIMD()
}

func w34GatherInAVX2(v *float32, vs int, src *[30]*float32, n int)   { noSIMD() }
func w34GatherInAVX512(v *float32, vs int, src *[30]*float32, n int) { noSIMD() }
func w34OutStoreAVX2(m *float32, ms int, out, res *[12]*float32, bias *float32, lo float32, n int) {
	noSIMD()
}
func w34OutStoreAVX512(m *float32, ms int, out, res *[12]*float32, bias *float32, lo float32, n int) {
	noSIMD()
}
func w34OutStatsAVX2(m *float32, ms int, out *[12]*float32, keep *[12]uint32, shift, s1, s2 *float32, n int) {
	noSIMD()
}
func w34OutStatsAVX512(m *float32, ms int, out *[12]*float32, keep *[12]uint32, shift, s1, s2 *float32, n int) {
	noSIMD()
}
func w34GradOutAVX2(v *float32, vs int, src *[12]*float32, n int)   { noSIMD() }
func w34GradOutAVX512(v *float32, vs int, src *[12]*float32, n int) { noSIMD() }
func w34GatherTilesAVX2(v *float32, vs int, img *float32, tab *int32, zero *float32, cin int, nt int, pf *float32, pfl int) {
	noSIMD()
}
func w34GatherTilesAVX512(v *float32, vs int, img *float32, tab *int32, zero *float32, cin int, nt int, pf *float32, pfl int) {
	noSIMD()
}
func w34GatherTilesBF16AVX512(v *float32, vs int, vb *uint16, vbs int, img *float32, tab *int32, zero *float32, cin int, nt int, pf *float32, pfl int) {
	noSIMD()
}
func w34WeightsGAVX2(taps *[3]*float32, t *[5]*float32, n int)      { noSIMD() }
func w34WeightsGAVX512(taps *[3]*float32, t *[5]*float32, n int)    { noSIMD() }
func w34WeightsGTAVX2(t *[3]*float32, u *[6]*float32, n int)        { noSIMD() }
func w34WeightsGTAVX512(t *[3]*float32, u *[6]*float32, n int)      { noSIMD() }
func w34WeightsGradGAVX2(du *[5]*float32, t *[3]*float32, n int)    { noSIMD() }
func w34WeightsGradGAVX512(du *[5]*float32, t *[3]*float32, n int)  { noSIMD() }
func w34WeightsGradGTAVX2(t *[6]*float32, dw *[3]*float32, n int)   { noSIMD() }
func w34WeightsGradGTAVX512(t *[6]*float32, dw *[3]*float32, n int) { noSIMD() }

// amxGemmBF16 is the AMX kernel of amd64; no implementation here sets amx.
func amxGemmBF16(cfg *amxConfig, tasks *amxTask, n, kt, lda, ldb, ldc, flags int) { noSIMD() }
func transposePairsBF16AVX512(dst *uint16, src *float32, ld, n, blocks, ldd int)  { noSIMD() }
func w34GradOutPairsBF16AVX512(dst *uint16, ds int, src *[24]*float32, n int)     { noSIMD() }

// The elementwise loops (elementwise.go).
func axpyAVX512(alpha float32, x, y *float32, n int) { noSIMD() }
func axpyAVX2(alpha float32, x, y *float32, n int)   { noSIMD() }
func dotAVX512(x, y, acc *float32, n int)            { noSIMD() }
func dotAVX2(x, y, acc *float32, n int)              { noSIMD() }
