package nets

import (
	"fmt"
	"math"
)

// Batch is one training batch for the AlphaZero loss.
type Batch struct {
	N      int
	Input  []float32 // N planar observations
	Policy []float32 // N x PolicySize target distributions (sum 1 over legal actions)
	// Value holds N x ValueSize targets in [-1, 1]: one per sample for the
	// scalar head, the players' returns (mover first) for a per-player
	// head (Config.ValuePlayers).
	Value []float32
	// Legal is N x PolicySize, 1 for a legal action and 0 for an illegal
	// one; nil means every action is legal. Illegal logits are excluded
	// from the softmax; a target with mass on an illegal action is an error.
	Legal []float32
}

// Loss is the value of the AlphaZero loss on a batch (means over samples).
type Loss struct {
	Total  float64
	Policy float64 // cross-entropy of the masked softmax against the target
	// Value is the mean squared error of the value: over samples, and for
	// a per-player head over samples and players (Petosa & Balch 2019,
	// "Multiplayer AlphaZero", train the value vector on squared error;
	// the mean over players keeps ValueWeight on the scale of the scalar
	// head's).
	Value float64
	L2    float64 // L2 * sum of squared conv and dense weights
}

func (l Loss) String() string {
	return fmt.Sprintf("loss %.5f (policy %.5f, value %.5f, l2 %.5f)", l.Total, l.Policy, l.Value, l.L2)
}

// Optimizer updates parameters from their gradients.
type Optimizer interface {
	// Step applies one update to every trainable parameter of params.
	Step(params []*Param)
}

// SGD is stochastic gradient descent with (PyTorch-style) momentum:
// v = Momentum*v + g; p -= LR*v.
type SGD struct {
	LR, Momentum float64
	vel          map[*Param][]float32
}

// Step implements Optimizer.
func (o *SGD) Step(params []*Param) {
	if o.vel == nil {
		o.vel = map[*Param][]float32{}
	}
	lr, mu := float32(o.LR), float32(o.Momentum)
	for _, p := range params {
		if p.Grad == nil {
			continue
		}
		v := o.vel[p]
		if v == nil {
			v = make([]float32, len(p.Data))
			o.vel[p] = v
		}
		for i, g := range p.Grad {
			v[i] = mu*v[i] + g
			p.Data[i] -= lr * v[i]
		}
	}
}

// Adam is the Adam optimizer (Kingma & Ba) with bias correction. Zero
// Beta1, Beta2, Eps take the usual 0.9, 0.999, 1e-8.
//
// WeightDecay is PyTorch's torch.optim.Adam(weight_decay=...): L2
// regularisation coupled to the gradient, g += WeightDecay * p, before
// the moments are updated, so that the decay is rescaled by Adam's
// per-parameter step like the rest of the gradient. It is not AdamW's
// decoupled decay (p -= LR * WeightDecay * p beside the Adam step). It
// applies to every parameter Step is given, biases included, as
// PyTorch's does to every parameter of its group. Gradient clipping done
// before Step does not see it (as with clip_grad_norm_ before
// optimizer.step()). Zero means none. Trainer.L2 (the AlphaZero loss of
// package train) is the same coupled form, with coefficient 2*L2 and on
// Param.Decay weights only, and is reported as a term of the loss; the
// two are separate settings.
type Adam struct {
	LR, Beta1, Beta2, Eps float64
	WeightDecay           float64
	t                     int
	m, v                  map[*Param][]float32
}

