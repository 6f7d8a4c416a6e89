package rl

import (
	"fmt"
	"testing"

	"github.com/canopy-go/canopy/games"
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
		for b.Loop() {
			randomActions(e, acts, k)
			k++
			if err := e.Step(acts); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*e.N())/b.Elapsed().Seconds(), "steps/s")
	})
}

// BenchmarkPPOConnect4 measures PPO samples per second (collection
// against random and 4 epochs of 4 minibatches) with study 002's net,
// the connect4-ppo preset, on 16 environments x 64 steps.
//
//	go test ./rl -run '^$' -bench PPOConnect4 -benchtime 5x
func BenchmarkPPOConnect4(b *testing.B) {
	g := connect4Game(b)
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
