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
// cpu backend with a Choice that names the reason, and opening "cuda" by
// name must fail with nets.ErrBackendUnavailable wrapping Probe's reason.
func TestAutoFallsBackToCPU(t *testing.T) {
	if fake.Active() {
		// This process has the emulated GPU: check the fallback in a
		// child process that has none.
		runChild(t, "TestAutoFallsBackToCPU", "CANOPY_FAKECUDA=off", "CANOPY_CUDA_LIBS=")
		return
	}
	reason := Probe()
	if reason == nil {
		t.Skip("a GPU is usable here; the fallback path is not reachable")
	}
	net := testNet(t, "connect4")
	b, choice, err := nets.OpenBackendSpec("auto", net, nets.BackendOptions{MaxBatch: 4})
	if err != nil {
		t.Fatalf("auto: %v", err)
	}
	if b.Name() != "cpu" || choice.Backend != "cpu" {
		t.Fatalf("auto opened %q (choice %q), want cpu", b.Name(), choice.Backend)
	}
	if len(choice.Skipped) == 0 || choice.Skipped[0].Name != "cuda" || !errors.Is(choice.Skipped[0].Err, nets.ErrBackendUnavailable) {
		t.Fatalf("choice %+v: want cuda skipped as unavailable", choice)
	}
	line := choice.String()
	if strings.Contains(line, "\n") || !strings.HasPrefix(line, "cuda unavailable: ") || !strings.HasSuffix(line, "; using cpu") || len(line) > 200 {
		t.Errorf("choice line %q: want a short \"cuda unavailable: <reason>; using cpu\"", line)
	}
	if !errors.Is(choice.Skipped[0].Err, reason) && choice.Skipped[0].Err.Error() != reason.Error() {
		t.Errorf("skipped reason %v does not wrap Probe's %v", choice.Skipped[0].Err, reason)
	}
	_, err = nets.OpenBackend("cuda", net, nets.BackendOptions{})
	if !errors.Is(err, nets.ErrBackendUnavailable) {
		t.Fatalf("cuda opened without a GPU, or the error does not match ErrBackendUnavailable: %v", err)
	}
	if errors.Is(reason, cuda.ErrNoDriver) && !errors.Is(err, cuda.ErrNoDriver) {
		t.Errorf("open error %v does not wrap Probe's %v", err, reason)
	}
	var nf *cuda.NotFoundError
	if errors.As(err, &nf) && len(nf.Tried) == 0 {
		t.Errorf("reason does not list the paths tried: %v", err)
	}
	// Option errors are reported before the GPU is looked for.
	if _, err := nets.OpenBackend("cuda:precision=fp8", net, nets.BackendOptions{}); !errors.Is(err, nets.ErrBadBackendOption) {
		t.Errorf("cuda:precision=fp8: %v, want ErrBadBackendOption", err)
	}
	t.Logf("choice: %s", line)
}

func TestSpecOptions(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		name   string
		params map[string]string
		want   Options
	}{
		{"defaults", nil, Options{MaxBatch: 8, Device: 2, Precision: Auto}},
		{"spec", map[string]string{"precision": "tf32", "graphs": "true", "device": "1"}, Options{MaxBatch: 8, Device: 1, Precision: TF32, Graphs: true}},
	} {
		got, err := specOptions(nets.BackendOptions{MaxBatch: 8, Device: 2, Params: c.params})
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	for _, c := range []struct {
		params map[string]string
		key    string
	}{
		{map[string]string{"precision": "fp8"}, "precision"},
		{map[string]string{"graphs": "maybe"}, "graphs"},
		{map[string]string{"device": "-1"}, "device"},
	} {
		_, err := specOptions(nets.BackendOptions{Params: c.params})
		var oe *nets.OptionError
		if !errors.As(err, &oe) || oe.Key != c.key || !errors.Is(err, nets.ErrBadBackendOption) {
			t.Errorf("%v: error %v, want an OptionError for %s", c.params, err, c.key)
		}
	}
	// The environment variables that options replaced are refused with the
	// option to use, never silently read or ignored.
	if err := checkRetiredEnv(env()); err != nil {
		t.Errorf("no variable set: %v", err)
	}
	for _, c := range []struct{ name, key string }{{"CANOPY_CUDA_PRECISION", "precision"}, {"CANOPY_CUDA_GRAPHS", "graphs"}} {
		err := checkRetiredEnv(env(c.name, "1"))
		var oe *nets.OptionError
		if !errors.As(err, &oe) || oe.Key != c.key || !strings.Contains(err.Error(), "cuda:"+c.key+"=") {
			t.Errorf("$%s set: error %v, want one naming cuda:%s=", c.name, err, c.key)
		}
	}
}