// Step implements Optimizer.
func (o *Adam) Step(params []*Param) {
	if o.m == nil {
		o.m, o.v = map[*Param][]float32{}, map[*Param][]float32{}
		if o.Beta1 == 0 {
			o.Beta1 = 0.9
		}
		if o.Beta2 == 0 {
			o.Beta2 = 0.999
		}
		if o.Eps == 0 {
			o.Eps = 1e-8
		}
	}
	o.t++
	b1, b2 := float32(o.Beta1), float32(o.Beta2)
	// 1 - beta rounded once from float64: 1 - float32(0.999) is 1.3e-5
	// off in relative terms, which would bias the second moment.
	a1, a2 := float32(1-o.Beta1), float32(1-o.Beta2)
	c1 := 1 - math.Pow(o.Beta1, float64(o.t))
	c2 := 1 - math.Pow(o.Beta2, float64(o.t))
	step := float32(o.LR * math.Sqrt(c2) / c1)
	eps := float32(o.Eps * math.Sqrt(c2))
	wd := float32(o.WeightDecay)
	for _, p := range params {
		if p.Grad == nil {
			continue
		}
		m, v := o.m[p], o.v[p]
		if m == nil {
			m, v = make([]float32, len(p.Data)), make([]float32, len(p.Data))
			o.m[p], o.v[p] = m, v
		}
		for i, g := range p.Grad {
			if wd != 0 {
				g += wd * p.Data[i] // p.Grad itself is left as it was
			}
			m[i] = b1*m[i] + a1*g
			v[i] = b2*v[i] + a2*g*g
			p.Data[i] -= step * m[i] / (float32(math.Sqrt(float64(v[i]))) + eps)
		}
	}
}

// Trainer trains a Net on the AlphaZero loss
//
//	loss = mean_i CE(target_i, softmax over legal of logits_i)
//	     + ValueWeight * mean_i (v_i - z_i)^2 + L2 * sum of squared weights
//
// (for a per-player value head the middle term is the mean over samples
// and players of (v_ip - z_ip)^2)
// and optionally keeps a Polyak-averaged copy. A Trainer is not safe for
// concurrent use.
type Trainer struct {
	Net       *Net
	Optimizer Optimizer
	// L2 multiplies the sum of squared convolution and dense weights.
	L2 float64
	// ValueWeight scales the value loss; 0 means 1.
	ValueWeight float64
	// Average, when set, is updated after every step to
	// AverageDecay*Average + (1-AverageDecay)*Net.
	Average      *Net
	AverageDecay float64

	logits, values, dlogits, dvalues []float32
}

// Compute evaluates the loss on b and sets every Param.Grad to its
// gradient (the parameters themselves are not changed, except batch-norm
// running statistics).
func (t *Trainer) Compute(b *Batch) (Loss, error) {
	n := t.Net
	P, V := n.PolicySize(), n.ValueSize()
	if err := checkLossBatch(n, b); err != nil {
		return Loss{}, err
	}
	if cap(t.logits) < b.N*P || cap(t.values) < b.N*V {
		t.logits, t.dlogits = make([]float32, b.N*P), make([]float32, b.N*P)
		t.values, t.dvalues = make([]float32, b.N*V), make([]float32, b.N*V)
	}
	logits, dlogits := t.logits[:b.N*P], t.dlogits[:b.N*P]
	values, dvalues := t.values[:b.N*V], t.dvalues[:b.N*V]
	if err := n.ForwardTrain(b.N, b.Input, logits, values); err != nil {
		return Loss{}, err
	}
	var loss Loss
	inv := 1 / float64(b.N)
	for i := 0; i < b.N; i++ {
		lg, dl, tg := logits[i*P:(i+1)*P], dlogits[i*P:(i+1)*P], b.Policy[i*P:(i+1)*P]
		var legal []float32
		if b.Legal != nil {
			legal = b.Legal[i*P : (i+1)*P]
		}
		ce, err := maskedCrossEntropy(lg, tg, legal, dl, inv)
		if err != nil {
			return Loss{}, fmt.Errorf("nets: sample %d: %v", i, err)
		}
		loss.Policy += ce * inv
	}
	vw := t.ValueWeight
	if vw == 0 {
		vw = 1
	}
	vinv := inv / float64(V) // V is 1 for the scalar head: inv exactly
	for i, v := range values {
		d := float64(v) - float64(b.Value[i])
		loss.Value += d * d * vinv
		dvalues[i] = float32(2 * vw * d * vinv)
	}
	n.ZeroGrad()
	if err := n.Backward(dlogits, dvalues); err != nil {
		return Loss{}, err
	}
	if t.L2 != 0 {
		for _, p := range n.params {
			if !p.Decay {
				continue
			}
			var s float64
			for i, w := range p.Data {
				s += float64(w) * float64(w)
				p.Grad[i] += float32(2 * t.L2 * float64(w))
			}
			loss.L2 += t.L2 * s
		}
	}
	loss.Total = loss.Policy + vw*loss.Value + loss.L2
	return loss, nil
}

