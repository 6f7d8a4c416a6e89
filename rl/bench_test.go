package rl

import (
	"fmt"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/cputime"
	"github.com/canopy-go/canopy/nets"
)

// BenchmarkConnect4Env measures environment steps (one learner move with
// the random opponent's reply, resets included) per second without a
// net, with and without study 002's shaped rewards. The learner plays the
// first legal action of a rotating index.
//
//	go test ./rl -run '^$' -bench Connect4Env -benchtime 2s
func BenchmarkConnect4Env(b *testing.B) {
	for _, shaped := range []bool{false, true} {
		for _, workers := range []int{1, 2} {
			name := fmt.Sprintf("n=256/workers=%d", workers)
			var sh Shaping
			if shaped {
				name, sh = name+"/shaping", Study002Shaping()
			}
			benchEnv(b, name, EnvOptions{N: 256, Workers: workers, Seat: SeatAlternate, Seed: 1, Shaping: sh})
		}
	}
	// The size of the Python VecEnv benchmark (python/bench/bench_env.py).
	benchEnv(b, "n=4096/workers=1", EnvOptions{N: 4096, Workers: 1, Seat: SeatAlternate, Seed: 1})
}

func benchEnv(b *testing.B, name string, opt EnvOptions) {
	b.Run(name, func(b *testing.B) {
		e, err := NewEnv(connect4Game(b), opt)
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		acts := make([]games.Action, e.N())
		k := 0
		b.ReportAllocs()
		cpu0 := cputime.Now()
		for b.Loop() {
			randomActions(e, acts, k)
			k++
			if err := e.Step(acts); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*e.N())/b.Elapsed().Seconds(), "steps/s")
		// Per CPU-second of the process: comparable on a shared machine.
		b.ReportMetric(float64(b.N*e.N())/(cputime.Now()-cpu0).Seconds(), "steps/cpu-s")
	})
}

// BenchmarkPPOConnect4 measures PPO samples per second (collection
// against random and 4 epochs of 4 minibatches) with study 002's net,
// the connect4-ppo preset, on 16 environments x 64 steps.
//
//	go test ./rl -run '^$' -bench PPOConnect4 -benchtime 5x
func BenchmarkPPOConnect4(b *testing.B) {
	g := connect4Game(b)
	net := connect4PPONet(b, g)
	env, err := NewEnv(g, EnvOptions{N: 16, Seat: SeatAlternate, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	o := DefaultOptions()
	o.Steps = 64
	p, err := NewPPO(net, env, o)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := p.Iterate(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*o.Steps*env.N())/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkPPOUpdate measures one PPO update step per minibatch, the
// training half of PPO without collection, on a rollout of random
// observations, legal masks, actions and advantages: a training forward
// pass, the clipped loss, backward, gradient clipping and an Adam step
// (PPO.Update with one epoch of one minibatch). rl/testdata/
// bench_ppo_torch.py times the same step in PyTorch; `make
// bench-ppo-torch` runs both.
//
//	connect4-ppo   study 002's CNN, minibatch 2048 (16 x 512 / 4, canopy ppo's defaults)
//	sequence-lstm  study 000's CNN-LSTM, minibatch 2048 = 2 environments x 1024 steps (BPTT)
//
//	go test ./rl -run '^$' -bench PPOUpdate -benchtime 5x
func BenchmarkPPOUpdate(b *testing.B) {
	b.Run("connect4-ppo/minibatch=2048", func(b *testing.B) {
		g := connect4Game(b)
		net := connect4PPONet(b, g)
		env, err := NewEnv(g, EnvOptions{N: 16, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		o := DefaultOptions()
		o.Steps, o.Epochs, o.Minibatches = 128, 1, 1
		p, err := NewPPO(net, env, o)
		if err != nil {
			b.Fatal(err)
		}
		benchUpdate(b, p)
	})
	b.Run("sequence-lstm/minibatch=2048", func(b *testing.B) {
		g := games.MustNew("sequence:jacks=false")
		cfg, _ := nets.RecurrentPreset("sequence-lstm")
		cfg, err := cfg.ForGame(g)
		if err != nil {
			b.Fatal(err)
		}
		net, err := nets.NewRecurrent(cfg, 1)
		if err != nil {
			b.Fatal(err)
		}
		env, err := NewEnv(g, EnvOptions{N: 2, Seed: 1, Encoding: nets.Encoding{Features: true}})
		if err != nil {
			b.Fatal(err)
		}
		o := Study000Options()
		o.Epochs, o.Minibatches = 1, 1
		p, err := NewRecurrentPPO(net, env, o)
		if err != nil {
			b.Fatal(err)
		}
		for i := range p.rec.reset {
			p.rec.reset[i] = i < p.Buf.N || i%101 == 0 // a game start every ~100 steps
		}
		benchUpdate(b, p)
	})
}

// benchUpdate fills p's rollout with random data and times p.Update.
func benchUpdate(b *testing.B, p *PPO) {
	buf := p.Buf
	rng := games.NewRand(2)
	for i := range buf.Obs {
		buf.Obs[i] = float32(rng.IntN(2))
	}
	for s := range buf.T * buf.N {
		legal := buf.Legal[s*buf.P : (s+1)*buf.P]
		a := rng.IntN(buf.P)
		for j := range legal {
			legal[j] = 0
			if j == a || rng.Float32() < 0.7 {
				legal[j] = 1
			}
		}
		buf.Action[s] = int32(a)
		buf.LogProb[s] = -2 * rng.Float32()
		buf.Value[s] = 2*rng.Float32() - 1
		buf.Advantage[s] = float32(rng.NormFloat64())
		buf.Return[s] = 2*rng.Float32() - 1
	}
	// One update first: it allocates the nets' training scratch (34 MB for
	// connect4-ppo), which a few timed iterations would otherwise report
	// as allocations per update.
	if _, err := p.Update(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cputime.Seconds()
	for b.Loop() {
		if _, err := p.Update(); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N * buf.T * buf.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "samples/s")
	// Per second of the process's CPU time (both threads): the fairer
	// figure on a loaded machine, like the PyTorch script's.
	if cpu1 := cputime.Seconds(); cputime.Supported() && cpu1 > cpu0 {
		b.ReportMetric(n/(cpu1-cpu0), "samples/cpu-s")
	}
}

// connect4PPONet returns a fresh connect4-ppo network (study 002's CNN)
// shaped for g.
func connect4PPONet(b *testing.B, g games.Game) *nets.Net {
	b.Helper()
	cfg, err := nets.Preset("connect4-ppo")
	if err != nil {
		b.Fatal(err)
	}
	if cfg, err = cfg.ForGame(g); err != nil {
		b.Fatal(err)
	}
	net, err := nets.New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	return net
}
