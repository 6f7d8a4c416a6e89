package cudabackend

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/nets"
)

func TestCompareIsRelativeToTheOutputScale(t *testing.T) {
	for _, c := range []struct {
		got, want   []float32
		abs, scale  float64
		rel         float64
		withinBF16  bool
		description string
	}{
		{[]float32{30.3, 0.5}, []float32{30, 0.5}, 0.3, 30, 0.01, true, "an error of 0.3 on logits of 30 is 1%"},
		{[]float32{0.3, 0.5}, []float32{0, 0.5}, 0.3, 1, 0.3, false, "small outputs: scale 1, absolute"},
		{[]float32{-40, 2}, []float32{-40, 0}, 2, 40, 0.05, true, "negative magnitudes count"},
		{[]float32{float32(math.NaN())}, []float32{1}, math.Inf(1), 1, math.Inf(1), false, "NaN is infinitely wrong"},
	} {
		d := Compare(c.got, c.want)
		if math.Abs(d.MaxAbs-c.abs) > 1e-5 || d.Scale != c.scale || math.Abs(d.Rel()-c.rel) > 1e-6 && !math.IsInf(c.rel, 1) {
			t.Errorf("%s: %+v rel %g; want abs %g scale %g rel %g", c.description, d, d.Rel(), c.abs, c.scale, c.rel)
		}
		if ok := d.Rel() <= Tolerance(BF16); ok != c.withinBF16 {
			t.Errorf("%s: within the bf16 tolerance = %v", c.description, ok)
		}
	}
	// The errors issue 17 measured pass with margin; absolute errors of
	// that size on logits of 30 would not have.
	for p, seen := range map[Precision]float64{TF32: 1.8e-3, FP16: 1.8e-3, BF16: 1.5e-2} {
		if Tolerance(p) < 3*seen {
			t.Errorf("%s tolerance %g leaves little margin over the %g seen", p, Tolerance(p), seen)
		}
	}
	if !(Tolerance(FP32) < Tolerance(TF32) && Tolerance(FP16) < Tolerance(BF16)) {
		t.Error("tolerances do not follow the mantissa widths")
	}
}

func TestDefaultPrecision(t *testing.T) {
	for _, c := range []struct {
		major, minor int
		want         Precision
	}{{6, 1, FP32}, {7, 0, FP16}, {7, 5, FP16}, {8, 0, BF16}, {8, 6, BF16}, {8, 9, BF16}, {9, 0, BF16}, {12, 0, BF16}} {
		if got := DefaultPrecision(c.major, c.minor); got != c.want {
			t.Errorf("sm_%d%d: %s, want %s", c.major, c.minor, got, c.want)
		}
	}
}

// TestFP16OverflowIsReported feeds inputs beyond the half range: FP16
// must fail with ErrFP16Overflow (and nets.ErrNonFinite), with and
// without graphs, and work again for normal inputs; BF16 must not fail.
func TestFP16OverflowIsReported(t *testing.T) {
	if err := Probe(); err != nil {
		fake.NoGPU(t, err)
	}
	net := testNet(t, "connect4-ppo")
	const batch = 2
	big := make([]float32, batch*net.InputSize())
	for i := range big {
		big[i] = 1e5
	}
	normal := randInput(batch*net.InputSize(), 3)
	pol := make([]float32, batch*net.PolicySize())
	val := make([]float32, batch)
	ctx := context.Background()
	for _, graphs := range []bool{false, true} {
		b, err := Open(net, Options{MaxBatch: 4, Precision: FP16, Graphs: graphs})
		if err != nil {
			t.Fatal(err)
		}
		err = b.Evaluate(ctx, batch, big, pol, val)
		if !errors.Is(err, ErrFP16Overflow) || !errors.Is(err, nets.ErrNonFinite) || !strings.Contains(err.Error(), "precision=bf16") {
			t.Errorf("graphs=%v: inputs of 1e5 in FP16 gave %v, want ErrFP16Overflow", graphs, err)
		}
		if err := b.Evaluate(ctx, batch, normal, pol, val); err != nil {
			t.Errorf("graphs=%v: normal inputs after an overflow: %v", graphs, err)
		}
		b.Close()
	}
	b, err := Open(net, Options{MaxBatch: 4, Precision: BF16})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Evaluate(ctx, batch, big, pol, val); err != nil {
		t.Errorf("BF16 with inputs of 1e5: %v", err)
	}
	checkNoViolations(t)
}

// TestEmulatedT4 runs on the emulated T4 (sm_75, in a child process): the
// default precision is FP16 and it matches the CPU within tolerance.
func TestEmulatedT4(t *testing.T) {
	if fake.Active() {
		runChild(t, "TestEmulatedT4", "FAKECUDA_PROFILE=t4")
		return
	}
	if !inChild("TestEmulatedT4") {
		t.Skip("runs as a child of a test binary on the emulated device")
	}
	net := testNet(t, "connect4")
	const batch = 3
	b, err := Open(net, Options{MaxBatch: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	info := b.Device().Info()
	if !strings.Contains(info.Name, "T4") || info.Arch() != 75 {
		t.Fatalf("device %+v, want the emulated T4", info)
	}
	if p := b.Options().Precision; p != FP16 {
		t.Errorf("default precision on sm_75: %s, want fp16", p)
	}
	in := randInput(batch*net.InputSize(), 4)
	wantP, gotP := make([]float32, batch*net.PolicySize()), make([]float32, batch*net.PolicySize())
	wantV, gotV := make([]float32, batch), make([]float32, batch)
	cpu, _ := nets.NewCPUBackend(net.Clone(), nets.BackendOptions{MaxBatch: batch})
	if err := cpu.Evaluate(context.Background(), batch, in, wantP, wantV); err != nil {
		t.Fatal(err)
	}
	if err := b.Evaluate(context.Background(), batch, in, gotP, gotV); err != nil {
		t.Fatal(err)
	}
	dp, dv := Compare(gotP, wantP), Compare(gotV, wantV)
	t.Logf("%s fp16: policy %.3g value %.3g", info.Name, dp.Rel(), dv.Rel())
	if dp.Rel() > Tolerance(FP16) || dv.Rel() > ValueTolerance(FP16) {
		t.Errorf("error policy %g value %g, tolerances %g %g", dp.Rel(), dv.Rel(), Tolerance(FP16), ValueTolerance(FP16))
	}
}
