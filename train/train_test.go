package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/kernels"
	"github.com/canopy-go/canopy/nets"
)

// tinyNet is a small AlphaZero net for g (8 channels, 1 block).
func tinyNet(t testing.TB, g games.Game, seed uint64) *nets.Net {
	t.Helper()
	cfg, err := nets.Config{Preset: "tiny", Head: nets.HeadAlphaZero, Channels: 8, Blocks: 1, ValueHidden: 8}.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	n, err := nets.New(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestOptionsCheck(t *testing.T) {
	def := DefaultOptions()
	if err := def.Check(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.Steps = 0 }, "steps=0"},
		{func(o *Options) { o.Batch = 1 }, "batch=1"},
		{func(o *Options) { o.Batch = 1 << 20 }, "batch"},
		{func(o *Options) { o.LR = math.NaN() }, `lr="NaN"`},
		{func(o *Options) { o.LR = -1 }, "lr=-1"},
		{func(o *Options) { o.LR = math.Inf(1) }, `lr="+Inf"`},
		{func(o *Options) { o.Schedule = "linear" }, "lr-schedule"},
		{func(o *Options) { o.Warmup = o.Steps + 1 }, "warmup"},
		{func(o *Options) { o.StepGamma = 2 }, "lr-step-gamma"},
		{func(o *Options) { o.FinalLR = 1 }, "lr-final"},
		{func(o *Options) { o.Optimizer = "rmsprop" }, "optimizer"},
		{func(o *Options) { o.Precision = 7 }, "precision"},
		{func(o *Options) { o.Momentum = 1 }, "momentum"},
		{func(o *Options) { o.L2 = -1e-4 }, "l2"},
		{func(o *Options) { o.ValueWeight = math.NaN() }, "value-weight"},
		{func(o *Options) { o.Polyak = 1 }, "polyak"},
		{func(o *Options) { o.Polyak = -0.1 }, "polyak"},
		{func(o *Options) { o.Iteration = -1 }, "iter"},
		{func(o *Options) { o.CheckpointEvery = -1 }, "checkpoint-every"},
	} {
		o := DefaultOptions()
		tc.change(&o)
		if err := o.Check(); err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.Contains(err.Error(), "want") {
			t.Errorf("%+v: %v, want an error starting %q and giving the range", o, err, tc.want)
		}
	}
}

// TestOptionsPrecision: bfloat16 training is refused, with a message
// that says why, on kernels without AVX-512 BF16 (here the AVX2 or
// portable ones), accepted where the CPU has it; the default (fp32) is
// left out of the options' JSON, so checkpoint metadata stays as it was.
func TestOptionsPrecision(t *testing.T) {
	o := DefaultOptions()
	o.Precision = nets.BF16
	for _, kern := range kernels.Available() {
		restore, err := kernels.Use(kern)
		if err != nil {
			t.Fatal(err)
		}
		err = o.Check()
		fast := kernels.BF16Kernels() == "avx512bf16"
		restore()
		switch {
		case fast && err != nil:
			t.Errorf("%s: %v with AVX-512 BF16", kern, err)
		case !fast && (err == nil || !strings.Contains(err.Error(), "AVX-512 BF16")):
			t.Errorf("%s: Check() = %v without AVX-512 BF16, want a refusal naming it", kern, err)
		}
	}
	def, _ := json.Marshal(DefaultOptions())
	bf, _ := json.Marshal(o)
	if strings.Contains(string(def), "precision") || !strings.Contains(string(bf), `"precision":"bf16"`) {
		t.Errorf("options JSON: fp32 %s, bf16 %s; want precision left out, then \"bf16\"", def, bf)
	}
}

func TestLRSchedules(t *testing.T) {
	o := Options{Steps: 100, LR: 1, Schedule: Constant, StepGamma: 0.5, StepEvery: 30}
	if o.LRAt(0) != 1 || o.LRAt(99) != 1 {
		t.Errorf("constant: %v %v", o.LRAt(0), o.LRAt(99))
	}
	o.Schedule = Step
	for step, want := range map[int]float64{0: 1, 29: 1, 30: 0.5, 60: 0.25, 99: 0.125} {
		if got := o.LRAt(step); got != want {
			t.Errorf("step schedule at %d: %v, want %v", step, got, want)
		}
	}
	o.Schedule, o.FinalLR, o.Warmup = Cosine, 0.1, 10
	for step, want := range map[int]float64{0: 0.1, 4: 0.5, 9: 1, 10: 1, 55: 0.55, 100: 0.1} {
		if got := o.LRAt(step); math.Abs(got-want) > 1e-12 {
			t.Errorf("cosine with warm-up at %d: %v, want %v", step, got, want)
		}
	}
}

