package rl

import (
	"errors"
	"fmt"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/readfile"
	"github.com/canopy-go/canopy/nets"
)

// recurrentState is what a recurrent learner carries between steps and
// keeps for training.
//
// Invariants: h and c (N x Hidden) are each environment's LSTM state
// after its last step; startNext[e] is true when environment e's next
// step is the first of a game (its state is then zeroed before that
// step). h0, c0 hold the state at the start of the rollout in the buffer
// and reset[t*N+e] whether step t of environment e began a game: with
// them, training replays every segment exactly as it was collected.
type recurrentState struct {
	h, c       []float32
	startNext  []bool
	h0, c0     []float32
	reset      []bool
	hTmp, cTmp []float32 // the bootstrap step, which must not advance h, c
	// Minibatch scratch: a group of environments' whole segments, time-major.
	mbH0, mbC0 []float32
	mbReset    []bool
}

// NewRecurrentPPO returns a PPO learner of the recurrent net (study 000's
// CNN-LSTM) on env. Each environment carries its own LSTM state, reset when
// its game starts; a rollout stores the states at its start, and training
// replays each environment's T steps from there with backpropagation
// through time truncated at the rollout's start (and at game starts).
// Minibatches are groups of whole environments: Opt.Minibatches must be
// at most env.N(). The environment must encode the net's input
// (EnvOptions.Encoding{Features: true} for study 000's net).
func NewRecurrentPPO(net *nets.Recurrent, env *VecEnv, opt Options) (*PPO, error) {
	if net == nil || env == nil {
		return nil, errors.New("rl: NewRecurrentPPO needs a net and an environment")
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if net.InputSize() != env.ObservationSize() || net.PolicySize() != env.NumActions() {
		return nil, fmt.Errorf("rl: recurrent net takes %d inputs and gives %d logits; the %s environment has %d-value observations and %d actions (use the feature encoding)",
			net.InputSize(), net.PolicySize(), env.Game().Spec(), env.ObservationSize(), env.NumActions())
	}
	N, P, O, T, H := env.N(), env.NumActions(), env.ObservationSize(), opt.Steps, net.Hidden()
	if opt.Minibatches > N {
		return nil, fmt.Errorf("rl: %d minibatches of %d environments: a recurrent learner's minibatches are groups of whole environments", opt.Minibatches, N)
	}
	envMax := (N + opt.Minibatches - 1) / opt.Minibatches
	mbMax := T * envMax
	p := &PPO{Rec: net, Env: env, Opt: opt, Buf: NewRollout(T, N, O, P),
		adam: newAdam(opt), rng: games.NewRand(opt.Seed),
		logits: make([]float32, N*P), values: make([]float32, N), probs: make([]float32, P),
		actions: make([]games.Action, N), perm: make([]int, N),
		mbObs: make([]float32, mbMax*O), mbLogits: make([]float32, mbMax*P), mbVals: make([]float32, mbMax),
		mbDLogits: make([]float32, mbMax*P), mbDVals: make([]float32, mbMax),
	}
	p.mb = Minibatch{P: P, Legal: make([]float32, mbMax*P), Action: make([]int32, mbMax),
		OldLogProb: make([]float32, mbMax), OldValue: make([]float32, mbMax),
		Advantage: make([]float32, mbMax), Return: make([]float32, mbMax)}
	r := &recurrentState{
		h: make([]float32, N*H), c: make([]float32, N*H), startNext: make([]bool, N),
		h0: make([]float32, N*H), c0: make([]float32, N*H), reset: make([]bool, T*N),
		hTmp: make([]float32, N*H), cTmp: make([]float32, N*H),
		mbH0: make([]float32, envMax*H), mbC0: make([]float32, envMax*H), mbReset: make([]bool, mbMax),
	}
	for i := range r.startNext {
		r.startNext[i] = true // NewEnv started a game everywhere
	}
	p.rec = r
	net.Reserve(1, N)
	return p, nil
}

// collectRecurrent is Collect for a recurrent learner: one Step of the
// net per environment step, the LSTM state carried per environment and
// zeroed at every game start.
func (p *PPO) collectRecurrent(fresh bool) (EpisodeStats, error) {
	b, env, r := p.Buf, p.Env, p.rec
	N := b.N
	if fresh {
		for i := range r.startNext {
			r.startNext[i] = true
		}
	}
	copy(r.h0, r.h)
	copy(r.c0, r.c)
	for t := range b.T {
		obs := p.record(t)
		copy(r.reset[t*N:(t+1)*N], r.startNext)
		if err := p.Rec.Step(N, obs, r.h, r.c, r.startNext, p.logits, p.values); err != nil {
			return EpisodeStats{}, err
		}
		if err := p.act(t); err != nil {
			return EpisodeStats{}, err
		}
		copy(r.startNext, env.Dones()) // a finished game was replaced by a new one
	}
	copy(r.hTmp, r.h)
	copy(r.cTmp, r.c)
	if err := p.Rec.Step(N, env.Observations(), r.hTmp, r.cTmp, r.startNext, p.logits, b.LastValue); err != nil {
		return EpisodeStats{}, err
	}
	if err := GAE(b.T, N, b.Reward, b.Value, b.Done, b.LastValue, p.Opt.Gamma, p.Opt.Lambda, b.Advantage, b.Return); err != nil {
		return EpisodeStats{}, err
	}
	return env.Stats(), nil
}

// updateRecurrent is Update for a recurrent learner: each minibatch is a
// shuffled group of environments, replayed over the whole rollout from
// their stored start states (truncated BPTT over the segment).
func (p *PPO) updateRecurrent() (UpdateStats, error) {
	b, o, r := p.Buf, p.Opt, p.rec
	T, N, P, O, H := b.T, b.N, b.P, b.ObsSize, p.Rec.Hidden()
	n := T * N
	lr := o.LearningRate(p.Updates)
	p.adam.LR = lr
	lo := o.Loss
	lo.EntropyCoef = o.EntropyCoef(p.Updates)
	st := UpdateStats{LR: lr, EntropyCoef: lo.EntropyCoef, Samples: n, ExplainedVariance: explainedVariance(b.Value[:n], b.Return[:n])}
	perm := p.perm[:N]
	for i := range perm {
		perm[i] = i
	}
	params := p.Rec.Params()
	count := 0
	for range o.Epochs {
		p.rng.Shuffle(N, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		for k := range o.Minibatches {
			envs := perm[k*N/o.Minibatches : (k+1)*N/o.Minibatches]
			E := len(envs)
			B := T * E
			mb := &p.mb
			mb.B = B
			for j, e := range envs {
				copy(r.mbH0[j*H:(j+1)*H], r.h0[e*H:(e+1)*H])
				copy(r.mbC0[j*H:(j+1)*H], r.c0[e*H:(e+1)*H])
			}
			for t := range T {
				for j, e := range envs {
					s, d := t*N+e, t*E+j
					p.gather(d, s)
					r.mbReset[d] = r.reset[s]
				}
			}
			logits, vals := p.mbLogits[:B*P], p.mbVals[:B]
			if err := p.Rec.ForwardTrain(T, E, p.mbObs[:B*O], r.mbH0[:E*H], r.mbC0[:E*H], r.mbReset[:B], logits, vals, nil, nil); err != nil {
				return st, err
			}
			ls, err := p.minibatchLoss(lo, B, logits, vals)
			if err != nil {
				return st, err
			}
			p.Rec.ZeroGrad()
			if err := p.Rec.Backward(p.mbDLogits[:B*P], p.mbDVals[:B]); err != nil {
				return st, err
			}
			norm := ClipGradNorm(params, o.MaxGradNorm)
			p.adam.Step(params)
			st.add(ls, norm)
			count++
		}
	}
	st.mean(count)
	p.Updates++
	return st, nil
}

// Study000Options returns study 000's recurrent PPO settings (section 4):
// Adam with learning rate 3e-4, gamma 0.99, lambda 0.95, clip 0.2, five
// epochs, rollouts of 1024 steps per environment, the entropy bonus from
// 0.01 to 0.001 over the first 40% of updates (set EntropyDecayUpdates
// from the run's length), minibatches of 2048 samples: with 16
// environments, 8 groups of 2 environments x 1024 steps, and weight decay
// 1e-5. The study writes "Adam (learning rate 3e-4, weight decay 1e-5)"
// without saying which form; Canopy takes torch.optim.Adam's coupled L2
// (Options.WeightDecay), which that phrase means in PyTorch, rather than
// AdamW's decoupled decay. What the study does not state (value
// coefficient, gradient clipping, advantage normalisation) is as in
// DefaultOptions.
func Study000Options() Options {
	o := DefaultOptions()
	o.Steps, o.LR, o.Epochs, o.Minibatches = 1024, 3e-4, 5, 8
	o.WeightDecay = 1e-5
	o.Loss.EntropyCoef, o.EntropyFinal = 0.01, 0.001
	return o
}

// saveCheckpoint writes the learner's net, plain or recurrent, as
// checkpoint info.Updates of dir.
func (p *PPO) saveCheckpoint(dir string, info CheckpointInfo) (string, error) {
	if p.Rec != nil {
		return SaveRecurrentCheckpoint(dir, p.Rec, info)
	}
	return SaveCheckpoint(dir, p.Net, info)
}

// SaveRecurrentCheckpoint is SaveCheckpoint for a recurrent net.
func SaveRecurrentCheckpoint(dir string, net *nets.Recurrent, info CheckpointInfo) (string, error) {
	return saveWeights(dir, net, info)
}

// LoadRecurrentCheckpoint reads a recurrent PPO checkpoint and its
// metadata.
func LoadRecurrentCheckpoint(path string) (*nets.Recurrent, CheckpointInfo, error) {
	return loadCheckpoint(path, nets.LoadRecurrent)
}

// recurrentFile reports whether the weights file at path holds a
// recurrent net (false when it cannot be read: the plain loader then
// reports the error).
func recurrentFile(path string) bool {
	buf, err := readfile.Regular(path, nets.MaxFileBytes)
	return err == nil && nets.IsRecurrentFile(buf)
}
