package ortbackend

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/all"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/nets/onnx"
)

// Canopy's own networks, exported by nets/onnx, give Canopy's outputs in
// ONNX Runtime (an outside implementation of every operator the export
// writes) within 1e-5: the AlphaZero ResNet with both value-head sizes
// and the PPO CNN, each also with a per-player value head (three values
// per row, nets.Config.ValuePlayers), at batches 1 and 7 (issue 41's
// export check).
func TestExportedNetsInORT(t *testing.T) {
	needLib(t)
	for _, c := range []struct {
		name string
		cfg  nets.Config
	}{
		{"resnet", nets.Config{InputPlanes: 3, Height: 6, Width: 7, PolicySize: 7, Channels: 8, Blocks: 2, ValueHidden: 16}},
		{"resnet-wide", nets.Config{InputPlanes: 2, Height: 5, Width: 5, PolicySize: 26, Channels: 16, Blocks: 1, ValueHidden: 8}},
		{"ppo", nets.Config{Head: nets.HeadPPO, InputPlanes: 3, Height: 6, Width: 7, PolicySize: 7, ConvChannels: []int{8, 8}, Dense: 16}},
		{"resnet-3values", nets.Config{InputPlanes: 3, Height: 6, Width: 7, PolicySize: 7, Channels: 8, Blocks: 2, ValueHidden: 16, ValuePlayers: 3}},
		{"ppo-3values", nets.Config{Head: nets.HeadPPO, InputPlanes: 3, Height: 6, Width: 7, PolicySize: 7, ConvChannels: []int{8}, Dense: 16, ValuePlayers: 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := nets.New(c.cfg, 11)
			if err != nil {
				t.Fatal(err)
			}
			// Batch-norm parameters and statistics away from identity
			// and zero, so that the export's folding is exercised.
			rng := rand.New(rand.NewPCG(3, 4))
			for _, p := range n.Params() {
				switch {
				case strings.HasSuffix(p.Name, "running_var"), strings.HasSuffix(p.Name, "bn.weight"), strings.Contains(p.Name, ".bn") && strings.HasSuffix(p.Name, ".weight"):
					for i := range p.Data {
						p.Data[i] = 0.5 + rng.Float32()
					}
				case strings.HasSuffix(p.Name, "running_mean"), strings.HasSuffix(p.Name, ".bias"):
					for i := range p.Data {
						p.Data[i] = float32(rng.NormFloat64() * 0.2)
					}
				}
			}
			n.Invalidate()
			model, err := onnx.Export(n, onnx.ExportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), c.name+".onnx")
			if err := os.WriteFile(path, model, 0o644); err != nil {
				t.Fatal(err)
			}
			ort, err := Open(n, Options{Model: path, Threads: 1, MaxBatch: 8})
			if err != nil {
				t.Fatal(err)
			}
			defer ort.Close()
			cpu, err := nets.NewCPUBackend(n, nets.BackendOptions{MaxBatch: 8})
			if err != nil {
				t.Fatal(err)
			}
			in, ps, vs := n.InputSize(), n.PolicySize(), n.ValueSize()
			if got := nets.ValueSize(ort); got != vs {
				t.Fatalf("the ort backend gives %d values per row, the network %d", got, vs)
			}
			for _, batch := range []int{1, 7} {
				x := make([]float32, batch*in)
				for i := range x {
					x[i] = float32(rng.IntN(2)) // observations are 0/1 planes
				}
				pc, vc := make([]float32, batch*ps), make([]float32, batch*vs)
				po, vo := make([]float32, batch*ps), make([]float32, batch*vs)
				if err := cpu.Evaluate(context.Background(), batch, x, pc, vc); err != nil {
					t.Fatal(err)
				}
				if err := ort.Evaluate(context.Background(), batch, x, po, vo); err != nil {
					t.Fatal(err)
				}
				worst := 0.0
				for i := range pc {
					worst = max(worst, math.Abs(float64(pc[i]-po[i])))
				}
				for i := range vc {
					worst = max(worst, math.Abs(float64(vc[i]-vo[i])))
				}
				t.Logf("batch %d: worst difference %.3g", batch, worst)
				if worst > 1e-5 {
					t.Errorf("batch %d: ONNX Runtime and Canopy's CPU backend differ by %.3g (policy %v vs %v)", batch, worst, po[:ps], pc[:ps])
				}
			}
		})
	}
}

// torchFixture is one of nets/onnx's PyTorch fixtures (its
// testdata/make_fixtures.py): PyTorch's outputs on recorded inputs.
type torchFixture struct {
	Game       string    `json:"game"`
	Batch      int       `json:"batch"`
	Input      []float32 `json:"input"`
	Policy     []float32 `json:"policy"`
	Value      []float32 `json:"value"`
	Error      string    `json:"error"`
	PolicyKind string    `json:"policy_kind"`
}

// PyTorch -> import -> export -> ONNX Runtime: every PyTorch fixture that
// imports as a Canopy network, exported again, gives PyTorch's recorded
// outputs in ONNX Runtime within 1e-5 (the policy of a log-softmax
// fixture, which the import drops, is compared on the value only).
func TestTorchImportExportInORT(t *testing.T) {
	needLib(t)
	files, err := filepath.Glob("../onnx/testdata/torch/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no PyTorch fixtures in nets/onnx/testdata/torch: %v", err)
	}
	ran := 0
	for _, f := range files {
		var c torchFixture
		js, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(js, &c); err != nil {
			t.Fatal(err)
		}
		if c.Error != "" {
			continue // not Canopy's ResNet: nets/onnx tests its refusal
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			m, err := onnx.ReadFile(strings.TrimSuffix(f, ".json") + ".onnx")
			if err != nil {
				t.Fatal(err)
			}
			g, err := games.New(c.Game)
			if err != nil {
				t.Fatal(err)
			}
			net, err := onnx.Import(m, g, onnx.ImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			model, err := onnx.Export(net, onnx.ExportOptions{Game: g})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), name+".onnx")
			if err := os.WriteFile(path, model, 0o644); err != nil {
				t.Fatal(err)
			}
			b, err := Open(net, Options{Model: path, Threads: 1, MaxBatch: max(c.Batch, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			pol, val := make([]float32, c.Batch*net.PolicySize()), make([]float32, c.Batch)
			if err := b.Evaluate(context.Background(), c.Batch, c.Input, pol, val); err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			if c.PolicyKind != "log_softmax" {
				for i := range c.Policy {
					worst = max(worst, math.Abs(float64(pol[i]-c.Policy[i])))
				}
			}
			for i := range c.Value {
				worst = max(worst, math.Abs(float64(val[i]-c.Value[i])))
			}
			t.Logf("max |ORT(export(import(pytorch))) - pytorch| = %.3g", worst)
			if worst > 1e-5 {
				t.Errorf("ONNX Runtime on the re-exported model differs from PyTorch by %.3g", worst)
			}
		})
		ran++
	}
	if ran == 0 {
		t.Fatal("no fixture imports as a Canopy network")
	}
}
