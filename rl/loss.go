package rl

import (
	"fmt"
	"math"
)

// LossOptions are the coefficients of the PPO loss.
type LossOptions struct {
	// ClipRange is epsilon of the clipped surrogate objective (0.2 in
	// Schulman et al. 2017). Must be > 0.
	ClipRange float64
	// ValueClip, when > 0, clips the value prediction to within ValueClip
	// of the rollout's value, as OpenAI baselines' PPO2 does; 0 disables.
	ValueClip float64
	// ValueCoef (c1) weighs the value loss 0.5*(V - R)^2.
	ValueCoef float64
	// EntropyCoef (c2) weighs the entropy bonus (study 002: 0.03).
	EntropyCoef float64
	// NormalizeAdvantages standardises the minibatch's advantages to mean
	// 0 and (unbiased) standard deviation 1 before use.
	NormalizeAdvantages bool
}

// Minibatch is the rollout data Loss needs for B samples.
type Minibatch struct {
	B int
	P int // policy size (actions)
	// Legal is B x P, 1 for a legal action and 0 for an illegal one.
	Legal      []float32
	Action     []int32   // B actions taken
	OldLogProb []float32 // B log pi_old(a|s) at collection
	OldValue   []float32 // B values at collection
	Advantage  []float32 // B advantages
	Return     []float32 // B value targets
}

// LossStats is the value of the PPO loss on one minibatch and its
// diagnostics (means over the minibatch).
type LossStats struct {
	Total    float64
	Policy   float64 // clipped surrogate loss -min(r A, clip(r) A)
	Value    float64 // 0.5 (V - R)^2, clipped as configured
	Entropy  float64 // entropy of the masked policy, nats
	ApproxKL float64 // mean (r - 1) - log r (Schulman's k3 estimator)
	ClipFrac float64 // fraction of samples with |r - 1| > ClipRange
}