// Training a tiny net on a small fixed dataset overfits it: the loss
// falls well below where it started, with either optimizer.
func TestLossDecreases(t *testing.T) {
	ds := loadTest(t, "connect4", 2, 11, true)
	for _, optimizer := range []string{SGD, Adam} {
		net := tinyNet(t, ds.Game(), 1)
		opt := DefaultOptions()
		opt.Steps, opt.Batch, opt.MetricsEvery, opt.Optimizer = 240, 16, 40, optimizer
		opt.LR, opt.L2 = 0.05, 0
		if optimizer == Adam {
			opt.LR = 0.01
		}
		var reports []Metrics
		res, err := Run(context.Background(), net, ds, opt, func(m Metrics) { reports = append(reports, m) })
		if err != nil {
			t.Fatal(err)
		}
		if len(reports) != 6 || reports[5].Step != 240 || reports[0].Samples != 40*16 {
			t.Fatalf("%s: reports %+v", optimizer, reports)
		}
		// The policy loss cannot fall below the targets' entropy: compare
		// the KL divergence (cross-entropy minus entropy) instead.
		h := targetEntropy(ds)
		kl0, kl1 := res.FirstLoss.Policy-h, res.FinalLoss.Policy-h
		if !(kl1 < 0.5*kl0) || !(res.FinalLoss.Value < 0.5*res.FirstLoss.Value) {
			t.Errorf("%s: policy KL %.4f -> %.4f, value loss %.4f -> %.4f; want both halved", optimizer, kl0, kl1,
				res.FirstLoss.Value, res.FinalLoss.Value)
		}
		t.Logf("%s: policy KL %.4f -> %.4f, value loss %.4f -> %.4f", optimizer, kl0, kl1, res.FirstLoss.Value, res.FinalLoss.Value)
		if res.Averaged == nil || res.Samples != 240*16 {
			t.Errorf("%s: result %+v", optimizer, res)
		}
	}
}

// targetEntropy is the mean entropy of the dataset's target policies.
func targetEntropy(ds *Dataset) float64 {
	var h float64
	for i := range ds.Len() {
		p, _, _ := ds.Row(i, make([]float32, ds.ObsSize()))
		for _, x := range p {
			if x > 0 {
				h -= float64(x) * math.Log(float64(x))
			}
		}
	}
	return h / float64(ds.Len())
}

// The same options and seed give the same weights.
func TestRunDeterministic(t *testing.T) {
	ds := loadTest(t, "tictactoe", 6, 12, true)
	weights := func() []float32 {
		net := tinyNet(t, ds.Game(), 3)
		opt := DefaultOptions()
		opt.Steps, opt.Batch = 5, 8
		if _, err := Run(context.Background(), net, ds, opt, nil); err != nil {
			t.Fatal(err)
		}
		var w []float32
		for _, p := range net.Params() {
			w = append(w, p.Data...)
		}
		return w
	}
	if !equalF32(weights(), weights()) {
		t.Error("two runs with the same seed trained different weights")
	}
}

// Checkpoints carry their lineage; a second iteration continues the
// counts of its parent; an existing checkpoint is not overwritten unless
// asked.
func TestCheckpoints(t *testing.T) {
	ds := loadTest(t, "tictactoe", 6, 13, true)
	out := filepath.Join(t.TempDir(), "ckpt")
	net := tinyNet(t, ds.Game(), 3)
	opt := DefaultOptions()
	opt.Steps, opt.Batch, opt.OutDir, opt.Iteration, opt.Preset = 4, 8, out, 1, "tiny"
	res, err := Run(context.Background(), net, ds, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	p1, a1 := CheckpointPaths(out, 1)
	if res.Checkpoint != p1 || res.Average != a1 || filepath.Base(p1) != "iter-0001.safetensors" || filepath.Base(a1) != "iter-0001.avg.safetensors" {
		t.Fatalf("paths %q %q", res.Checkpoint, res.Average)
	}
	n1, info, err := LoadCheckpoint(p1)
	if err != nil {
		t.Fatal(err)
	}
	want := CheckpointInfo{Game: "tictactoe", Preset: "tiny", Iteration: 1, Positions: 32, Steps: 4}
	if info.Options == "" || !strings.Contains(info.Options, `"lr":0.02`) {
		t.Errorf("options metadata %q", info.Options)
	}
	info.Options = ""
	if info != want {
		t.Errorf("info %+v, want %+v", info, want)
	}
	if !equalF32(n1.Params()[0].Data, net.Params()[0].Data) {
		t.Error("saved weights differ from the trained net")
	}
	avg, ainfo, err := LoadCheckpoint(a1)
	if err != nil || !ainfo.Averaged || ainfo.Steps != 4 {
		t.Fatalf("average: %+v %v", ainfo, err)
	}
	// nets.Load reads a checkpoint like any network file.
	if _, err := nets.Load(p1); err != nil {
		t.Fatal(err)
	}
	// Iteration 2 from iteration 1 (and its average).
	opt.Iteration, opt.Parent, opt.ParentInfo, opt.Average, opt.Steps = 2, p1, info, avg, 3
	if _, err := Run(context.Background(), n1, ds, opt, nil); err != nil {
		t.Fatal(err)
	}
	_, info2, err := LoadCheckpoint(filepath.Join(out, "iter-0002.safetensors"))
	if err != nil || info2.Parent != "iter-0001.safetensors" || info2.Steps != 7 || info2.Positions != 56 || info2.Iteration != 2 {
		t.Errorf("iteration 2: %+v %v", info2, err)
	}
	// The same iteration again: refused before training, unless Overwrite.
	before := mustRead(t, p1)
	opt.Iteration, opt.Parent, opt.ParentInfo, opt.Average = 1, "", CheckpointInfo{}, nil
	if _, err := Run(context.Background(), tinyNet(t, ds.Game(), 4), ds, opt, nil); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("existing checkpoint: %v", err)
	}
	if !bytes.Equal(before, mustRead(t, p1)) {
		t.Error("a refused run changed the checkpoint")
	}
	opt.Overwrite = true
	if _, err := Run(context.Background(), tinyNet(t, ds.Game(), 4), ds, opt, nil); err != nil {
		t.Errorf("overwrite: %v", err)
	}
	// Output directory problems are found before any training.
	if err := CheckOutput(mustWrite(t, filepath.Join(t.TempDir(), "file"), "x"), 1, false); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file as output directory: %v", err)
	}
}

