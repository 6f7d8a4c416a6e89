package cudabackend

import (
	"context"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/connect4d"
	"github.com/canopy-go/canopy/nets"
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
		t.Skipf("no GPU (%s): %v", fake.Reason, err)
	}
	limit := 2000
	if testing.Short() {
		limit = 150
	}
	if v := os.Getenv("CANOPY_BF16_POSITIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CANOPY_BF16_POSITIONS=%q: want a positive number of positions", v)
		}
		limit = n
	}
	for _, c := range []struct{ net, game string }{{"connect4-zero", "connect4"}, {"connect4d-zero", "connect4d:d=5"}} {
		g := games.MustNew(c.game)
		net, _, err := nets.OpenNet(c.net, g)
		if err != nil {
			t.Fatal(err)
		}
		encoding, err := nets.EncodingFor(g, net.InputSize())
		if err != nil {
			t.Fatal(err)
		}
		enc, err := nets.NewEncoder(g, encoding)
		if err != nil {
			t.Fatal(err)
		}
		// Every decision position of random games (until limit), encoded
		// for the player to move, with its legal actions.
		in := []float32{}
		var legal []games.Mask
		rng := games.NewRand(20)
		m := games.NewMask(g.NumActions())
		for len(legal) < limit {
			s := g.NewInitialState()
			for !s.IsTerminal() {
				if p := s.CurrentPlayer(); p >= 0 {
					l := games.NewMask(g.NumActions())
					s.Legal(l)
					x := make([]float32, net.InputSize())
					enc.Encode(s, p, l, x)
					in = append(in, x...)
					legal = append(legal, l)
				}
				games.RandomStep(s, rng, m, nil)
			}
		}
		n, P := len(legal), net.PolicySize()
		const batch = 64
		cpu, err := nets.NewCPUBackend(net.Clone(), nets.BackendOptions{MaxBatch: batch})
		if err != nil {
			t.Fatal(err)
		}
		gpu, err := Open(net, Options{MaxBatch: batch, Precision: BF16})
		if err != nil {
			t.Fatal(err)
		}
		wantP, gotP := make([]float32, n*P), make([]float32, n*P)
		wantV, gotV := make([]float32, n), make([]float32, n)
		for lo := 0; lo < n; lo += batch {
			k := min(batch, n-lo)
			x := in[lo*net.InputSize() : (lo+k)*net.InputSize()]
			if err := cpu.Evaluate(context.Background(), k, x, wantP[lo*P:(lo+k)*P], wantV[lo:lo+k]); err != nil {
				t.Fatal(err)
			}
			if err := gpu.Evaluate(context.Background(), k, x, gotP[lo*P:(lo+k)*P], gotV[lo:lo+k]); err != nil {
				t.Fatal(err)
			}
		}
		if err := gpu.Close(); err != nil {
			t.Error(err)
		}
		agree := 0
		var sumV, maxV float64
		for i := range n {
			if legalArgmax(wantP[i*P:(i+1)*P], legal[i]) == legalArgmax(gotP[i*P:(i+1)*P], legal[i]) {
				agree++
			}
			d := math.Abs(float64(gotV[i]) - float64(wantV[i]))
			sumV += d
			maxV = max(maxV, d)
		}
		share := float64(agree) / float64(n)
		t.Logf("%s: BF16 picks the FP32 network's action in %d of %d positions (%.2f%%); value error mean %.4f, max %.4f",
			c.net, agree, n, 100*share, sumV/float64(n), maxV)
		if share < 0.99 {
			t.Errorf("%s: BF16 argmax agreement %.2f%% < 99%%", c.net, 100*share)
		}
	}
	checkNoViolations(t)
}

// legalArgmax returns the legal action with the largest logit (the first
// on ties).
func legalArgmax(logits []float32, legal games.Mask) games.Action {
	best, bestV := games.Action(-1), float32(math.Inf(-1))
	for a := range legal.All() {
		if logits[a] > bestV {
			best, bestV = a, logits[a]
		}
	}
	return best
}
