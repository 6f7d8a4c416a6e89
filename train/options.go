package train

import (
	"fmt"
	"math"

	"github.com/canopy-go/canopy/kernels"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/spec"
)

// Schedule names a learning-rate schedule.
type Schedule string

const (
	// Constant keeps Options.LR.
	Constant Schedule = "constant"
	// Step multiplies the rate by StepGamma every StepEvery steps.
	Step Schedule = "step"
	// Cosine anneals from LR to FinalLR along half a cosine over the steps
	// after the warm-up.
	Cosine Schedule = "cosine"
)

// Optimizer names.
const (
	SGD  = "sgd"  // SGD with (PyTorch-style) momentum
	Adam = "adam" // Adam with bias correction
)

// Options configure Run. DefaultOptions gives the defaults; the CLI flags
// of `canopy train` are these fields, and the names in Check's errors are
// those flags'.
type Options struct {
	Steps int `json:"steps"` // optimizer steps in this run
	Batch int `json:"batch"` // positions per step (>= 2: batch norm)

	LR       float64  `json:"lr"`          // peak learning rate
	Schedule Schedule `json:"lr_schedule"` // constant, step or cosine
	// Warmup ramps the rate linearly from LR/Warmup to LR over the first
	// Warmup steps (0: none); the schedule runs after it.
	Warmup int `json:"warmup"`
	// StepEvery and StepGamma shape the step schedule: the rate is
	// multiplied by StepGamma every StepEvery steps after the warm-up
	// (StepEvery 0: a third of the steps).
	StepEvery int     `json:"lr_step_every"`
	StepGamma float64 `json:"lr_step_gamma"`
	// FinalLR is where the cosine schedule ends.
	FinalLR float64 `json:"lr_final"`

	Optimizer string `json:"optimizer"` // "sgd" or "adam"
	// Precision is the format of the 3x3 convolutions' products
	// (nets.Net.SetTrainPrecision): FP32, the default (left out of the
	// checkpoint metadata, which stays as it was), or BF16, which Check
	// refuses on a CPU without AVX-512 BF16.
	Precision nets.Precision `json:"precision,omitempty"`
	Momentum  float64        `json:"momentum"` // SGD momentum (Adam uses beta1 0.9)
	L2        float64        `json:"l2"`       // weight of the L2 penalty on conv and dense weights
	// ValueWeight scales the value loss against the policy loss.
	ValueWeight float64 `json:"value_weight"`
	// QMix mixes the search's root value into the value target:
	// (1-QMix)*z + QMix*q, z the game's outcome and q the root Q of the
	// position's search for the mover (the shards' root_q). 0 trains on
	// the outcome alone (AlphaZero); KataGo-style and "Q + z" variants
	// use a mix. Shards without root_q are an error when QMix > 0 (see
	// Sampler.SetQMix).
	QMix float64 `json:"qmix,omitempty"`
	// Polyak is tau of the averaged copy: after every step
	// avg = (1-tau)*avg + tau*net (nets.Trainer.AverageDecay = 1-tau).
	// 0 keeps no averaged copy.
	Polyak float64 `json:"polyak"`
	// Augment transforms each sample by a random symmetry of the game
	// (identity included) when the game declares any.
	Augment bool   `json:"augment"`
	Seed    uint64 `json:"seed"`

	// MetricsEvery is the number of steps between progress reports (the
	// last step is always reported); 0 reports only the last step.
	MetricsEvery int `json:"metrics_every"`

	// OutDir, when not empty, is the directory of the checkpoints
	// iter-NNNN.safetensors (and iter-NNNN.avg.safetensors with Polyak)
	// numbered by Iteration. It is created when missing.
	OutDir    string `json:"-"`
	Iteration int    `json:"iteration"`
	// CheckpointEvery also saves every this many steps (0: at the end
	// only), under names of their own (StepCheckpointPaths): each save
	// replaces the previous intermediate one, and the final checkpoint
	// replaces them all. A rerun continues from the latest
	// (LatestStepCheckpoint, StartStep).
	CheckpointEvery int `json:"checkpoint_every"`
	// StartStep, when > 0, says that the network (and Average) are the
	// intermediate save after StartStep steps of this very run: Run
	// draws and discards StartStep minibatches, so that the batches and
	// the learning rate go on as they would have, and trains the
	// remaining steps. The optimizer's momentum (SGD) or moments (Adam)
	// are not saved and restart from zero, so the result is close to,
	// not bit-identical with, an uninterrupted run.
	StartStep int `json:"-"`
	// Overwrite allows replacing checkpoints of Iteration that exist
	// before the run; without it Run refuses to start.
	Overwrite bool `json:"-"`
	// Preset names the architecture in the checkpoint metadata.
	Preset string `json:"-"`
	// Parent is the checkpoint file the network comes from ("" for a
	// fresh network) and ParentInfo its metadata as LoadCheckpoint
	// returned it: the new checkpoints count positions and steps on from
	// ParentInfo's.
	Parent     string         `json:"-"`
	ParentInfo CheckpointInfo `json:"-"`
	// Average, with Polyak > 0, is the averaged network to continue (the
	// parent's .avg checkpoint); nil starts the average as a copy of the
	// network. It must have the network's architecture.
	Average *nets.Net `json:"-"`
}

