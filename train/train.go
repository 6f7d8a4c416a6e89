package train

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/canopy-go/canopy/nets"
)

// Metrics is one progress report of Run.
type Metrics struct {
	Step  int `json:"step"`  // steps done in this run
	Steps int `json:"steps"` // steps this run will do
	// Loss is the mean of the step losses since the previous report.
	Loss          nets.Loss     `json:"loss"`
	LR            float64       `json:"lr"`      // learning rate of the last step
	Samples       int64         `json:"samples"` // samples drawn in this run
	Epochs        float64       `json:"epochs"`  // passes over the dataset
	SamplesPerSec float64       `json:"samples_per_sec"`
	Elapsed       time.Duration `json:"elapsed_ns"`
}

// Result summarises a finished Run.
type Result struct {
	Steps   int     `json:"steps"`
	Samples int64   `json:"samples"`
	Epochs  float64 `json:"epochs"`
	// FirstLoss and FinalLoss are the mean losses of the first and the
	// last report intervals.
	FirstLoss     nets.Loss     `json:"first_loss"`
	FinalLoss     nets.Loss     `json:"final_loss"`
	SamplesPerSec float64       `json:"samples_per_sec"`
	Elapsed       time.Duration `json:"elapsed_ns"`
	// Checkpoint and Average are the files written ("" when Options.OutDir
	// is empty, Average "" without Polyak averaging); Info their metadata.
	Checkpoint string         `json:"checkpoint,omitempty"`
	Average    string         `json:"average,omitempty"`
	Info       CheckpointInfo `json:"info"`
	// Averaged is the Polyak-averaged network (nil without averaging).
	Averaged *nets.Net `json:"-"`
}

// DivergedError reports a non-finite loss: training stopped at Step and
// the checkpoints on disk were left as they were.
type DivergedError struct {
	Step int // 1-based step whose loss was not finite
	Loss nets.Loss
	// LastGood is the checkpoint saved last in this run ("" when none).
	LastGood string
}

func (e *DivergedError) Error() string {
	kept := "no checkpoint was written by this run"
	if e.LastGood != "" {
		kept = e.LastGood + " (saved earlier in this run) is the last good checkpoint and was left intact"
	}
	return fmt.Sprintf("training diverged at step %d: loss not finite (policy %v, value %v, l2 %v); %s; lower the learning rate or check the data",
		e.Step, e.Loss.Policy, e.Loss.Value, e.Loss.L2, kept)
}

