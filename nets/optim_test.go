package nets

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// Adam with WeightDecay follows torch.optim.Adam(weight_decay=...) step
// by step (testdata/adam_reference.json, written by
// testdata/adam_reference.py in float64 from float32-rounded parameters
// and gradients) to 1e-6 relative, and stays clear of AdamW's decoupled
// decay and of Adam without decay, so the test can tell the forms apart.
func TestAdamWeightDecayMatchesPyTorch(t *testing.T) {
	buf, err := os.ReadFile(filepath.Join("testdata", "adam_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		LR, Beta1, Beta2, Eps float64
		WeightDecay           float64       `json:"weight_decay"`
		Start                 [][]float32   `json:"start"`
		Grads                 [][][]float32 `json:"grads"`
		Adam, AdamW           [][][]float64
	}
	if err := json.Unmarshal(buf, &ref); err != nil {
		t.Fatal(err)
	}
	if ref.WeightDecay == 0 || len(ref.Grads) < 2 || len(ref.Adam) != len(ref.Grads) {
		t.Fatalf("reference has weight decay %g and %d steps of gradients, %d of parameters", ref.WeightDecay, len(ref.Grads), len(ref.Adam))
	}
	run := func(wd float64) [][][]float32 {
		params := make([]*Param, len(ref.Start))
		for i, s := range ref.Start {
			params[i] = &Param{Name: string(rune('a' + i)), Data: append([]float32(nil), s...), Grad: make([]float32, len(s))}
		}
		o := &Adam{LR: ref.LR, Beta1: ref.Beta1, Beta2: ref.Beta2, Eps: ref.Eps, WeightDecay: wd}
		var traj [][][]float32
		for _, gs := range ref.Grads {
			for i, p := range params {
				copy(p.Grad, gs[i])
			}
			o.Step(params)
			for i, p := range params {
				if !equal32(p.Grad, gs[i]) {
					t.Fatalf("Step changed the gradient of parameter %d", i)
				}
			}
			step := make([][]float32, len(params))
			for i, p := range params {
				step[i] = append([]float32(nil), p.Data...)
			}
			traj = append(traj, step)
		}
		return traj
	}
	// worst is the largest relative difference of got from want over the
	// whole trajectory.
	worst := func(got [][][]float32, want [][][]float64) float64 {
		var w float64
		for k := range want {
			for i := range want[k] {
				for j, x := range want[k][i] {
					w = math.Max(w, math.Abs(float64(got[k][i][j])-x)/math.Abs(x))
				}
			}
		}
		return w
	}
	const tol = 1e-6
	got := run(ref.WeightDecay)
	t.Logf("relative difference from torch.optim.Adam %.2g, from AdamW %.2g, of Adam without decay %.2g",
		worst(got, ref.Adam), worst(got, ref.AdamW), worst(run(0), ref.Adam))
	if d := worst(got, ref.Adam); d > tol {
		t.Errorf("Adam with weight decay %g: relative difference %.2g from torch.optim.Adam, want <= %g", ref.WeightDecay, d, tol)
	}
	if d := worst(got, ref.AdamW); d < 100*tol {
		t.Errorf("Adam with weight decay is within %.2g of AdamW: the reference cannot tell the two forms apart", d)
	}
	if d := worst(run(0), ref.Adam); d < 100*tol {
		t.Errorf("Adam without weight decay is within %.2g of the reference: the decay is too small to test", d)
	}
}

func equal32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