// MemoryBytes is the memory, in bytes, that Run's minibatches of
// o.Batch positions take on net: the network's training scratch
// (nets.Net.TrainBytes: activations and gradients of the whole batch),
// the sampler's batch (inputs, policy targets, legal masks, values) and
// the trainer's logits and their gradients. It grows linearly with the
// batch and is what a memory guard checks before training; the dataset
// (Dataset.Len positions, already in memory when this is asked) and the
// parameters are not counted.
func (o Options) MemoryBytes(net *nets.Net) int64 {
	b, in, p := int64(o.Batch), int64(net.InputSize()), int64(net.PolicySize())
	sampler := 4 * b * (in + 2*p + 1)
	trainer := 4 * b * (2*p + 2)
	return net.TrainBytes(o.Batch) + sampler + trainer
}

// DefaultOptions are the defaults of `canopy train` (Options.Table):
// SGD with momentum 0.9 at a constant 0.02, batch 256, L2 1e-4,
// augmentation on, and a Polyak average with tau 0.005 (study 000);
// progress every 10 steps, iteration 1.
func DefaultOptions() Options {
	var o Options
	o.Table().Reset()
	o.MetricsEvery, o.Iteration = 10, 1
	return o
}

// Limits of the options (absurd values are errors, not long runs).
const (
	MaxSteps     = 1_000_000_000
	MaxBatch     = 1 << 16
	MaxIteration = 999_999
)

