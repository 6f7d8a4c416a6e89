package cudabackend

import (
	"testing"

	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/connect4d"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/nets/nettest"
	_ "github.com/canopy-go/canopy/nets/zoo"
)

// TestBF16KeepsShippedNetsMoves measures what BF16 GEMM operands (with
// FP32 accumulation, the arithmetic of AVX-512 BF16's VDPBF16PS and of
// tensor cores) cost the shipped networks: on every decision position of
// random games, the share of positions whose most probable legal action
// is the FP32 network's, and the value error. Issue 20 asks for an
// argmax agreement of at least 99% from a BF16 inference path; the test
// fails below it. It runs on the emulated device, which rounds GEMM
// operands exactly (cuda/fakecuda), or on a real GPU. Positions per
// network: at least 2,000 (150 with -short; CANOPY_BF16_POSITIONS=N
// sets it), from whole games.
func TestBF16KeepsShippedNetsMoves(t *testing.T) {
	if err := Probe(); err != nil {
		fake.NoGPU(t, err)
	}
	limit := nettest.PositionLimit(t)
	for _, c := range nettest.ShippedNets(t, limit) {
		net, in, legal := c.Net, c.In, c.Legal
		const batch = 64
		cpu, err := nets.NewCPUBackend(net.Clone(), nets.BackendOptions{MaxBatch: batch})
		if err != nil {
			t.Fatal(err)
		}
		gpu, err := Open(net, Options{MaxBatch: batch, Precision: BF16})
		if err != nil {
			t.Fatal(err)
		}
		a := nettest.Compare(t, cpu, gpu, net.InputSize(), net.PolicySize(), in, legal, batch)
		if err := gpu.Close(); err != nil {
			t.Error(err)
		}
		t.Logf("%s: BF16 picks the FP32 network's action in %d of %d positions (%.2f%%); value error mean %.4f, max %.4f",
			c.Name, a.SameMove, a.Positions, 100*a.Share(), a.MeanValue, a.MaxValue)
		if !a.Meets(0.99) {
			t.Errorf("%s: BF16 argmax agreement %.2f%% (%d of %d): below the 99%% bar (Agreement.Meets)", c.Name, 100*a.Share(), a.SameMove, a.Positions)
		}
	}
	checkNoViolations(t)
}
