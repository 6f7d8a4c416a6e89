package rl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// Options configures PPO. Start from DefaultOptions; NewPPO validates and
// fills nothing in.
type Options struct {
	// Steps is T, the rollout length per environment per update (the
	// batch is T x N samples).
	Steps int
	// Gamma is the discount, Lambda GAE's lambda.
	Gamma, Lambda float64
	// Loss holds the loss coefficients.
	Loss LossOptions
	// Epochs passes over each rollout, split into Minibatches shuffled
	// minibatches of near-equal size.
	Epochs, Minibatches int
	// MaxGradNorm clips the global L2 norm of the gradient (PyTorch's
	// clip_grad_norm_); 0 disables clipping.
	MaxGradNorm float64
	// LR is Adam's learning rate and AdamEps its epsilon.
	LR, AdamEps float64
	// WeightDecay is Adam's L2 weight decay in PyTorch's coupled form
	// (torch.optim.Adam's weight_decay; see nets.Adam.WeightDecay): added
	// to every parameter's gradient after gradient clipping. Study 000
	// uses 1e-5; 0 (the default) is none.
	WeightDecay float64
	// AnnealUpdates, when > 0, anneals the learning rate linearly from LR
	// to 0 over that many updates (Schulman et al. 2017, Atari setup).
	// Studies 000 and 002 keep it constant (0).
	AnnealUpdates int
	// EntropyDecayUpdates, when > 0, moves the entropy coefficient
	// linearly from Loss.EntropyCoef to EntropyFinal over that many
	// updates and keeps it there (study 000, section 4: 0.01 to 0.001
	// over the first 40% of the updates). Study 002 keeps it constant.
	EntropyDecayUpdates int
	EntropyFinal        float64
	// FreshGames starts every update with new games in every environment,
	// from random streams (environments, opponents' picks, sampling,
	// shuffling, and opponents that are Reseeders) derived from Seed and
	// the update number alone; the last
	// unfinished game of each environment is bootstrapped by GAE and then
	// dropped. Together with the optimizer state (AdamState) it makes a
	// resumed run identical to an uninterrupted one. Off, games run on
	// across updates and one stream continues from NewPPO.
	FreshGames bool
	// Seed seeds action sampling and minibatch shuffles.
	Seed uint64
}

// DefaultOptions returns study 002's settings (section 5.1: learning rate
// 2.5e-4, entropy coefficient 0.03, 512 steps per environment) with the
// usual PPO values for what the study does not state (Schulman et al.
// 2017 / CleanRL: gamma 0.99, lambda 0.95, clip 0.2, value coefficient
// 0.5, 4 epochs of 4 minibatches, gradient norm 0.5, Adam epsilon 1e-5,
// advantage normalisation on).
func DefaultOptions() Options {
	return Options{
		Steps: 512, Gamma: 0.99, Lambda: 0.95,
		Loss:   LossOptions{ClipRange: 0.2, ValueCoef: 0.5, EntropyCoef: 0.03, NormalizeAdvantages: true},
		Epochs: 4, Minibatches: 4, MaxGradNorm: 0.5, LR: 2.5e-4, AdamEps: 1e-5,
	}
}

// Validate reports the first invalid option.
func (o Options) Validate() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case o.Steps < 1 || o.Steps > 1<<20:
		return fmt.Errorf("rl: steps = %d, want 1..%d", o.Steps, 1<<20)
	case !(o.Gamma >= 0 && o.Gamma <= 1) || !(o.Lambda >= 0 && o.Lambda <= 1):
		return fmt.Errorf("rl: gamma = %g, lambda = %g, want both in [0, 1]", o.Gamma, o.Lambda)
	case !(o.Loss.ClipRange > 0) || !finite(o.Loss.ClipRange):
		return fmt.Errorf("rl: clip range = %g, want > 0", o.Loss.ClipRange)
	case !(o.Loss.ValueClip >= 0) || !(o.Loss.ValueCoef >= 0) || !(o.Loss.EntropyCoef >= 0) ||
		!finite(o.Loss.ValueClip+o.Loss.ValueCoef+o.Loss.EntropyCoef):
		return fmt.Errorf("rl: value clip %g, value coefficient %g, entropy coefficient %g: want finite and >= 0",
			o.Loss.ValueClip, o.Loss.ValueCoef, o.Loss.EntropyCoef)
	case o.Epochs < 1 || o.Epochs > 1000:
		return fmt.Errorf("rl: epochs = %d, want 1..1000", o.Epochs)
	case o.Minibatches < 1:
		return fmt.Errorf("rl: minibatches = %d, want >= 1", o.Minibatches)
	case !(o.MaxGradNorm >= 0) || !finite(o.MaxGradNorm):
		return fmt.Errorf("rl: max grad norm = %g, want >= 0 (0 disables)", o.MaxGradNorm)
	case !(o.LR > 0) || !finite(o.LR) || !(o.AdamEps > 0) || !finite(o.AdamEps):
		return fmt.Errorf("rl: learning rate %g, Adam epsilon %g: want > 0", o.LR, o.AdamEps)
	case !(o.WeightDecay >= 0) || !finite(o.WeightDecay):
		return fmt.Errorf("rl: weight decay %g: want finite and >= 0 (0 disables)", o.WeightDecay)
	case o.AnnealUpdates < 0:
		return fmt.Errorf("rl: anneal updates = %d, want >= 0", o.AnnealUpdates)
	case o.EntropyDecayUpdates < 0 || !(o.EntropyFinal >= 0) || !finite(o.EntropyFinal):
		return fmt.Errorf("rl: entropy decay over %d updates to %g: want >= 0 updates and a finite final coefficient >= 0",
			o.EntropyDecayUpdates, o.EntropyFinal)
	}
	return nil
}