// Loss evaluates the PPO loss (Schulman, Wolski, Dhariwal, Radford, Klimov
// 2017, "Proximal Policy Optimization Algorithms", eq. 7 and 9) on the
// network's outputs for a minibatch,
//
//	L = mean_i [ -min(r_i A_i, clip(r_i, 1-eps, 1+eps) A_i)
//	             + c1 * L^V_i - c2 * H(pi(.|s_i)) ]
//	r_i = pi(a_i|s_i) / pi_old(a_i|s_i)
//
// where pi is the softmax of logits over the legal actions only (illegal
// logits are excluded, i.e. set to -inf, as in study 002 section 4.2),
// L^V_i = 0.5 (V_i - R_i)^2, or with ValueClip > 0
// 0.5 max((V_i - R_i)^2, (V_old,i + clip(V_i - V_old,i, -c, c) - R_i)^2),
// and A_i is standardised over the minibatch with NormalizeAdvantages. It
// writes dL/dlogits (B x P, zero on illegal actions) into dLogits and
// dL/dV into dValues, the inputs of nets.Net.Backward. logits and values
// are the outputs of nets.Net.ForwardTrain (values after tanh).
//
// At the clipping boundaries the gradient is the one-sided one PyTorch
// gives torch.min/max with the unclipped term first: the unclipped term's
// gradient whenever it is the (weakly) smaller objective.
func Loss(o LossOptions, mb *Minibatch, logits, values, dLogits, dValues []float32) (LossStats, error) {
	B, P := mb.B, mb.P
	switch {
	case B < 1 || P < 1:
		return LossStats{}, fmt.Errorf("rl: loss on a minibatch of %d samples of %d actions", B, P)
	case len(mb.Legal) < B*P || len(mb.Action) < B || len(mb.OldLogProb) < B || len(mb.OldValue) < B ||
		len(mb.Advantage) < B || len(mb.Return) < B:
		return LossStats{}, fmt.Errorf("rl: minibatch of %d: legal %d (want %d), action %d, old log-prob %d, old value %d, advantage %d, return %d (want %d)",
			B, len(mb.Legal), B*P, len(mb.Action), len(mb.OldLogProb), len(mb.OldValue), len(mb.Advantage), len(mb.Return), B)
	case len(logits) < B*P || len(dLogits) < B*P || len(values) < B || len(dValues) < B:
		return LossStats{}, fmt.Errorf("rl: loss outputs: logits %d, dLogits %d (want %d), values %d, dValues %d (want %d)",
			len(logits), len(dLogits), B*P, len(values), len(dValues), B)
	case !(o.ClipRange > 0) || o.ValueClip < 0 || o.ValueCoef < 0 || o.EntropyCoef < 0 || math.IsInf(o.ValueClip+o.ValueCoef+o.EntropyCoef+o.ClipRange, 0):
		return LossStats{}, fmt.Errorf("rl: loss options %+v: want clip range > 0 and finite non-negative coefficients", o)
	}
	mean, scale := 0.0, 1.0
	if o.NormalizeAdvantages {
		for _, a := range mb.Advantage[:B] {
			mean += float64(a)
		}
		mean /= float64(B)
		var ss float64
		for _, a := range mb.Advantage[:B] {
			ss += (float64(a) - mean) * (float64(a) - mean)
		}
		std := 0.0
		if B > 1 {
			std = math.Sqrt(ss / float64(B-1))
		}
		scale = 1 / (std + 1e-8)
	}
	var st LossStats
	inv := 1 / float64(B)
	eps := o.ClipRange
	for i := range B {
		lg, dl := logits[i*P:(i+1)*P], dLogits[i*P:(i+1)*P]
		legal := mb.Legal[i*P : (i+1)*P]
		a := int(mb.Action[i])
		if a < 0 || a >= P || legal[a] == 0 {
			return LossStats{}, fmt.Errorf("rl: sample %d: action %d is not legal", i, a)
		}
		// Masked log-softmax.
		mx := math.Inf(-1)
		for j, v := range lg {
			if legal[j] != 0 {
				mx = math.Max(mx, float64(v))
			}
		}
		var z float64
		for j, v := range lg {
			if legal[j] != 0 {
				z += math.Exp(float64(v) - mx)
			}
		}
		lse := mx + math.Log(z)
		var h float64
		for j, v := range lg {
			if legal[j] != 0 {
				lp := float64(v) - lse
				h -= math.Exp(lp) * lp
			}
		}
		logp := float64(lg[a]) - lse
		if math.IsNaN(logp) || math.IsInf(logp, 0) {
			return LossStats{}, fmt.Errorf("rl: sample %d: log-probability %g is not finite", i, logp)
		}
		adv := (float64(mb.Advantage[i]) - mean) * scale
		lr := logp - float64(mb.OldLogProb[i])
		r := math.Exp(lr)
		rc := math.Min(math.Max(r, 1-eps), 1+eps)
		s1, s2 := r*adv, rc*adv
		// dPolicyLoss/dlogp: -A r when the unclipped term is the minimum.
		var dlogp float64
		if s1 <= s2 {
			st.Policy -= s1 * inv
			dlogp = -adv * r
		} else {
			st.Policy -= s2 * inv
		}
		if math.Abs(r-1) > eps {
			st.ClipFrac += inv
		}
		st.ApproxKL += ((r - 1) - lr) * inv
		st.Entropy += h * inv
		// d/dz_j of dlogp*logp - c2*H:
		// dlogp (1[j=a] - pi_j) + c2 pi_j (log pi_j + H).
		for j, v := range lg {
			if legal[j] == 0 {
				dl[j] = 0
				continue
			}
			lp := float64(v) - lse
			pj := math.Exp(lp)
			g := -dlogp*pj + o.EntropyCoef*pj*(lp+h)
			if j == a {
				g += dlogp
			}
			dl[j] = float32(g * inv)
		}
		// Value loss.
		v, R := float64(values[i]), float64(mb.Return[i])
		d := v - R
		lv, dv := 0.5*d*d, d
		if o.ValueClip > 0 {
			vo := float64(mb.OldValue[i])
			dc := vo + math.Min(math.Max(v-vo, -o.ValueClip), o.ValueClip) - R
			// Within the clip range both terms are equal, so the clipped
			// one is larger only outside it, where it is flat in V.
			if lc := 0.5 * dc * dc; lc > lv {
				lv, dv = lc, 0
			}
		}
		st.Value += lv * inv
		dValues[i] = float32(o.ValueCoef * dv * inv)
	}
	st.Total = st.Policy + o.ValueCoef*st.Value - o.EntropyCoef*st.Entropy
	return st, nil
}
