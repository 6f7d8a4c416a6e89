package rl

import (
	"strings"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

func tictactoePPO(t *testing.T, seed uint64) *PPO {
	t.Helper()
	g, err := games.New("tictactoe")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nets.Config{Head: nets.HeadPPO, ConvChannels: []int{16}, Dense: 64}.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nets.New(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnv(g, EnvOptions{N: 16, Seat: SeatAlternate, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Steps, o.LR, o.Loss.EntropyCoef, o.Seed = 32, 2e-3, 0.01, seed
	p, err := NewPPO(net, env, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A short PPO run on tic-tac-toe against random (both seats) raises the
// learner's win rate well above where it starts, in a few seconds.
func TestPPOLearnsTicTacToe(t *testing.T) {
	if testing.Short() {
		t.Skip("training run")
	}
	p := tictactoePPO(t, 1)
	start := time.Now()
	var first, last EpisodeStats
	const updates = 40
	for u := range updates {
		st, err := p.Iterate()
		if err != nil {
			t.Fatal(err)
		}
		if u < 3 {
			first.Add(st.Episodes)
		}
		if u >= updates-3 {
			last.Add(st.Episodes)
		}
		if u == updates-1 {
			t.Logf("update %d: %v; loss %+v, grad norm %.3f, explained variance %.3f", u, st.Episodes, st.Loss, st.GradNorm, st.ExplainedVariance)
		}
	}
	t.Logf("first updates: %v", first)
	t.Logf("last updates:  %v (%v)", last, time.Since(start))
	if last.WinRate() < first.WinRate()+0.15 {
		t.Fatalf("win rate %.3f -> %.3f: no learning", first.WinRate(), last.WinRate())
	}
}

// The same seed gives the same training.
func TestPPODeterministic(t *testing.T) {
	var losses [2]float64
	for k := range losses {
		p := tictactoePPO(t, 3)
		for range 2 {
			st, err := p.Iterate()
			if err != nil {
				t.Fatal(err)
			}
			losses[k] = st.Loss.Total
		}
	}
	if losses[0] != losses[1] {
		t.Fatalf("losses %v differ", losses)
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(*Options){
		"steps":         func(o *Options) { o.Steps = 0 },
		"gamma":         func(o *Options) { o.Gamma = 1.1 },
		"clip range":    func(o *Options) { o.Loss.ClipRange = 0 },
		"entropy":       func(o *Options) { o.Loss.EntropyCoef = -1 },
		"epochs":        func(o *Options) { o.Epochs = 0 },
		"minibatches":   func(o *Options) { o.Minibatches = 0 },
		"grad norm":     func(o *Options) { o.MaxGradNorm = -1 },
		"learning rate": func(o *Options) { o.LR = 0 },
		"anneal":        func(o *Options) { o.AnnealUpdates = -1 },
	} {
		o := DefaultOptions()
		f(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

func TestNewPPOErrors(t *testing.T) {
	g, _ := games.New("tictactoe")
	env, err := NewEnv(g, EnvOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := nets.Preset("connect4-ppo")
	net, err := nets.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPPO(net, env, DefaultOptions()); err == nil || !strings.Contains(err.Error(), "inputs") {
		t.Errorf("connect4 net on tictactoe: %v", err)
	}
	if _, err := NewPPO(nil, env, DefaultOptions()); err == nil {
		t.Error("nil net accepted")
	}
}

func TestClipGradNorm(t *testing.T) {
	p := &nets.Param{Grad: []float32{3, 4}}
	if n := ClipGradNorm([]*nets.Param{p}, 1); n != 5 || !near(float64(p.Grad[0]), 0.6, 1e-6) || !near(float64(p.Grad[1]), 0.8, 1e-6) {
		t.Fatalf("norm %g, grad %v", n, p.Grad)
	}
	q := &nets.Param{Grad: []float32{0.3, 0.4}}
	if ClipGradNorm([]*nets.Param{q}, 1); q.Grad[0] != 0.3 {
		t.Fatalf("small gradient changed: %v", q.Grad)
	}
}