func TestCheckpointMetadata(t *testing.T) {
	info := CheckpointInfo{Game: "hex:size=5,swap=true", Preset: "small", Iteration: 12, Positions: 1 << 40, Steps: 123456, Parent: "iter-0011.safetensors", Averaged: true, Options: `{"lr":0.1}`}
	got, ok, err := ParseCheckpointInfo(info.Metadata())
	if err != nil || !ok || got != info {
		t.Errorf("round trip: %+v %t %v", got, ok, err)
	}
	if _, ok, err := ParseCheckpointInfo(map[string]string{nets.ConfigKey: "{}"}); ok || err != nil {
		t.Errorf("plain net: ok %t, %v", ok, err)
	}
	bad := info.Metadata()
	bad[MetaSteps] = "-3"
	if _, _, err := ParseCheckpointInfo(bad); err == nil || !strings.Contains(err.Error(), MetaSteps) {
		t.Errorf("bad steps: %v", err)
	}
	// The net's own keys cannot be overwritten by extra metadata.
	net := tinyNet(t, games.MustNew("tictactoe"), 1)
	if err := net.SaveWithMetadata(filepath.Join(t.TempDir(), "x.safetensors"), map[string]string{nets.ConfigKey: "{}"}); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("reserved key: %v", err)
	}
}

// A diverging run stops with an error naming the step and the loss terms,
// and the checkpoint saved before stays byte for byte as it was.
func TestNaNGuardKeepsLastCheckpoint(t *testing.T) {
	ds := loadTest(t, "tictactoe", 6, 14, true)
	out := t.TempDir()
	net := tinyNet(t, ds.Game(), 5)
	opt := DefaultOptions()
	opt.Steps, opt.Batch, opt.OutDir, opt.CheckpointEvery, opt.MetricsEvery = 20, 8, out, 5, 1
	p, a := StepCheckpointPaths(out, opt.Iteration, 5) // the intermediate save of step 5
	var good, goodAvg []byte
	_, err := Run(context.Background(), net, ds, opt, func(m Metrics) {
		if m.Step == 7 {
			good, goodAvg = mustRead(t, p), mustRead(t, a)
			// Corrupt a weight, as a diverging update would.
			net.Params()[0].Data[0] = float32(math.NaN())
			net.Invalidate()
		}
	})
	var div *DivergedError
	if !errors.As(err, &div) || div.Step != 8 || div.LastGood != p || !strings.Contains(err.Error(), "step 8") ||
		!strings.Contains(err.Error(), "policy NaN") || !strings.Contains(err.Error(), "left intact") {
		t.Fatalf("error %v, want a DivergedError at step 8", err)
	}
	if !bytes.Equal(good, mustRead(t, p)) || !bytes.Equal(goodAvg, mustRead(t, a)) {
		t.Error("the last good checkpoint changed")
	}
	if _, info, err := LoadCheckpoint(p); err != nil || info.Steps != 5 {
		t.Errorf("last good checkpoint: %+v %v", info, err)
	}
	// A NaN weight is never saved, even when the loss was finite.
	if _, _, err := SaveCheckpoint(out, net, nil, CheckpointInfo{Iteration: 9}); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("saving a NaN net: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "iter-0009.safetensors")); err == nil {
		t.Error("a NaN net was written")
	}
}

func TestRunRejectsMismatchedNet(t *testing.T) {
	ds := loadTest(t, "tictactoe", 2, 15, false)
	net := tinyNet(t, games.MustNew("connect4"), 1)
	if _, err := Run(context.Background(), net, ds, DefaultOptions(), nil); err == nil || !strings.Contains(err.Error(), "inputs") {
		t.Errorf("connect4 net on tictactoe data: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, tinyNet(t, ds.Game(), 1), ds, DefaultOptions(), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
