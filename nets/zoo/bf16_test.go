package zoo_test

import (
	"testing"

	"github.com/canopy-go/canopy/kernels"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/nets/nettest"
)

// TestCPUBF16KeepsShippedNetsMoves checks issue 20's accuracy bar for the
// cpu backend's precision=bf16 (bfloat16 operands of every 3x3
// convolution, float32 sums; kernels.Conv3x3BiasActBF16 and
// kernels.Conv3x3WinogradBF16), against float32 im2col: on every
// decision position of random games, the shipped networks must pick the
// float32 network's most probable legal action in at least 99% of them
// (with -short's 150 positions, too few to resolve that bar, the sample
// must not reject it: nettest.Agreement.Meets).
// It runs the AVX-512 BF16 kernels where the CPU has them and the
// portable code (the same sums, in the same order) elsewhere, with fewer
// positions there. Positions: 2,000 per network, 150 with -short,
// CANOPY_BF16_POSITIONS=N to set.
func TestCPUBF16KeepsShippedNetsMoves(t *testing.T) {
	limit := nettest.PositionLimit(t)
	if kernels.BF16Kernels() == "generic" {
		limit = min(limit, 150)
	}
	for _, c := range nettest.ShippedNets(t, limit) {
		net, in, legal := c.Net, c.In, c.Legal
		const batch = 64
		fp32, _, err := nets.OpenBackendSpec("cpu:precision=fp32,conv=im2col", net.Clone(), nets.BackendOptions{MaxBatch: batch})
		if err != nil {
			t.Fatal(err)
		}
		for _, conv := range []string{"im2col", "winograd"} {
			spec := "cpu:precision=bf16,conv=" + conv
			bf16, _, err := nets.OpenBackendSpec(spec, net.Clone(), nets.BackendOptions{MaxBatch: batch})
			if err != nil {
				t.Fatal(err)
			}
			a := nettest.Compare(t, fp32, bf16, net.InputSize(), net.PolicySize(), in, legal, batch)
			t.Logf("%s, %s (%s kernels): BF16 picks the FP32 network's action in %d of %d positions (%.2f%%); value error mean %.4f, max %.4f",
				c.Name, spec, kernels.BF16Kernels(), a.SameMove, a.Positions, 100*a.Share(), a.MeanValue, a.MaxValue)
			if !a.Meets(0.99) {
				t.Errorf("%s, %s: BF16 argmax agreement %.2f%% (%d of %d): below the 99%% bar (Agreement.Meets)", c.Name, spec, 100*a.Share(), a.SameMove, a.Positions)
			}
			if a.MaxValue == 0 {
				t.Errorf("%s, %s: the BF16 values equal the FP32 ones exactly: is bf16 in use?", c.Name, spec)
			}
		}
	}
}