// Table declares the options a command sets (the flags of `canopy
// train`, and those `canopy zero` takes for its training step, by the
// same names) bound to o: key, default, range, help. Their keys are
// the flags; Check adds what a range cannot say (a bound that depends
// on another option, an open end of an interval).
func (o *Options) Table() spec.Table {
	return spec.Table{
		spec.Int("steps", &o.Steps, 1000, 1, MaxSteps, "optimizer steps"),
		spec.Int("batch", &o.Batch, 256, 2, MaxBatch, "positions per training step (batch norm needs at least 2)"),
		spec.Interval("lr", &o.LR, 0.02, "(0, 10]", "peak learning rate"),
		spec.Choice("lr-schedule", (*string)(&o.Schedule), string(Constant), []string{string(Constant), string(Step), string(Cosine)}, "learning-rate schedule"),
		spec.Int("warmup", &o.Warmup, 0, 0, MaxSteps, "linear warm-up steps of the learning rate, at most steps"),
		spec.Int("lr-step-every", &o.StepEvery, 0, 0, MaxSteps, "step schedule: steps between decays, at most steps (0 = a third of the steps)"),
		spec.Interval("lr-step-gamma", &o.StepGamma, 0.1, "(0, 1]", "step schedule: decay factor"),
		spec.Float("lr-final", &o.FinalLR, 0, 0, 10, "cosine schedule: final learning rate, at most lr"),
		spec.Choice("optimizer", &o.Optimizer, SGD, []string{SGD, Adam}, "optimizer: sgd (with momentum) or adam"),
		spec.Interval("momentum", &o.Momentum, 0.9, "[0, 1)", "SGD momentum"),
		spec.Text("precision", &o.Precision, "fp32", "fp32|bf16", "products of the 3x3 convolutions: fp32, or bf16 (bfloat16 operands, float32 sums and master weights; needs AVX-512 BF16)"),
		spec.Float("l2", &o.L2, 1e-4, 0, 1, "L2 weight on conv and dense weights"),
		spec.Interval("value-weight", &o.ValueWeight, 1, "(0, 100]", "weight of the value loss against the policy loss"),
		spec.Float("qmix", &o.QMix, 0, 0, 1, "weight w of the search's root Q in the value target (1-w)*outcome + w*Q (needs shards with root_q; 0 = the outcome alone)"),
		spec.Interval("polyak", &o.Polyak, 0.005, "[0, 1)", "tau of the Polyak-averaged copy (0 = none)"),
		spec.Bool("augment", &o.Augment, true, "augment with the game's symmetries (--augment=false to disable)"),
		spec.Uint64("seed", &o.Seed, 1, 0, math.MaxUint64, "random seed (batches, augmentation, fresh weights)"),
		spec.Int("checkpoint-every", &o.CheckpointEvery, 0, 0, MaxSteps, "steps between checkpoints: intermediate saves iter-NNNN.step-SSSSSSSSS.safetensors (0 = at the end only); an interrupted run, given the same command again, continues from the latest"),
	}
}

// Check reports the first option out of range, naming it (by its flag
// name) with its allowed range: the table's ranges (Table.Check), then
// the bounds a range cannot state.
func (o *Options) Check() error {
	c := *o // Table.Check stores what it re-validates: keep o untouched
	if err := c.Table().Check(); err != nil {
		return err
	}
	switch {
	case o.Warmup > o.Steps:
		return fmt.Errorf("warmup=%d is out of range (want 0..steps = %d)", o.Warmup, o.Steps)
	case o.StepEvery > o.Steps:
		return fmt.Errorf("lr-step-every=%d is out of range (want 0..steps = %d; 0 = a third of the steps)", o.StepEvery, o.Steps)
	case o.FinalLR > o.LR:
		return fmt.Errorf("lr-final=%g is out of range (want 0..lr = %g)", o.FinalLR, o.LR)
	case o.Precision == nets.BF16 && kernels.BF16Kernels() != "avx512bf16":
		// The portable bfloat16 code is hundreds of times slower than
		// float32: refuse rather than crawl or silently train in fp32.
		return fmt.Errorf("precision=bf16 needs a CPU with AVX-512 BF16 (the kernels in use, %q, have no bfloat16 instructions): use fp32", kernels.Current())
	case o.MetricsEvery < 0:
		return fmt.Errorf("metrics-every=%d is out of range (want >= 0 steps)", o.MetricsEvery)
	case o.Iteration < 0 || o.Iteration > MaxIteration:
		return fmt.Errorf("iter=%d is out of range (want 0..%d)", o.Iteration, MaxIteration)
	case o.StartStep < 0 || o.StartStep >= o.Steps:
		return fmt.Errorf("start step %d, want 0..%d", o.StartStep, o.Steps-1)
	}
	return nil
}

// LRAt returns the learning rate of step (0-based) under the schedule.
func (o *Options) LRAt(step int) float64 {
	if step < o.Warmup {
		return o.LR * float64(step+1) / float64(o.Warmup)
	}
	t := step - o.Warmup
	switch o.Schedule {
	case Step:
		every := o.StepEvery
		if every == 0 {
			every = max(1, o.Steps/3)
		}
		return o.LR * math.Pow(o.StepGamma, float64(t/every))
	case Cosine:
		span := max(1, o.Steps-o.Warmup)
		x := math.Min(1, float64(t)/float64(span))
		return o.FinalLR + (o.LR-o.FinalLR)*0.5*(1+math.Cos(math.Pi*x))
	}
	return o.LR
}
