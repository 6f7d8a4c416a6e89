//go:build amd64

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/canopy-go/canopy/internal/cputime"
)

// BenchmarkMicroKernel runs each micro-kernel on operands that stay in L1,
// measuring its peak GFLOP/s.
func BenchmarkMicroKernel(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const k = 128
	a := randSlice(r, 16*k)
	bb := randSlice(r, k*64)
	c := make([]float32, 16*64)
	for _, ts := range []*tileSet{tiles6x16AVX2, tiles8x32AVX512, tiles6x64AVX512, tiles8x48AVX512} {
		if ts.nr > 16 && lookup("avx512") == nil || lookup("avx2") == nil {
			continue
		}
		b.Run(fmt.Sprintf("%dx%d", ts.mr, ts.nr), func(b *testing.B) {
			cpu0 := cputime.Seconds()
			for b.Loop() {
				for range 100 {
					ts.kern(k, &a[0], k, &bb[0], ts.nr, &c[0], ts.nr, 1, nil, nil, 0, 0)
				}
			}
			reportFlops(b, 2*float64(ts.mr*ts.nr*k*100), cpu0)
		})
	}
}

// BenchmarkFMAPeak measures the practical FMA peak of one core (12
// independent FMA chains, no memory operands): the yardstick for the GEMM
// numbers.
func BenchmarkFMAPeak(b *testing.B) {
	for _, c := range []struct {
		name  string
		lanes int
		f     func(int)
	}{{"avx2", 8, fmaPeakAVX2}, {"avx512", 16, fmaPeakAVX512}} {
		if lookup(c.name) == nil {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			const n = 100000
			cpu0 := cputime.Seconds()
			for b.Loop() {
				c.f(n)
			}
			reportFlops(b, float64(n*12*2*c.lanes), cpu0)
		})
	}
}

// BenchmarkDPBF16Peak is BenchmarkFMAPeak for VDPBF16PS (12 independent
// chains; each instruction does two multiply-adds per float32 lane).
func BenchmarkDPBF16Peak(b *testing.B) {
	if avx512Impl.bf16 == nil {
		b.Skip("this CPU has no AVX-512 BF16")
	}
	const n = 100000
	cpu0 := cputime.Seconds()
	for b.Loop() {
		dpbf16Peak(n)
	}
	reportFlops(b, float64(n*12*4*16), cpu0)
}
