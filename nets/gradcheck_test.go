package nets

import (
	"fmt"
	"math"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// tinyConfigs exercise every layer type: 3x3 conv (stem, blocks, PPO
// convs with bias), 1x1 conv (heads), batch norm, ReLU, residual, dense,
// tanh, and the masked softmax cross-entropy.
var tinyConfigs = map[string]Config{
	"alphazero": {Head: HeadAlphaZero, InputPlanes: 2, Height: 3, Width: 3, PolicySize: 4, Channels: 3, Blocks: 1, ValueHidden: 3},
	"ppo":       {Head: HeadPPO, InputPlanes: 2, Height: 3, Width: 3, PolicySize: 4, ConvChannels: []int{3, 2}, Dense: 5},
	// Per-player value heads (three outputs per sample).
	"alphazero3": {Head: HeadAlphaZero, InputPlanes: 2, Height: 3, Width: 3, PolicySize: 4, Channels: 3, Blocks: 1, ValueHidden: 3, ValuePlayers: 3},
	"ppo3":       {Head: HeadPPO, InputPlanes: 2, Height: 3, Width: 3, PolicySize: 4, ConvChannels: []int{3, 2}, Dense: 5, ValuePlayers: 3},
	// A board of one cell: the 3x3 convolutions run as their centre tap's
	// GEMM (unit.pointwise); the other taps' gradients are zero.
	"alphazero1x1": {Head: HeadAlphaZero, InputPlanes: 5, Height: 1, Width: 1, PolicySize: 4, Channels: 3, Blocks: 1, ValueHidden: 3},
	"ppo1x1":       {Head: HeadPPO, InputPlanes: 5, Height: 1, Width: 1, PolicySize: 4, ConvChannels: []int{6, 6}, Dense: 8},
}

// randomBatch makes n samples with random inputs, a random legal mask (the
// first action always legal), a target distribution over the legal actions
// and value targets in [-1, 1].
func randomBatch(cfg Config, n int, seed uint64) *Batch {
	rng := games.NewRand(seed)
	P := cfg.PolicySize
	b := &Batch{N: n, Input: make([]float32, n*cfg.InputSize()), Policy: make([]float32, n*P),
		Value: make([]float32, n*cfg.ValueSize()), Legal: make([]float32, n*P)}
	for i := range b.Input {
		b.Input[i] = float32(rng.NormFloat64())
	}
	for i := 0; i < n; i++ {
		sum := float32(0)
		for a := 0; a < P; a++ {
			if a == 0 || rng.Float64() < 0.7 {
				b.Legal[i*P+a] = 1
				b.Policy[i*P+a] = float32(rng.Float64())
				sum += b.Policy[i*P+a]
			}
		}
		for a := 0; a < P; a++ {
			b.Policy[i*P+a] /= sum
		}
		for k := range cfg.ValueSize() {
			b.Value[i*cfg.ValueSize()+k] = float32(2*rng.Float64() - 1)
		}
	}
	return b
}

// Every parameter gradient of the whole loss against central finite
// differences. float32 forward passes limit the precision, so the step is
// 1e-3 and the tolerance a few percent; an error in any backward formula
// (conv, BN, residual, dense, softmax) is off by far more.
func TestGradientFiniteDifferences(t *testing.T) {
	for name, cfg := range tinyConfigs {
		t.Run(name, func(t *testing.T) {
			net, err := New(cfg, 7)
			if err != nil {
				t.Fatal(err)
			}
			// Non-trivial batch norm affine parameters.
			rng := games.NewRand(3)
			for _, p := range net.Params() {
				if p.Grad != nil && !p.Decay {
					for i := range p.Data {
						p.Data[i] += float32(0.3 * rng.NormFloat64())
					}
				}
			}
			b := randomBatch(cfg, 5, 11)
			tr := &Trainer{Net: net, L2: 1e-2, ValueWeight: 0.7}
			if _, err := tr.Compute(b); err != nil {
				t.Fatal(err)
			}
			analytic := map[*Param][]float32{}
			for _, p := range net.Params() {
				if p.Grad != nil {
					analytic[p] = append([]float32(nil), p.Grad...)
				}
			}
			const eps = 1e-3
			checked, bad := 0, 0
			for _, p := range net.Params() {
				if p.Grad == nil {
					continue
				}
				for i := range p.Data {
					orig := p.Data[i]
					p.Data[i] = orig + eps
					lp, _ := tr.Compute(b)
					p.Data[i] = orig - eps
					lm, _ := tr.Compute(b)
					p.Data[i] = orig
					num := (lp.Total - lm.Total) / (2 * eps)
					got := float64(analytic[p][i])
					checked++
					if math.Abs(num-got) > 3e-2*math.Max(math.Abs(num), math.Abs(got))+2e-3 {
						bad++
						if bad <= 8 {
							t.Errorf("%s[%d]: backward %.6f, finite difference %.6f", p.Name, i, got, num)
						}
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d gradient entries disagree", bad, checked)
			}
			t.Logf("%d gradient entries checked", checked)
		})
	}
}

func TestLSTMGradientFiniteDifferences(t *testing.T) {
	const batch, in, hid = 3, 4, 5
	l := NewLSTMCell("", in, hid, 9)
	rng := games.NewRand(5)
	randv := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	x, h0, c0, rh, rc := randv(batch*in), randv(batch*hid), randv(batch*hid), randv(batch*hid), randv(batch*hid)
	h1, c1 := make([]float32, batch*hid), make([]float32, batch*hid)
	loss := func() float64 {
		if err := l.Forward(batch, x, h0, c0, h1, c1, nil, nil); err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for i := range h1 {
			s += float64(h1[i])*float64(rh[i]) + float64(c1[i])*float64(rc[i])
		}
		return s
	}
	step := l.NewStep(batch)
	if err := l.Forward(batch, x, h0, c0, h1, c1, step, nil); err != nil {
		t.Fatal(err)
	}
	dx, dh, dc := make([]float32, len(x)), make([]float32, len(h0)), make([]float32, len(c0))
	if err := l.Backward(step, rh, rc, dx, dh, dc); err != nil {
		t.Fatal(err)
	}
	check := func(name string, v, g []float32) {
		const eps = 1e-2
		for i := range v {
			o := v[i]
			v[i] = o + eps
			lp := loss()
			v[i] = o - eps
			lm := loss()
			v[i] = o
			num := (lp - lm) / (2 * eps)
			if math.Abs(num-float64(g[i])) > 1e-2*math.Max(1, math.Abs(num)) {
				t.Errorf("%s[%d]: backward %.6f, finite difference %.6f", name, i, g[i], num)
			}
		}
	}
	check("x", x, dx)
	check("h0", h0, dh)
	check("c0", c0, dc)
	for _, p := range l.Params() {
		check(p.Name, p.Data, p.Grad)
	}
}

// Training on a small fixed dataset must drive the loss down, with both
// optimizers; the Polyak average must follow the weights.
func TestTrainingReducesLoss(t *testing.T) {
	for _, opt := range []struct {
		name string
		make func() Optimizer
	}{
		{"sgd", func() Optimizer { return &SGD{LR: 0.05, Momentum: 0.9} }},
		{"adam", func() Optimizer { return &Adam{LR: 0.01} }},
	} {
		for name, cfg := range tinyConfigs {
			t.Run(fmt.Sprintf("%s/%s", opt.name, name), func(t *testing.T) {
				net, err := New(cfg, 1)
				if err != nil {
					t.Fatal(err)
				}
				avg := net.Clone()
				tr := &Trainer{Net: net, Optimizer: opt.make(), L2: 1e-4, Average: avg, AverageDecay: 0.9}
				b := randomBatch(cfg, 16, 2)
				first, err := tr.Step(b)
				if err != nil {
					t.Fatal(err)
				}
				var last Loss
				for i := 0; i < 150; i++ {
					if last, err = tr.Step(b); err != nil {
						t.Fatal(err)
					}
				}
				// The policy loss cannot go below the targets' entropy;
				// compare the excess over it.
				ent := 0.0
				for _, p := range b.Policy {
					if p > 0 {
						ent -= float64(p) * math.Log(float64(p)) / float64(b.N)
					}
				}
				ex0, ex1 := first.Total-ent, last.Total-ent
				if !(ex1 < 0.5*ex0) {
					t.Errorf("loss above target entropy went %.4f -> %.4f (%v -> %v)", ex0, ex1, first, last)
				}
				// The average lags the weights but has moved from the start.
				w, a := net.Params()[0].Data, avg.Params()[0].Data
				diff := 0.0
				for i := range w {
					diff += math.Abs(float64(w[i] - a[i]))
				}
				if diff == 0 || diff > 1e3 {
					t.Errorf("Polyak average distance %g", diff)
				}
			})
		}
	}
}

func TestPolyakHand(t *testing.T) {
	cfg := tinyConfigs["ppo"]
	a, _ := New(cfg, 1)
	b, _ := New(cfg, 2)
	for _, p := range a.Params() {
		for i := range p.Data {
			p.Data[i] = 2
		}
	}
	for _, p := range b.Params() {
		for i := range p.Data {
			p.Data[i] = 4
		}
	}
	if err := a.Polyak(b, 0.75); err != nil {
		t.Fatal(err)
	}
	for _, p := range a.Params() {
		for _, v := range p.Data {
			if v != 2.5 { // 0.75*2 + 0.25*4
				t.Fatalf("%s = %v, want 2.5", p.Name, v)
			}
		}
	}
	other, _ := New(tinyConfigs["alphazero"], 1)
	if err := a.Polyak(other, 0.5); err == nil {
		t.Error("Polyak across architectures: no error")
	}
}
