package rl

import (
	"context"
	"math"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/sequence"
	"github.com/canopy-go/canopy/nets"
)

// smallSequenceLearner is a recurrent PPO learner with a small CNN-LSTM
// on the study's Sequence variant against random.
func smallSequenceLearner(t *testing.T, n, steps int) *PPO {
	t.Helper()
	g := games.MustNew("sequence:jacks=false")
	cfg, ok := nets.RecurrentPreset("sequence-lstm")
	if !ok {
		t.Fatal("no sequence-lstm preset")
	}
	cfg.ConvChannels, cfg.BoardDense, cfg.FlatDense, cfg.Hidden = []int{4, 4}, 16, 8, 8
	cfg, err := cfg.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Flat != 96+13 || cfg.Cards != 7 || cfg.Squares != 100 {
		t.Fatalf("preset for the study's variant: flat %d, %d x %d actions; want 109, 7 x 100", cfg.Flat, cfg.Cards, cfg.Squares)
	}
	net, err := nets.NewRecurrent(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnv(g, EnvOptions{N: n, Seat: SeatAlternate, Seed: 3, Encoding: nets.Encoding{Features: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Close)
	o := Study000Options()
	o.Steps, o.Epochs, o.Minibatches, o.Seed = steps, 2, 2, 9
	p, err := NewRecurrentPPO(net, env, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Training replays each environment's segment from the state stored at
// the rollout's start with the stored game-start resets: before the
// weights change, ForwardTrain over one environment's T steps gives back
// exactly the values and log-probabilities recorded while playing, game
// boundaries included.
func TestRecurrentReplayMatchesCollection(t *testing.T) {
	p := smallSequenceLearner(t, 3, 80)
	for range 2 { // the second rollout starts from carried, non-zero states
		if _, err := p.Collect(); err != nil {
			t.Fatal(err)
		}
	}
	b, r := p.Buf, p.rec
	T, N, P, O, H := b.T, b.N, b.P, b.ObsSize, p.Rec.Hidden()
	starts := 0
	nonzero := false
	for _, v := range r.h0 {
		nonzero = nonzero || v != 0
	}
	if !nonzero {
		t.Fatal("the rollout starts from zero states: the check of carried state proves nothing")
	}
	for e := range N {
		obs, reset := make([]float32, T*O), make([]bool, T)
		for t := range T {
			copy(obs[t*O:(t+1)*O], b.Obs[(t*N+e)*O:(t*N+e+1)*O])
			reset[t] = r.reset[t*N+e]
			if reset[t] {
				starts++
			}
		}
		logits, vals := make([]float32, T*P), make([]float32, T)
		if err := p.Rec.ForwardTrain(T, 1, obs, r.h0[e*H:(e+1)*H], r.c0[e*H:(e+1)*H], reset, logits, vals, nil, nil); err != nil {
			t.Fatal(err)
		}
		mask := games.NewMask(P)
		probs := make([]float32, P)
		for k := range T {
			s := k*N + e
			clear(mask)
			for a, v := range b.Legal[s*P : (s+1)*P] {
				if v != 0 {
					mask.Set(games.Action(a))
				}
			}
			nets.MaskedSoftmax(logits[k*P:(k+1)*P], mask, probs)
			lp := math.Log(float64(probs[b.Action[s]]))
			if math.Abs(lp-float64(b.LogProb[s])) > 1e-5 || math.Abs(float64(vals[k]-b.Value[s])) > 1e-5 {
				t.Fatalf("env %d step %d: replay log-prob %v value %v, collected %v %v", e, k, lp, vals[k], b.LogProb[s], b.Value[s])
			}
		}
	}
	if starts == 0 {
		t.Fatal("no game started inside the rollouts: the reset path is untested")
	}
}

// A few updates run, change the weights, and keep the loss finite.
func TestRecurrentPPOUpdates(t *testing.T) {
	p := smallSequenceLearner(t, 4, 16)
	before := append([]float32(nil), p.Rec.Params()[0].Data...)
	for u := range 2 {
		st, err := p.Iterate()
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(st.Loss.Total) || st.Samples != 16*4 {
			t.Fatalf("update %d: %+v", u, st)
		}
	}
	changed := false
	for i, v := range p.Rec.Params()[0].Data {
		changed = changed || v != before[i]
	}
	if !changed {
		t.Error("two updates left the first convolution unchanged")
	}
	if _, err := NewRecurrentPPO(p.Rec, p.Env, Options{}); err == nil {
		t.Error("invalid options accepted")
	}
	o := p.Opt
	o.Minibatches = 5
	if _, err := NewRecurrentPPO(p.Rec, p.Env, o); err == nil {
		t.Error("5 minibatches of 4 environments accepted")
	}
}

// A recurrent run resumed from a checkpoint computes, bit for bit, the
// weights of an uninterrupted run (FreshGames: every update starts new
// games, so no LSTM state outlives an update).
func TestRecurrentResumeExact(t *testing.T) {
	learner := func() *PPO {
		p := smallSequenceLearner(t, 2, 12)
		p.Opt.FreshGames = true
		return p
	}
	train := func(p *PPO, dir string, upto int, info CheckpointInfo) {
		t.Helper()
		if _, err := Train(context.Background(), p, TrainOptions{Dir: dir, Updates: upto, Every: 1, Info: info}); err != nil {
			t.Fatal(err)
		}
	}
	start := func(p *PPO) (string, CheckpointInfo) {
		dir := t.TempDir()
		cfg := RunConfig{Game: "sequence:jacks=false", Preset: "sequence-lstm", Opponent: "random", Envs: p.Env.N(), Seed: 9, Every: 1, Updates: 3, Options: p.Opt}
		if err := Start(dir, cfg); err != nil {
			t.Fatal(err)
		}
		return dir, CheckpointInfo{Game: cfg.Game, Preset: cfg.Preset, Opponent: "random"}
	}
	a := learner()
	dirA, info := start(a)
	train(a, dirA, 3, info)

	b := learner()
	dirB, info := start(b)
	train(b, dirB, 2, info)
	r, err := Resume(dirB)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rec == nil || r.Net != nil || r.Adam == nil || r.Info.Updates != 2 {
		t.Fatalf("resumed: recurrent %v, plain %v, Adam %v, update %d", r.Rec != nil, r.Net != nil, r.Adam != nil, r.Info.Updates)
	}
	fresh := learner()
	c, err := NewRecurrentPPO(r.Rec, fresh.Env, fresh.Opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetAdamState(*r.Adam); err != nil {
		t.Fatal(err)
	}
	c.Updates = r.Info.Updates
	train(c, dirB, 3, r.Info)

	want, _, err := LoadRecurrentCheckpoint(CheckpointPath(dirA, 3))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := LoadRecurrentCheckpoint(CheckpointPath(dirB, 3))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range want.Params() {
		for k, v := range p.Data {
			if got.Params()[i].Data[k] != v {
				t.Fatalf("%s[%d]: resumed %v, uninterrupted %v", p.Name, k, got.Params()[i].Data[k], v)
			}
		}
	}
}

// A recurrent rollout allocates nothing once the buffers exist: the net's
// Step, the environments and GAE all work in place.
func TestRecurrentCollectAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	p := smallSequenceLearner(t, 2, 16)
	if _, err := p.Collect(); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(5, func() {
		if _, err := p.Collect(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per recurrent rollout, want 0", n)
	}
}
