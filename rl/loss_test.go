package rl

import (
	"math"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

var testLossOptions = LossOptions{ClipRange: 0.2, ValueClip: 0.3, ValueCoef: 0.7, EntropyCoef: 0.05, NormalizeAdvantages: true}

// randomMinibatch makes B samples of P actions with random legal masks
// (action 0 always legal), logits, values, old log-probabilities that put
// the ratios on both sides of the clip range, advantages and returns. It
// keeps every sample at least margin away from the kinks of the clipped
// objectives, where finite differences are meaningless.
func randomMinibatch(B, P int, o LossOptions, seed uint64) (*Minibatch, []float32, []float32) {
	rng := games.NewRand(seed)
	mb := &Minibatch{B: B, P: P, Legal: make([]float32, B*P), Action: make([]int32, B), OldLogProb: make([]float32, B),
		OldValue: make([]float32, B), Advantage: make([]float32, B), Return: make([]float32, B)}
	logits, values := make([]float32, B*P), make([]float32, B)
	const margin = 0.02
	for i := 0; i < B; i++ {
	retry:
		var legal []int
		for a := range P {
			mb.Legal[i*P+a] = 0
			if a == 0 || rng.Float64() < 0.6 {
				mb.Legal[i*P+a] = 1
				legal = append(legal, a)
			}
			logits[i*P+a] = float32(2 * rng.NormFloat64())
		}
		a := legal[rng.IntN(len(legal))]
		mb.Action[i] = int32(a)
		mx, z := math.Inf(-1), 0.0
		for _, j := range legal {
			mx = math.Max(mx, float64(logits[i*P+j]))
		}
		for _, j := range legal {
			z += math.Exp(float64(logits[i*P+j]) - mx)
		}
		logp := float64(logits[i*P+a]) - mx - math.Log(z)
		r := math.Exp(0.6 * rng.NormFloat64()) // ratio
		mb.OldLogProb[i] = float32(logp - math.Log(r))
		r = math.Exp(logp - float64(mb.OldLogProb[i]))
		if math.Abs(r-(1-o.ClipRange)) < margin || math.Abs(r-(1+o.ClipRange)) < margin {
			goto retry
		}
		values[i] = float32(rng.Float64()*2 - 1)
		mb.OldValue[i] = float32(rng.Float64()*2 - 1)
		mb.Return[i] = float32(rng.Float64()*2 - 1)
		mb.Advantage[i] = float32(rng.NormFloat64())
		d := float64(values[i] - mb.OldValue[i])
		dc := float64(mb.OldValue[i]) + math.Min(math.Max(d, -o.ValueClip), o.ValueClip) - float64(mb.Return[i])
		du := float64(values[i] - mb.Return[i])
		if math.Abs(math.Abs(d)-o.ValueClip) < margin || math.Abs(dc*dc-du*du) < margin {
			goto retry
		}
	}
	return mb, logits, values
}

// The gradient of Loss against central finite differences in its inputs,
// logits and values, with and without the optional terms.
func TestLossGradientFiniteDifferences(t *testing.T) {
	const B, P, h = 24, 6, 1e-3
	for name, o := range map[string]LossOptions{
		"full":  testLossOptions,
		"plain": {ClipRange: 0.1, ValueCoef: 0.5},
	} {
		t.Run(name, func(t *testing.T) {
			mb, logits, values := randomMinibatch(B, P, o, 11)
			dl, dv := make([]float32, B*P), make([]float32, B)
			st, err := Loss(o, mb, logits, values, dl, dv)
			if err != nil {
				t.Fatal(err)
			}
			if st.ClipFrac == 0 || st.ClipFrac == 1 {
				t.Fatalf("clip fraction %g: the data do not exercise both branches", st.ClipFrac)
			}
			scratchL, scratchV := make([]float32, B*P), make([]float32, B)
			loss := func() float64 {
				s, err := Loss(o, mb, logits, values, scratchL, scratchV)
				if err != nil {
					t.Fatal(err)
				}
				return s.Total
			}
			fd := func(x *float32) float64 {
				x0 := *x
				*x = x0 + h
				up, hi := loss(), *x
				*x = x0 - h
				down, lo := loss(), *x
				*x = x0
				return (up - down) / float64(hi-lo)
			}
			for i := range logits {
				if mb.Legal[i] == 0 {
					if dl[i] != 0 {
						t.Fatalf("logit %d is illegal but has gradient %g", i, dl[i])
					}
					continue
				}
				if g := fd(&logits[i]); !near(float64(dl[i]), g, 1e-4) {
					t.Errorf("dlogit %d: %g, finite differences %g", i, dl[i], g)
				}
			}
			for i := range values {
				if g := fd(&values[i]); !near(float64(dv[i]), g, 1e-4) {
					t.Errorf("dvalue %d: %g, finite differences %g", i, dv[i], g)
				}
			}
		})
	}
}

// The same loss through a tiny HeadPPO net: the parameter gradients that
// Backward gives from Loss's output gradients against finite differences
// of the whole loss (float32 forward passes and a clipped objective: 5%
// tolerance, as in the nets package's own check).
func TestLossThroughNet(t *testing.T) {
	cfg := nets.Config{Head: nets.HeadPPO, InputPlanes: 2, Height: 3, Width: 3, PolicySize: 6, ConvChannels: []int{3}, Dense: 8}
	net, err := nets.New(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	const B = 8
	o := testLossOptions
	mb, _, _ := randomMinibatch(B, cfg.PolicySize, o, 12)
	rng := games.NewRand(13)
	input := make([]float32, B*cfg.InputSize())
	for i := range input {
		input[i] = float32(rng.Float64())
	}
	logits, values := make([]float32, B*cfg.PolicySize), make([]float32, B)
	dl, dv := make([]float32, B*cfg.PolicySize), make([]float32, B)
	loss := func() float64 {
		if err := net.ForwardTrain(B, input, logits, values); err != nil {
			t.Fatal(err)
		}
		st, err := Loss(o, mb, logits, values, dl, dv)
		if err != nil {
			t.Fatal(err)
		}
		return st.Total
	}
	// Old log-probabilities near the net's own, so that some ratios are
	// clipped and some not.
	loss()
	for i := range B {
		a := int(mb.Action[i])
		var probs [6]float32
		m := games.NewMask(cfg.PolicySize)
		for j := range cfg.PolicySize {
			if mb.Legal[i*cfg.PolicySize+j] != 0 {
				m.Set(games.Action(j))
			}
		}
		nets.MaskedSoftmax(logits[i*cfg.PolicySize:(i+1)*cfg.PolicySize], m, probs[:])
		mb.OldLogProb[i] = float32(math.Log(float64(probs[a])) + 0.4*rng.NormFloat64())
	}
	loss()
	net.ZeroGrad()
	if err := net.Backward(dl, dv); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range net.Params() {
		if p.Grad == nil {
			continue
		}
		for k := 0; k < len(p.Data); k += 1 + len(p.Data)/7 {
			const h = 1e-3
			x0 := p.Data[k]
			p.Data[k] = x0 + h
			up := loss()
			p.Data[k] = x0 - h
			down := loss()
			p.Data[k] = x0
			g := (up - down) / (2 * h)
			if math.Abs(float64(p.Grad[k])-g) > 0.05*math.Max(math.Abs(g), 0.02) {
				t.Errorf("%s[%d]: backward %g, finite differences %g", p.Name, k, p.Grad[k], g)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d entries", checked)
	}
}

func TestLossErrors(t *testing.T) {
	mb, logits, values := randomMinibatch(4, 3, testLossOptions, 1)
	dl, dv := make([]float32, 12), make([]float32, 4)
	if _, err := Loss(LossOptions{}, mb, logits, values, dl, dv); err == nil {
		t.Error("zero clip range accepted")
	}
	if _, err := Loss(testLossOptions, mb, logits[:5], values, dl, dv); err == nil {
		t.Error("short logits accepted")
	}
	mb.Action[2] = 7
	if _, err := Loss(testLossOptions, mb, logits, values, dl, dv); err == nil {
		t.Error("out-of-range action accepted")
	}
}