// Rollout is T steps of N environments, time-major (sample t*N+e).
type Rollout struct {
	T, N, ObsSize, P int
	Obs              []float32 // T*N x ObsSize
	Legal            []float32 // T*N x P, 1 legal / 0 illegal
	Action           []int32
	LogProb          []float32 // log pi_old(a|s)
	Value            []float32 // V_old(s), from the learner's side
	Reward           []float32
	Done             []bool    // the step ended its episode
	LastValue        []float32 // N values of the states after the last step
	Advantage        []float32 // filled by GAE
	Return           []float32 // value targets, filled by GAE
}

// NewRollout allocates a rollout buffer.
func NewRollout(T, N, obsSize, P int) *Rollout {
	n := T * N
	return &Rollout{T: T, N: N, ObsSize: obsSize, P: P,
		Obs: make([]float32, n*obsSize), Legal: make([]float32, n*P), Action: make([]int32, n),
		LogProb: make([]float32, n), Value: make([]float32, n), Reward: make([]float32, n), Done: make([]bool, n),
		LastValue: make([]float32, N), Advantage: make([]float32, n), Return: make([]float32, n)}
}

// UpdateStats summarises one PPO update (means over its minibatches).
type UpdateStats struct {
	Loss              LossStats
	GradNorm          float64 // global gradient norm before clipping
	LR                float64
	EntropyCoef       float64
	ExplainedVariance float64 // 1 - Var(R - V_old) / Var(R) over the rollout
	Episodes          EpisodeStats
	// ByKind is Episodes per opponent kind, named by Kinds.
	ByKind  []EpisodeStats
	Kinds   []string
	Samples int // samples in the rollout
}

// PPO trains a nets.Net, or study 000's nets.Recurrent (NewRecurrentPPO),
// with PPO on a VecEnv. It is not safe for concurrent use.
type PPO struct {
	// Net is the learner's network, or nil for a recurrent learner (Rec,
	// see NewRecurrentPPO); exactly one of the two is set.
	Net *nets.Net
	Rec *nets.Recurrent
	Env *VecEnv
	Opt Options
	Buf *Rollout
	// Updates counts completed updates (for the schedules).
	Updates int
	// League, when set, is the environment's Opponents: Collect syncs its
	// latest opponent with the learner (Net, or Rec for a league made by
	// NewRecurrentLeague) and sets its phase before every rollout.
	// Snapshots are the caller's (Train adds one at every checkpoint).
	League *League

	adam                    *nets.Adam
	rng                     *rand.Rand
	logits, values, probs   []float32
	actions                 []games.Action
	perm                    []int
	mbObs, mbLogits, mbVals []float32
	mbDLogits, mbDVals      []float32
	mb                      Minibatch
	rec                     *recurrentState // Rec's state and scratch
}

