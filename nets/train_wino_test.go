package nets

import (
	"fmt"
	"math"
	"testing"

	"github.com/canopy-go/canopy/kernels"
)

// TestTrainConvAlgorithmsAgree: the loss and every gradient of one
// training step agree, on every kernel implementation this CPU runs and
// under both training convolution algorithms, with the portable path
// (generic kernels, im2col), which the PyTorch reference tests pin down
// (their tiny nets are too narrow for Winograd). The net has 16 channels,
// so its tower convolutions, their weight gradients and their input
// gradients run by Winograd.
func TestTrainConvAlgorithmsAgree(t *testing.T) {
	cfg, _ := Preset("connect4")
	cfg.Channels, cfg.Blocks, cfg.ValueHidden = 16, 2, 8
	batch := randomBatch(cfg, 13, 4)
	run := func(kern string, a ConvAlgorithm) (Loss, [][]float32, error) {
		restore, err := kernels.Use(kern)
		if err != nil {
			return Loss{}, nil, err
		}
		defer restore()
		net, err := New(cfg, 9)
		if err != nil {
			t.Fatal(err)
		}
		net.SetTrainConvAlgorithm(a)
		if got := net.TrainConvAlgorithm(); got != a {
			t.Fatalf("TrainConvAlgorithm() = %v after setting %v", got, a)
		}
		tr := &Trainer{Net: net, L2: 1e-4}
		loss, err := tr.Compute(batch)
		if err != nil {
			t.Fatal(err)
		}
		var grads [][]float32
		for _, p := range net.params {
			if p.Grad != nil {
				grads = append(grads, append([]float32(nil), p.Grad...))
			}
		}
		return loss, grads, nil
	}
	refLoss, ref, err := run("generic", ConvIm2col)
	if err != nil {
		t.Fatal(err)
	}
	for _, kern := range kernels.Available() {
		for _, a := range []ConvAlgorithm{ConvIm2col, ConvWinograd} {
			name := fmt.Sprintf("%s/%v", kern, a)
			loss, got, err := run(kern, a)
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(loss.Total - refLoss.Total); d > 1e-5*math.Max(1, math.Abs(refLoss.Total)) {
				t.Errorf("%s: loss %v, portable path %v", name, loss.Total, refLoss.Total)
			}
			same := true
			for i := range ref {
				scale := 0.0
				for _, v := range ref[i] {
					scale = math.Max(scale, math.Abs(float64(v)))
				}
				for j, v := range got[i] {
					if d := math.Abs(float64(v - ref[i][j])); d > 1e-4*scale+1e-7 {
						t.Fatalf("%s: gradient %d (%s) element %d: %v, portable path %v (largest %v)",
							name, i, gradName(cfg, i), j, v, ref[i][j], scale)
					}
					same = same && v == ref[i][j]
				}
			}
			if a == ConvWinograd && same {
				t.Errorf("%s: gradients identical to im2col's bit for bit: Winograd did not run", name)
			}
		}
	}
}

// gradName names the i-th parameter with a gradient of a net of cfg.
func gradName(cfg Config, i int) string {
	net, err := New(cfg, 1)
	if err != nil {
		return "?"
	}
	for _, p := range net.params {
		if p.Grad != nil {
			if i == 0 {
				return p.Name
			}
			i--
		}
	}
	return "?"
}

// TestTrainStepAllocs: after the first step, a training step (forward,
// backward, Adam) allocates nothing on one kernel thread, in float32 and
// in bfloat16: the scratch (the bfloat16 weights included) is reused and
// the batch-slice passes run without closures.
func TestTrainStepAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	defer kernels.SetThreads(kernels.SetThreads(1))
	cfg, _ := Preset("connect4")
	cfg.Channels, cfg.Blocks = 16, 2
	for _, p := range []Precision{FP32, BF16} {
		net, err := New(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		net.SetTrainPrecision(p)
		tr := &Trainer{Net: net, Optimizer: &Adam{LR: 1e-3}, L2: 1e-4}
		b := randomBatch(cfg, 24, 5)
		step := func() {
			if _, err := tr.Step(b); err != nil {
				t.Fatal(err)
			}
		}
		step()
		if n := testing.AllocsPerRun(10, step); n != 0 {
			t.Errorf("%v: a training step allocates %v times", p, n)
		}
	}
}
