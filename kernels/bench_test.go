package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/canopy-go/canopy/internal/cputime"
)

// convShapes are the GEMMs of 3x3 convolutions in the game networks:
// M = batch x cells (Connect Four 42 cells, Sequence 100), K = 9 x Cin,
// N = Cout.
var convShapes = []struct {
	name    string
	m, n, k int
}{
	{"c4/b1/64", 42, 64, 576},
	{"c4/b16/64", 42 * 16, 64, 576},
	{"c4/b256/64", 42 * 256, 64, 576},
	{"seq/b1/64", 100, 64, 576},
	{"seq/b16/64", 100 * 16, 64, 576},
	{"seq/b256/64", 100 * 256, 64, 576},
	{"c4/b1/128", 42, 128, 1152},
	{"c4/b16/128", 42 * 16, 128, 1152},
	{"c4/b256/128", 42 * 256, 128, 1152},
	{"seq/b1/128", 100, 128, 1152},
	{"seq/b16/128", 100 * 16, 128, 1152},
	{"seq/b256/128", 100 * 256, 128, 1152},
}

func benchNames() []string {
	names := Available()
	for _, v := range variants {
		names = append(names, v.name)
	}
	return names
}

// BenchmarkConvGemm measures GemmBiasAct (bias + ReLU, the inference path)
// on convolution shapes for every implementation with 1 and 2 threads, in
// GFLOP/s (2*M*N*K per call).
func BenchmarkConvGemm(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, s := range convShapes {
		a := randSlice(r, s.m*s.k)
		w := randSlice(r, s.k*s.n)
		bias := randSlice(r, s.n)
		c := make([]float32, s.m*s.n)
		for _, name := range benchNames() {
			for _, th := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/t%d", name, s.name, th), func(b *testing.B) {
					restore, err := Use(name)
					if err != nil {
						b.Fatal(err)
					}
					defer restore()
					prev := SetThreads(th)
					defer SetThreads(prev)
					b.ReportAllocs()
					cpu0 := cputime.Seconds()
					for b.Loop() {
						GemmBiasAct(s.m, s.n, s.k, a, s.k, w, s.n, bias, nil, true, c, s.n)
					}
					reportFlops(b, 2*float64(s.m*s.n*s.k), cpu0)
				})
			}
		}
	}
}

// reportFlops reports GFLOP/s (wall clock) and GFLOP/cpu-s (per CPU second,
// see cpuSeconds) for b.N calls of flops each, cpu0 being cputime.Seconds() before
// the loop.
func reportFlops(b *testing.B, flops float64, cpu0 float64) {
	total := flops * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu1 := cputime.Seconds(); cpu0 >= 0 && cpu1 > cpu0 {
		b.ReportMetric(total/(cpu1-cpu0)/1e9, "GFLOP/cpu-s")
	}
}

// denseShapes are the GEMMs of a large dense layer in training: study
// 002's PPO network (connect4-ppo) maps 2688 features to 512 on a
// minibatch of 2048: the forward product, the weight gradient (A
// transposed, K the minibatch) and the input gradient (B transposed).
var denseShapes = []struct {
	name           string
	transA, transB bool
	m, n, k        int
}{
	{"ppo-forward", false, false, 2048, 512, 2688},
	{"ppo-weightgrad", true, false, 2688, 512, 2048},
	{"ppo-inputgrad", false, true, 2048, 2688, 512},
}

// BenchmarkDenseGemm measures Gemm on denseShapes for the default
// implementation with 1 and 2 threads, in GFLOP/s (2*M*N*K per call):
// operands far larger than the L2 cache, unlike the convolutions'.
func BenchmarkDenseGemm(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range denseShapes {
		a := randSlice(r, s.m*s.k)
		w := randSlice(r, s.k*s.n)
		c := make([]float32, s.m*s.n)
		lda, ldb := s.k, s.n
		if s.transA {
			lda = s.m
		}
		if s.transB {
			ldb = s.k
		}
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/t%d", s.name, th), func(b *testing.B) {
				defer SetThreads(SetThreads(th))
				b.ReportAllocs()
				cpu0 := cputime.Seconds()
				for b.Loop() {
					Gemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, w, ldb, 0, c, s.n)
				}
				reportFlops(b, 2*float64(s.m*s.n*s.k), cpu0)
			})
		}
	}
}