// NewPPO returns a PPO learner of net on env. The net must take env's
// observations and have env's action count as policy size.
func NewPPO(net *nets.Net, env *VecEnv, opt Options) (*PPO, error) {
	if net == nil || env == nil {
		return nil, errors.New("rl: NewPPO needs a net and an environment")
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if net.InputSize() != env.ObservationSize() || net.PolicySize() != env.NumActions() {
		return nil, fmt.Errorf("rl: net takes %d inputs and gives %d logits; game %s has %d-value observations and %d actions",
			net.InputSize(), net.PolicySize(), env.Game().Spec(), env.ObservationSize(), env.NumActions())
	}
	if net.ValueSize() != 1 {
		return nil, fmt.Errorf("rl: the net has a per-player value head (%d values); PPO's critic is the scalar head (a net made with value_players 1)", net.ValueSize())
	}
	N, P, O := env.N(), env.NumActions(), env.ObservationSize()
	n := opt.Steps * N
	if opt.Minibatches > n {
		return nil, fmt.Errorf("rl: %d minibatches of a %d-sample rollout", opt.Minibatches, n)
	}
	mbMax := (n + opt.Minibatches - 1) / opt.Minibatches
	p := &PPO{Net: net, Env: env, Opt: opt, Buf: NewRollout(opt.Steps, N, O, P),
		adam: newAdam(opt), rng: games.NewRand(opt.Seed),
		logits: make([]float32, N*P), values: make([]float32, N), probs: make([]float32, P),
		actions: make([]games.Action, N), perm: make([]int, n),
		mbObs: make([]float32, mbMax*O), mbLogits: make([]float32, mbMax*P), mbVals: make([]float32, mbMax),
		mbDLogits: make([]float32, mbMax*P), mbDVals: make([]float32, mbMax),
	}
	p.mb = Minibatch{P: P, Legal: make([]float32, mbMax*P), Action: make([]int32, mbMax),
		OldLogProb: make([]float32, mbMax), OldValue: make([]float32, mbMax),
		Advantage: make([]float32, mbMax), Return: make([]float32, mbMax)}
	return p, nil
}

// Collect plays Steps steps in every environment with actions sampled
// from the net's masked policy, fills Buf and its advantages and value
// targets (GAE), and returns the statistics of the episodes that ended.
func (p *PPO) Collect() (EpisodeStats, error) {
	b, env := p.Buf, p.Env
	N := b.N
	fresh, err := p.beginCollect()
	if err != nil {
		return EpisodeStats{}, err
	}
	if p.Rec != nil {
		return p.collectRecurrent(fresh)
	}
	for t := range b.T {
		p.Net.Forward(N, p.record(t), p.logits, p.values)
		if err := p.act(t); err != nil {
			return EpisodeStats{}, err
		}
	}
	p.Net.Forward(N, env.Observations(), p.logits, b.LastValue)
	if err := GAE(b.T, N, b.Reward, b.Value, b.Done, b.LastValue, p.Opt.Gamma, p.Opt.Lambda, b.Advantage, b.Return); err != nil {
		return EpisodeStats{}, err
	}
	return env.Stats(), nil
}

// beginCollect prepares a rollout: the league's phase and latest weights,
// and under FreshGames new streams and new games (reported by fresh).
func (p *PPO) beginCollect() (fresh bool, err error) {
	env := p.Env
	if l := p.League; l != nil {
		l.SetUpdate(p.Updates)
		if p.Rec != nil {
			err = l.SyncRecurrent(p.Rec)
		} else {
			err = l.Sync(p.Net)
		}
		if err != nil {
			return false, err
		}
	}
	if p.Opt.FreshGames {
		seed := UpdateSeed(p.Opt.Seed, p.Updates)
		*p.rng = *games.NewRand(seed)
		if r, ok := env.opt.Opponents.(Reseeder); ok {
			if err := r.Reseed(seed); err != nil {
				return false, err
			}
		}
		if err := env.Reseed(seed); err != nil {
			return false, err
		}
	}
	env.ResetStats()
	return p.Opt.FreshGames, nil
}

// record copies the environments' observations and legal actions into
// step t of the rollout and returns the observations.
func (p *PPO) record(t int) []float32 {
	b, env := p.Buf, p.Env
	N, P, O := b.N, b.P, b.ObsSize
	obs := env.Observations()
	base := t * N
	copy(b.Obs[base*O:(base+N)*O], obs)
	copy(b.Legal[base*P:(base+N)*P], env.LegalFloats())
	return obs
}

// act samples every environment's action at step t from p.logits (the
// masked policy), records it with its log-probability and p.values, and
// steps the environments.
func (p *PPO) act(t int) error {
	b, env := p.Buf, p.Env
	N, P := b.N, b.P
	base := t * N
	for e := range N {
		i := base + e
		legal := env.Legal(e)
		if !nets.MaskedSoftmax(p.logits[e*P:(e+1)*P], legal, p.probs) {
			return fmt.Errorf("rl: environment %d has no legal action", e)
		}
		a := sample(p.probs, legal, p.rng)
		lp := math.Log(float64(p.probs[a]))
		if math.IsNaN(lp) || math.IsInf(lp, 0) {
			return fmt.Errorf("rl: the net's policy is not finite in environment %d (log-probability %g)", e, lp)
		}
		p.actions[e] = a
		b.Action[i], b.LogProb[i], b.Value[i] = int32(a), float32(lp), p.values[e]
	}
	if err := env.Step(p.actions); err != nil {
		return err
	}
	copy(b.Reward[base:base+N], env.Rewards())
	copy(b.Done[base:base+N], env.Dones())
	return nil
}

// newAdam returns the optimizer opt describes.
func newAdam(opt Options) *nets.Adam {
	return &nets.Adam{LR: opt.LR, Eps: opt.AdamEps, WeightDecay: opt.WeightDecay}
}

// UpdateSeed is the seed of update u's streams under FreshGames.
func UpdateSeed(seed uint64, u int) uint64 {
	x := seed + uint64(u+1)*0x9E3779B97F4A7C15
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	return x ^ x>>31
}

// EntropyCoef is the entropy coefficient of update u (0-based) under the
// schedule of Options.
func (o Options) EntropyCoef(u int) float64 {
	if o.EntropyDecayUpdates <= 0 {
		return o.Loss.EntropyCoef
	}
	f := min(1, float64(u)/float64(o.EntropyDecayUpdates))
	return o.Loss.EntropyCoef*(1-f) + o.EntropyFinal*f // exact at both ends
}

// LearningRate is the learning rate of update u (0-based) under the
// schedule of Options.
func (o Options) LearningRate(u int) float64 {
	if o.AnnealUpdates <= 0 {
		return o.LR
	}
	return o.LR * max(0, 1-float64(u)/float64(o.AnnealUpdates))
}

// AdamState returns a copy of the optimizer's state (moments and step
// count, in the order of Net.Params).
func (p *PPO) AdamState() nets.AdamState { return p.adam.State(p.params()) }

// params is the learner's parameters, plain or recurrent.
func (p *PPO) params() []*nets.Param {
	if p.Rec != nil {
		return p.Rec.Params()
	}
	return p.Net.Params()
}

// SetAdamState restores a state from AdamState (of a net of the same
// architecture).
func (p *PPO) SetAdamState(s nets.AdamState) error { return p.adam.SetState(p.params(), s) }

// sample draws an action from probs restricted to legal.
func sample(probs []float32, legal games.Mask, rng *rand.Rand) games.Action {
	x := rng.Float32()
	last := games.NoAction
	for a := range legal.All() {
		last = a
		x -= probs[a]
		if x < 0 {
			return a
		}
	}
	return last
}

// minibatchLoss evaluates the PPO loss of the B gathered rows on the
// net's logits and values, writing its gradient into mbDLogits and
// mbDVals; a non-finite loss is an error (nothing may be stepped on it).
func (p *PPO) minibatchLoss(lo LossOptions, B int, logits, vals []float32) (LossStats, error) {
	P := p.Buf.P
	ls, err := Loss(lo, &p.mb, logits, vals, p.mbDLogits[:B*P], p.mbDVals[:B])
	if err != nil {
		return ls, err
	}
	if math.IsNaN(ls.Total) || math.IsInf(ls.Total, 0) {
		return ls, fmt.Errorf("rl: update %d: loss is %g", p.Updates, ls.Total)
	}
	return ls, nil
}

// gather copies sample s of Buf into row d of the minibatch.
func (p *PPO) gather(d, s int) {
	b, mb := p.Buf, &p.mb
	O, P := b.ObsSize, b.P
	copy(p.mbObs[d*O:(d+1)*O], b.Obs[s*O:(s+1)*O])
	copy(mb.Legal[d*P:(d+1)*P], b.Legal[s*P:(s+1)*P])
	mb.Action[d], mb.OldLogProb[d], mb.OldValue[d] = b.Action[s], b.LogProb[s], b.Value[s]
	mb.Advantage[d], mb.Return[d] = b.Advantage[s], b.Return[s]
}

// Update trains the net on Buf (filled by Collect): Epochs passes of
// shuffled minibatches, each a Loss, a Backward, a global-norm gradient
// clip and an Adam step.
func (p *PPO) Update() (UpdateStats, error) {
	if p.Rec != nil {
		return p.updateRecurrent()
	}
	b, o := p.Buf, p.Opt
	n, P, O := b.T*b.N, b.P, b.ObsSize
	lr := o.LearningRate(p.Updates)
	p.adam.LR = lr
	lo := o.Loss
	lo.EntropyCoef = o.EntropyCoef(p.Updates)
	st := UpdateStats{LR: lr, EntropyCoef: lo.EntropyCoef, Samples: n, ExplainedVariance: explainedVariance(b.Value[:n], b.Return[:n])}
	for i := range p.perm {
		p.perm[i] = i
	}
	count := 0
	for range o.Epochs {
		p.rng.Shuffle(n, func(i, j int) { p.perm[i], p.perm[j] = p.perm[j], p.perm[i] })
		for k := range o.Minibatches {
			idx := p.perm[k*n/o.Minibatches : (k+1)*n/o.Minibatches]
			B := len(idx)
			mb := &p.mb
			mb.B = B
			for j, s := range idx {
				p.gather(j, s)
			}
			logits, vals := p.mbLogits[:B*P], p.mbVals[:B]
			if err := p.Net.ForwardTrain(B, p.mbObs[:B*O], logits, vals); err != nil {
				return st, err
			}
			ls, err := p.minibatchLoss(lo, B, logits, vals)
			if err != nil {
				return st, err
			}
			p.Net.ZeroGrad()
			if err := p.Net.Backward(p.mbDLogits[:B*P], p.mbDVals[:B]); err != nil {
				return st, err
			}
			norm := ClipGradNorm(p.Net.Params(), o.MaxGradNorm)
			p.adam.Step(p.Net.Params())
			p.Net.Invalidate()
			st.add(ls, norm)
			count++
		}
	}
	st.mean(count)
	p.Updates++
	return st, nil
}

// add sums one minibatch's loss statistics and gradient norm into st.
func (st *UpdateStats) add(ls LossStats, norm float64) {
	st.Loss.Total += ls.Total
	st.Loss.Policy += ls.Policy
	st.Loss.Value += ls.Value
	st.Loss.Entropy += ls.Entropy
	st.Loss.ApproxKL += ls.ApproxKL
	st.Loss.ClipFrac += ls.ClipFrac
	st.GradNorm += norm
}

// mean turns the sums of count minibatches into means.
func (st *UpdateStats) mean(count int) {
	inv := 1 / float64(count)
	st.Loss.Total *= inv
	st.Loss.Policy *= inv
	st.Loss.Value *= inv
	st.Loss.Entropy *= inv
	st.Loss.ApproxKL *= inv
	st.Loss.ClipFrac *= inv
	st.GradNorm *= inv
}

// Iterate is one Collect followed by one Update.
func (p *PPO) Iterate() (UpdateStats, error) {
	ep, err := p.Collect()
	if err != nil {
		return UpdateStats{}, err
	}
	byKind := p.Env.StatsByKind()
	st, err := p.Update()
	st.Episodes, st.ByKind, st.Kinds = ep, byKind, p.Env.Kinds()
	return st, err
}

// ClipGradNorm scales the gradients of params so that their global L2
// norm is at most maxNorm (PyTorch's clip_grad_norm_: scale maxNorm /
// (norm + 1e-6) when it is below 1) and returns the norm before clipping.
// maxNorm 0 only measures.
func ClipGradNorm(params []*nets.Param, maxNorm float64) float64 {
	var ss float64
	for _, p := range params {
		for _, g := range p.Grad {
			ss += float64(g) * float64(g)
		}
	}
	norm := math.Sqrt(ss)
	if maxNorm > 0 {
		if c := maxNorm / (norm + 1e-6); c < 1 {
			for _, p := range params {
				for i := range p.Grad {
					p.Grad[i] = float32(float64(p.Grad[i]) * c)
				}
			}
		}
	}
	return norm
}

// explainedVariance is 1 - Var(ret - v) / Var(ret) (NaN when Var(ret) is 0).
func explainedVariance(v, ret []float32) float64 {
	var mr, md float64
	for i := range ret {
		mr += float64(ret[i])
		md += float64(ret[i] - v[i])
	}
	n := float64(len(ret))
	mr, md = mr/n, md/n
	var vr, vd float64
	for i := range ret {
		vr += (float64(ret[i]) - mr) * (float64(ret[i]) - mr)
		d := float64(ret[i]-v[i]) - md
		vd += d * d
	}
	if vr == 0 {
		return math.NaN()
	}
	return 1 - vd/vr
}
