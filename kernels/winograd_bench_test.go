package kernels

import (
	"fmt"
	"math/rand/v2"
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