// InferenceLoss returns the policy and value terms of the AlphaZero loss
// of n on b as n plays: batch norm with its running statistics (Forward),
// not the batch's own as in training. Total is Policy + Value (no L2).
// It changes nothing in n; it is for held-out data, where a training
// step's loss would mix in the update's batch statistics.
func InferenceLoss(n *Net, b *Batch) (Loss, error) {
	P, V := n.PolicySize(), n.ValueSize()
	if err := checkLossBatch(n, b); err != nil {
		return Loss{}, err
	}
	logits, values, scratch := make([]float32, b.N*P), make([]float32, b.N*V), make([]float32, P)
	n.Forward(b.N, b.Input, logits, values)
	var loss Loss
	inv := 1 / float64(b.N)
	for i := range b.N {
		var legal []float32
		if b.Legal != nil {
			legal = b.Legal[i*P : (i+1)*P]
		}
		ce, err := maskedCrossEntropy(logits[i*P:(i+1)*P], b.Policy[i*P:(i+1)*P], legal, scratch, 0)
		if err != nil {
			return Loss{}, fmt.Errorf("nets: sample %d: %v", i, err)
		}
		loss.Policy += ce * inv
		for k := i * V; k < (i+1)*V; k++ {
			d := float64(values[k]) - float64(b.Value[k])
			loss.Value += d * d * inv / float64(V)
		}
	}
	loss.Total = loss.Policy + loss.Value
	return loss, nil
}

// checkLossBatch reports a batch whose slices are too short for n.
func checkLossBatch(n *Net, b *Batch) error {
	P, V := n.PolicySize(), n.ValueSize()
	if b.N < 1 || len(b.Input) < b.N*n.InputSize() || len(b.Policy) < b.N*P || len(b.Value) < b.N*V ||
		(b.Legal != nil && len(b.Legal) < b.N*P) {
		return fmt.Errorf("nets: batch of %d has input %d, policy %d, value %d, legal %d values; want %d, %d, %d, %d",
			b.N, len(b.Input), len(b.Policy), len(b.Value), len(b.Legal), b.N*n.InputSize(), b.N*P, b.N*V, b.N*P)
	}
	return nil
}

// maskedCrossEntropy returns -sum target*log softmax(logits over legal) and
// writes its gradient times scale into grad.
func maskedCrossEntropy(logits, target, legal, grad []float32, scale float64) (float64, error) {
	mx := math.Inf(-1)
	tsum := 0.0
	for a, v := range logits {
		if legal != nil && legal[a] == 0 {
			if target[a] != 0 {
				return 0, fmt.Errorf("target puts %g on illegal action %d", target[a], a)
			}
			continue
		}
		mx = math.Max(mx, float64(v))
		tsum += float64(target[a])
	}
	if math.IsInf(mx, -1) {
		return 0, fmt.Errorf("no legal action")
	}
	var z float64
	for a, v := range logits {
		if legal == nil || legal[a] != 0 {
			z += math.Exp(float64(v) - mx)
		}
	}
	lse := mx + math.Log(z)
	var ce float64
	for a, v := range logits {
		if legal != nil && legal[a] == 0 {
			grad[a] = 0
			continue
		}
		lp := float64(v) - lse
		ce -= float64(target[a]) * lp
		grad[a] = float32((math.Exp(lp)*tsum - float64(target[a])) * scale)
	}
	return ce, nil
}

// Step computes the loss and gradient on b, applies the optimizer, and
// updates the Polyak average. It returns the loss before the update.
func (t *Trainer) Step(b *Batch) (Loss, error) {
	loss, err := t.Compute(b)
	if err != nil {
		return loss, err
	}
	t.Optimizer.Step(t.Net.params)
	t.Net.version++
	if t.Average != nil {
		if err := t.Average.Polyak(t.Net, t.AverageDecay); err != nil {
			return loss, err
		}
	}
	return loss, nil
}
