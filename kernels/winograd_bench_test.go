package kernels

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/internal/cputime"
)

// BenchmarkConv3x3Paths measures one residual-tower convolution of the
// Connect Four (64 -> 64 channels, 6x7) and Sequence (10x10) networks at
// batch 1, 16 and 256 through the three paths, im2col + GEMM
// (Conv3x3BiasAct), Winograd F(2x2,3x3) (Conv3x3Winograd) and bfloat16
// im2col + GEMM (Conv3x3BiasActBF16, see BF16Kernels), with the default
// implementation on 1 and 2 threads. GFLOP counts the direct
// convolution's 2*9*cin*cout per output pixel for both, so the figures
// compare time per convolution; read GFLOP/cpu-s on a shared machine.
func BenchmarkConv3x3Paths(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, board := range []struct {
		name string
		h, w int
	}{{"c4", 6, 7}, {"seq", 10, 10}} {
		const ch = 64
		wt := randSlice(r, 9*ch*ch)
		u := make([]float32, 16*ch*ch)
		WinogradWeights(wt, ch, ch, u)
		packed := PackBF16(wt, 9*ch, ch)
		bias := randSlice(r, ch)
		for _, batch := range []int{1, 16, 256} {
			m := batch * board.h * board.w
			in := randSlice(r, m*ch)
			out := make([]float32, m*ch)
			for _, path := range []string{"im2col", "winograd", "bf16"} {
				for _, th := range []int{1, 2} {
					b.Run(fmt.Sprintf("%s/batch=%d/%s/t%d", board.name, batch, path, th), func(b *testing.B) {
						defer SetThreads(SetThreads(th))
						b.ReportAllocs()
						cpu0 := cputime.Seconds()
						for b.Loop() {
							switch path {
							case "im2col":
								Conv3x3BiasAct(in, batch, ch, board.h, board.w, wt, ch, bias, nil, true, out)
							case "winograd":
								Conv3x3Winograd(in, batch, ch, board.h, board.w, u, ch, bias, nil, true, out)
							default:
								Conv3x3BiasActBF16(in, batch, ch, board.h, board.w, packed, bias, nil, true, out)
							}
						}
						reportFlops(b, 2*float64(m*9*ch*ch), cpu0)
					})
				}
			}
		}
	}
}

// BenchmarkConv3x3Train measures the three convolutions training runs per
// residual-tower 3x3 convolution, by Winograd F(2x2,3x3) at batch 256 on
// one thread: the forward pass ("fwd", the same kernel inference runs),
// the input gradient ("dgrad", the convolution of the output gradient
// with the rotated kernel) and the weight gradient ("wgrad",
// Conv3x3WinogradWeightGrad and WinogradWeightsGrad), and the three with
// bfloat16 products ("fwd-bf16", "dgrad-bf16", "wgrad-bf16"). GFLOP counts the
// direct convolution's 2*9*cin*cout per output pixel for each, so that
// the figures compare with the FMA peak (BenchmarkFMAPeak) as a share of
// the core (docs/BENCHMARKS.md).
func BenchmarkConv3x3Train(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, sh := range []struct {
		name     string
		ch, h, w int
	}{{"c4-64", 64, 6, 7}, {"c4-32", 32, 6, 7}, {"seq-64", 64, 10, 10}} {
		const batch = 256
		ch, h, w := sh.ch, sh.h, sh.w
		m := batch * h * w
		u := make([]float32, 16*ch*ch)
		WinogradWeights(randSlice(r, 9*ch*ch), ch, ch, u)
		ub := PackWinogradBF16(u, ch, ch)
		in, dy, out := randSlice(r, m*ch), randSlice(r, m*ch), make([]float32, m*ch)
		du, dw := make([]float32, 16*ch*ch), make([]float32, 9*ch*ch)
		for _, pass := range []string{"fwd", "dgrad", "wgrad", "fwd-bf16", "dgrad-bf16", "wgrad-bf16"} {
			b.Run(fmt.Sprintf("%s/%s", sh.name, pass), func(b *testing.B) {
				if strings.HasSuffix(pass, "bf16") && BF16Kernels() == "generic" {
					b.Skip("no AVX-512 BF16: the portable bfloat16 code")
				}
				defer SetThreads(SetThreads(1))
				run := func() {
					switch pass {
					case "fwd":
						Conv3x3Winograd(in, batch, ch, h, w, u, ch, nil, nil, false, out)
					case "dgrad":
						Conv3x3Winograd(dy, batch, ch, h, w, u, ch, nil, out, false, out)
					case "wgrad":
						clear(du)
						Conv3x3WinogradWeightGrad(in, batch, ch, h, w, dy, ch, du)
						WinogradWeightsGrad(du, ch, ch, dw)
					case "wgrad-bf16":
						clear(du)
						Conv3x3WinogradWeightGradBF16(in, batch, ch, h, w, dy, ch, du)
						WinogradWeightsGrad(du, ch, ch, dw)
					case "fwd-bf16":
						Conv3x3WinogradBF16(in, batch, ch, h, w, ub, nil, nil, false, out)
					default:
						Conv3x3WinogradBF16(dy, batch, ch, h, w, ub, nil, out, false, out)
					}
				}
				run() // the first touch of out and of the pooled scratch is not timed
				cpu0 := cputime.Seconds()
				for b.Loop() {
					run()
				}
				reportFlops(b, 2*float64(m*9*ch*ch), cpu0)
			})
		}
	}
}