// Run trains net in place on ds with the AlphaZero loss for opt.Steps
// steps: shuffled minibatches (see Sampler), the optimizer and learning-rate
// schedule of opt, an optional Polyak-averaged copy, and checkpoints in
// opt.OutDir. progress, when not nil, is called on Run's goroutine every
// opt.MetricsEvery steps and after the last step. It sets net's training
// precision to opt.Precision (nets.Net.SetTrainPrecision).
//
// Run stops with a *DivergedError when a step's loss is not finite, and
// never saves a network holding a NaN or infinity: the last good
// checkpoint on disk stays intact. It stops with ctx's error when ctx is
// done, without saving beyond the periodic checkpoints already written.
// net is not safe for use by others while Run works on it.
func Run(ctx context.Context, net *nets.Net, ds *Dataset, opt Options, progress func(Metrics)) (Result, error) {
	var res Result
	if err := opt.Check(); err != nil {
		return res, err
	}
	if ds == nil || ds.Len() == 0 {
		return res, fmt.Errorf("train: empty dataset")
	}
	g := ds.Game()
	if net.InputSize() != ds.obsSize || net.PolicySize() != ds.actions {
		return res, fmt.Errorf("the network takes %d inputs and %d policy outputs, but %s positions have %d and %d; use a network made for %s",
			net.InputSize(), net.PolicySize(), g.Spec(), ds.obsSize, ds.actions, g.Spec())
	}
	if cg := net.Config().Game; cg != "" && cg != g.Spec() {
		return res, fmt.Errorf("the network was made for %s, the data is %s; use a network made for %s", cg, g.Spec(), g.Spec())
	}
	if opt.OutDir != "" {
		if err := CheckOutput(opt.OutDir, opt.Iteration, opt.Overwrite); err != nil {
			return res, err
		}
	}
	sampler, err := NewSampler(ds, opt.Batch, opt.Seed, opt.Augment)
	if err != nil {
		return res, err
	}
	if err := sampler.SetQMix(opt.QMix); err != nil {
		return res, err
	}
	if err := sampler.SetValueSize(net.ValueSize()); err != nil {
		return res, err
	}
	net.SetTrainPrecision(opt.Precision)
	tr := &nets.Trainer{Net: net, L2: opt.L2, ValueWeight: opt.ValueWeight}
	var sgd *nets.SGD
	var adam *nets.Adam
	if opt.Optimizer == Adam {
		adam = &nets.Adam{LR: opt.LR}
		tr.Optimizer = adam
	} else {
		sgd = &nets.SGD{LR: opt.LR, Momentum: opt.Momentum}
		tr.Optimizer = sgd
	}
	if opt.Polyak > 0 {
		avg := opt.Average
		if avg == nil {
			avg = net.Clone()
		} else if !sameArchitecture(avg, net) {
			return res, fmt.Errorf("the averaged network's architecture %s differs from the network's %s", avg.Config().JSON(), net.Config().JSON())
		}
		tr.Average, tr.AverageDecay = avg, 1-opt.Polyak
		res.Averaged = avg
	}
	optJSON, _ := json.Marshal(opt)
	info := CheckpointInfo{Game: g.Spec(), Preset: opt.Preset, Iteration: opt.Iteration, Options: string(optJSON)}
	if opt.Parent != "" {
		info.Parent = filepath.Base(opt.Parent)
	}
	save := func(step int) error {
		info.Steps = opt.ParentInfo.Steps + int64(step)
		info.Positions = opt.ParentInfo.Positions + sampler.Drawn()
		p, a := CheckpointPaths(opt.OutDir, opt.Iteration)
		if step < opt.Steps {
			p, a = StepCheckpointPaths(opt.OutDir, opt.Iteration, step)
		}
		if err := saveCheckpointAs(p, a, net, tr.Average, info); err != nil {
			return fmt.Errorf("step %d: %v", step, err)
		}
		if tr.Average == nil {
			a = ""
		}
		res.Checkpoint, res.Average = p, a
		// The latest save supersedes the intermediate ones before it.
		return removeStepCheckpoints(opt.OutDir, opt.Iteration, step)
	}
	for range opt.StartStep { // resumed: the batches the saved steps drew
		sampler.Next()
	}

	start := time.Now()
	var acc nets.Loss
	accN := 0
	lr := opt.LR
	report := func(step int) Metrics {
		el := time.Since(start)
		inv := 1 / float64(max(accN, 1))
		m := Metrics{Step: step, Steps: opt.Steps, LR: lr, Samples: sampler.Drawn(), Epochs: sampler.Epochs(), Elapsed: el,
			Loss: nets.Loss{Total: acc.Total * inv, Policy: acc.Policy * inv, Value: acc.Value * inv, L2: acc.L2 * inv}}
		if s := el.Seconds(); s > 0 {
			m.SamplesPerSec = float64(m.Samples) / s
		}
		acc, accN = nets.Loss{}, 0
		return m
	}
	firstDone := false
	for step := opt.StartStep + 1; step <= opt.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("interrupted at step %d of %d: %w", step-1, opt.Steps, err)
		}
		lr = opt.LRAt(step - 1)
		if sgd != nil {
			sgd.LR = lr
		} else {
			adam.LR = lr
		}
		loss, err := tr.Step(sampler.Next())
		if err != nil {
			return res, fmt.Errorf("step %d: %v", step, err)
		}
		if !finiteLoss(loss) {
			return res, &DivergedError{Step: step, Loss: loss, LastGood: res.Checkpoint}
		}
		acc.Total += loss.Total
		acc.Policy += loss.Policy
		acc.Value += loss.Value
		acc.L2 += loss.L2
		accN++
		last := step == opt.Steps
		if last || (opt.MetricsEvery > 0 && step%opt.MetricsEvery == 0) {
			m := report(step)
			if !firstDone {
				res.FirstLoss, firstDone = m.Loss, true
			}
			res.FinalLoss = m.Loss
			if progress != nil {
				progress(m)
			}
		}
		if opt.OutDir != "" && (last || (opt.CheckpointEvery > 0 && step%opt.CheckpointEvery == 0)) {
			if err := save(step); err != nil {
				return res, err
			}
		}
	}
	res.Steps = opt.Steps
	res.Samples = sampler.Drawn()
	res.Epochs = sampler.Epochs()
	res.Elapsed = time.Since(start)
	if s := res.Elapsed.Seconds(); s > 0 {
		res.SamplesPerSec = float64(res.Samples) / s
	}
	info.Steps = opt.ParentInfo.Steps + int64(opt.Steps)
	info.Positions = opt.ParentInfo.Positions + res.Samples
	info.Averaged = false
	res.Info = info
	return res, nil
}

func finiteLoss(l nets.Loss) bool {
	ok := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	return ok(l.Total) && ok(l.Policy) && ok(l.Value) && ok(l.L2)
}

// sameArchitecture reports whether a and b have the same layers and shapes
// (their informational Preset and Game may differ).
func sameArchitecture(a, b *nets.Net) bool {
	ca, cb := a.Config(), b.Config()
	ca.Preset, ca.Game = cb.Preset, cb.Game
	return ca.JSON() == cb.JSON()
}
