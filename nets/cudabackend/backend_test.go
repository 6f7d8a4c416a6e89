package cudabackend

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/cuda"
	"github.com/canopy-go/canopy/nets"
)

func TestRegisteredAboveCPU(t *testing.T) {
	names := nets.Backends()
	ic, ip := -1, -1
	for i, n := range names {
		switch n {
		case "cuda":
			ic = i
		case "cpu":
			ip = i
		}
	}
	if ic < 0 || ip < 0 || ic > ip {
		t.Fatalf("backends %q: want cuda registered before cpu", names)
	}
}

// TestAutoFallsBackToCPU runs where no GPU is usable: "auto" must give the
// cpu backend, and opening "cuda" by name must say why not.
func TestAutoFallsBackToCPU(t *testing.T) {
	reason := Probe()
	if reason == nil {
		t.Skip("a GPU is usable here; the fallback path is not reachable")
	}
	net := testNet(t, "connect4")
	b, err := nets.OpenBackend("auto", net, nets.BackendOptions{MaxBatch: 4})
	if err != nil {
		t.Fatalf("auto: %v", err)
	}
	if b.Name() != "cpu" {
		t.Fatalf("auto opened %q, want cpu", b.Name())
	}
	_, err = nets.OpenBackend("cuda", net, nets.BackendOptions{})
	if err == nil {
		t.Fatal("cuda opened without a GPU")
	}
	if err.Error() != reason.Error() {
		t.Errorf("open error %q differs from Probe's %q", err, reason)
	}
	if errors.Is(reason, cuda.ErrNoDriver) && !strings.Contains(err.Error(), "libcuda.so.1 not found (tried: ") {
		t.Errorf("reason does not list the paths tried: %v", err)
	}
	t.Logf("fallback reason: %v", err)
}

func TestParsePrecision(t *testing.T) {
	for in, want := range map[string]Precision{"": FP32, "fp32": FP32, "TF32": TF32, "fp16": FP16, "bf16": BF16} {
		if got, err := ParsePrecision(in); err != nil || got != want {
			t.Errorf("ParsePrecision(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParsePrecision("fp8"); err == nil {
		t.Error("fp8 accepted")
	}
}

// Tolerances on policy logits and values against the CPU float32 result.
// TF32 and FP16 keep 10 mantissa bits, BF16 7, with FP32 accumulation.
var tolerance = map[Precision]float64{FP32: 1e-3, TF32: 5e-2, FP16: 5e-2, BF16: 2.5e-1}

func TestGPUMatchesCPU(t *testing.T) {
	if err := Probe(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	for _, preset := range []string{"connect4", "connect4-ppo"} {
		net := testNet(t, preset)
		const batch = 37
		in := randInput(batch*net.InputSize(), 9)
		wantP := make([]float32, batch*net.PolicySize())
		wantV := make([]float32, batch)
		cpu, _ := nets.NewCPUBackend(net.Clone(), nets.BackendOptions{MaxBatch: batch})
		if err := cpu.Evaluate(context.Background(), batch, in, wantP, wantV); err != nil {
			t.Fatal(err)
		}
		for _, prec := range Precisions() {
			for _, graphs := range []bool{false, true} {
				b, err := Open(net, Options{MaxBatch: 64, Precision: prec, Graphs: graphs})
				if err != nil {
					t.Fatalf("%s %s: %v", preset, prec, err)
				}
				gotP := make([]float32, len(wantP))
				gotV := make([]float32, batch)
				for range 2 { // the second run replays the graph
					if err := b.Evaluate(context.Background(), batch, in, gotP, gotV); err != nil {
						t.Fatalf("%s %s graphs=%v: %v", preset, prec, graphs, err)
					}
				}
				dp, dv := maxDiff(gotP, wantP), maxDiff(gotV, wantV)
				t.Logf("%s %s graphs=%v: policy diff %.3g value diff %.3g", preset, prec, graphs, dp, dv)
				if dp > tolerance[prec] || dv > tolerance[prec] {
					t.Errorf("%s %s graphs=%v: diff policy %g value %g > %g", preset, prec, graphs, dp, dv, tolerance[prec])
				}
				if err := b.Close(); err != nil {
					t.Error(err)
				}
			}
		}
	}
}