func TestSpecKeysRegistered(t *testing.T) {
	info, ok := nets.LookupBackend("cuda")
	if !ok {
		t.Fatal("cuda not registered")
	}
	for _, k := range []string{"device", "precision", "graphs"} {
		if _, ok := info.Option(k); !ok {
			t.Errorf("cuda does not declare option %s", k)
		}
	}
	bs, err := nets.ParseBackendSpec("cuda:precision=FP16,graphs=true")
	if err != nil || bs.String() != "cuda:graphs=true,precision=fp16" {
		t.Errorf("parse: %v %v", bs, err)
	}
}

func TestParsePrecision(t *testing.T) {
	for in, want := range map[string]Precision{"": Auto, "auto": Auto, "fp32": FP32, "TF32": TF32, "fp16": FP16, "bf16": BF16} {
		if got, err := ParsePrecision(in); err != nil || got != want {
			t.Errorf("ParsePrecision(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParsePrecision("fp8"); err == nil {
		t.Error("fp8 accepted")
	}
}

// TestGPUMatchesCPU compares the GPU network with the CPU's float32 one,
// per precision, with and without graphs, on the emulated device or a
// real GPU. Errors are relative to the output scale (Compare, Tolerance).
func TestGPUMatchesCPU(t *testing.T) {
	if err := Probe(); err != nil {
		fake.NoGPU(t, err)
	}
	batch := 37
	if testing.Short() {
		batch = 5
	}
	worst, worstV := map[Precision]float64{}, map[Precision]float64{}
	for _, preset := range []string{"connect4", "connect4-ppo", "connect4+vp3", "connect4-ppo+vp3"} {
		net := testNet(t, preset)
		in := randInput(batch*net.InputSize(), 9)
		wantP := make([]float32, batch*net.PolicySize())
		wantV := make([]float32, batch*net.ValueSize())
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
				if nets.ValueSize(b) != net.ValueSize() {
					t.Fatalf("%s: ValueSize %d, want %d", preset, nets.ValueSize(b), net.ValueSize())
				}
				gotP := make([]float32, len(wantP))
				gotV := make([]float32, len(wantV))
				for range 2 { // the second run replays the graph
					if err := b.Evaluate(context.Background(), batch, in, gotP, gotV); err != nil {
						t.Fatalf("%s %s graphs=%v: %v", preset, prec, graphs, err)
					}
				}
				dp, dv := Compare(gotP, wantP), Compare(gotV, wantV)
				worst[prec] = max(worst[prec], dp.Rel())
				worstV[prec] = max(worstV[prec], dv.Rel())
				t.Logf("%s %s graphs=%v: policy %.3g (abs %.3g, scale %.3g), value %.3g", preset, prec, graphs, dp.Rel(), dp.MaxAbs, dp.Scale, dv.Rel())
				if dp.Rel() > Tolerance(prec) || dv.Rel() > ValueTolerance(prec) {
					t.Errorf("%s %s graphs=%v: error policy %g (relative, tolerance %g) value %g (tolerance %g)",
						preset, prec, graphs, dp.Rel(), Tolerance(prec), dv.Rel(), ValueTolerance(prec))
				}
				if err := b.Close(); err != nil {
					t.Error(err)
				}
			}
		}
	}
	for _, p := range Precisions() {
		t.Logf("%s: worst policy error %.3g relative (tolerance %g), value %.3g (tolerance %g)", p, worst[p], Tolerance(p), worstV[p], ValueTolerance(p))
	}
	checkNoViolations(t)
}
