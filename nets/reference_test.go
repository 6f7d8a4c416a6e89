package nets

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/nets/safetensors"
)

// The files in testdata were written by testdata/make_reference.py with
// PyTorch (float64 arithmetic on float32-rounded weights and inputs).

func readRef(t *testing.T, name string) *safetensors.File {
	t.Helper()
	f, err := safetensors.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func refTensor(t *testing.T, f *safetensors.File, name string) []float32 {
	t.Helper()
	tt, ok := f.Get(name)
	if !ok {
		t.Fatalf("reference tensor %q missing", name)
	}
	v, err := tt.Float32()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// closeTo compares got with want elementwise within tol (absolute, or
// relative for values larger than 1).
func closeTo(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if d > tol*math.Max(1, math.Abs(float64(want[i]))) {
			if bad < 5 {
				t.Errorf("%s[%d] = %.7g, want %.7g (diff %.2g)", what, i, got[i], want[i], d)
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d mismatches in all", what, bad)
	}
}

// gradFile returns p's gradient in file (PyTorch) order.
func gradFile(p *Param) []float32 {
	out := make([]float32, len(p.Grad))
	for i, g := range p.Grad {
		out[p.fileIndex(i)] = g
	}
	return out
}

func dataFile(p *Param) []float32 {
	out := make([]float32, len(p.Data))
	p.ToFile(out)
	return out
}

func TestPyTorchReference(t *testing.T) {
	for _, name := range []string{"tiny_az", "tiny_ppo", "tiny_az3", "tiny_ppo3", "tiny_az1", "tiny_ppo1"} {
		t.Run(name, func(t *testing.T) {
			net, err := Load(filepath.Join("testdata", name+".safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			io := readRef(t, name+"_io.safetensors")
			// Inference with folded batch norm.
			in := refTensor(t, io, "eval.input")
			wantP, wantV := refTensor(t, io, "eval.policy"), refTensor(t, io, "eval.value")
			vs := net.ValueSize()
			if want := map[bool]int{true: 3, false: 1}[strings.HasSuffix(name, "3")]; vs != want {
				t.Fatalf("value size %d, want %d", vs, want)
			}
			batch := len(wantV) / vs
			p, v := make([]float32, batch*net.PolicySize()), make([]float32, batch*vs)
			net.Forward(batch, in, p, v)
			closeTo(t, "eval policy", p, wantP, 1e-4)
			closeTo(t, "eval value", v, wantV, 1e-4)

			// Training mode: loss, gradients, running statistics.
			l2 := refTensor(t, io, "train.l2")[0]
			b := &Batch{Input: refTensor(t, io, "train.input"), Policy: refTensor(t, io, "train.policy_target"),
				Value: refTensor(t, io, "train.value_target"), Legal: refTensor(t, io, "train.legal")}
			b.N = len(b.Value) / vs
			tr := &Trainer{Net: net, L2: float64(l2)}
			loss, err := tr.Compute(b)
			if err != nil {
				t.Fatal(err)
			}
			closeTo(t, "train logits", tr.logits[:b.N*net.PolicySize()], refTensor(t, io, "train.logits"), 1e-4)
			closeTo(t, "train value", tr.values[:b.N*vs], refTensor(t, io, "train.value"), 1e-4)
			wl := refTensor(t, io, "train.loss")
			closeTo(t, "loss [total policy value l2]", []float32{float32(loss.Total), float32(loss.Policy), float32(loss.Value), float32(loss.L2)}, wl, 1e-4)
			grads := 0
			for _, prm := range net.Params() {
				if prm.Grad != nil {
					closeTo(t, "grad "+prm.Name, gradFile(prm), refTensor(t, io, "grad."+prm.Name), 1e-4)
					grads++
				} else if strings.Contains(prm.Name, "running") {
					closeTo(t, "after "+prm.Name, dataFile(prm), refTensor(t, io, "after."+prm.Name), 1e-4)
				}
			}
			if grads < 8 {
				t.Errorf("only %d gradients compared", grads)
			}
		})
	}
}

func TestLSTMPyTorchReference(t *testing.T) {
	f := readRef(t, "lstm.safetensors")
	x := refTensor(t, f, "x")
	l := NewLSTMCell("lstm.", 3, 4, 1)
	for _, p := range l.Params() {
		if err := p.FromFile(refTensor(t, f, p.Name)); err != nil {
			t.Fatal(err)
		}
	}
	batch := len(x) / 3
	h0, c0 := refTensor(t, f, "h0"), refTensor(t, f, "c0")
	h1, c1 := make([]float32, batch*4), make([]float32, batch*4)
	step := l.NewStep(batch)
	if err := l.Forward(batch, x, h0, c0, h1, c1, step, nil); err != nil {
		t.Fatal(err)
	}
	closeTo(t, "h1", h1, refTensor(t, f, "h1"), 1e-5)
	closeTo(t, "c1", c1, refTensor(t, f, "c1"), 1e-5)
	dx, dh0, dc0 := make([]float32, len(x)), make([]float32, len(h0)), make([]float32, len(c0))
	if err := l.Backward(step, refTensor(t, f, "rh"), refTensor(t, f, "rc"), dx, dh0, dc0); err != nil {
		t.Fatal(err)
	}
	closeTo(t, "dx", dx, refTensor(t, f, "dx"), 1e-5)
	closeTo(t, "dh0", dh0, refTensor(t, f, "dh0"), 1e-5)
	closeTo(t, "dc0", dc0, refTensor(t, f, "dc0"), 1e-5)
	for _, p := range l.Params() {
		closeTo(t, "grad "+p.Name, gradFile(p), refTensor(t, f, "grad."+p.Name), 1e-5)
	}
}
