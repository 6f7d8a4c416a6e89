package rl

import (
	"context"
	"math"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// recordingOpponent passes a VecEnv's batches to a RecurrentOpponent and
// keeps, per environment, the observations it was asked about and their
// First flags (Sequence here has two players: one opponent seat).
type recordingOpponent struct {
	*RecurrentOpponent
	obs     map[int][][]float32
	first   map[int][]bool
	player  map[int]int // the seat of the last move
	batches []int
}

func (r *recordingOpponent) ActBatch(moves []OpponentMove) error {
	O := r.enc.Size()
	for _, m := range moves {
		x := make([]float32, O)
		r.enc.Encode(m.State, m.Player, m.Legal, x)
		r.obs[m.Env] = append(r.obs[m.Env], x)
		r.first[m.Env] = append(r.first[m.Env], m.First)
		r.player[m.Env] = m.Player
	}
	r.batches = append(r.batches, len(moves))
	return r.RecurrentOpponent.ActBatch(moves)
}

func smallRecurrentNet(t *testing.T, g games.Game, seed uint64) *nets.Recurrent {
	t.Helper()
	cfg, _ := nets.RecurrentPreset("sequence-lstm")
	cfg.ConvChannels, cfg.BoardDense, cfg.FlatDense, cfg.Hidden = []int{4, 4}, 16, 8, 8
	cfg, err := cfg.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nets.NewRecurrent(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return net
}

// A recurrent opponent shared by several environments keeps one LSTM
// state per environment: after many steps, with games finished and
// restarted, each environment's state equals that of the same net run
// alone over that environment's opponent observations from a zero state
// reset at every game start; and the VecEnv asked for the moves in
// batches of more than one environment.
func TestRecurrentOpponentStatePerEnvironment(t *testing.T) {
	g := games.MustNew("sequence:jacks=false")
	net := smallRecurrentNet(t, g, 3)
	inner, err := NewRecurrentOpponent(g, net.Clone())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingOpponent{RecurrentOpponent: inner, obs: map[int][][]float32{}, first: map[int][]bool{}, player: map[int]int{}}
	const n = 3
	env, err := NewEnv(g, EnvOptions{N: n, Seat: SeatAlternate, Seed: 5, Workers: 2, Encoding: nets.Encoding{Features: true},
		Opponents: Fixed{Name: "rec", Opponent: rec}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Close)
	rng := games.NewRand(8)
	acts := make([]games.Action, n)
	for range 400 {
		for e := range n {
			acts[e] = env.Legal(e).Random(rng)
		}
		if err := env.Step(acts); err != nil {
			t.Fatal(err)
		}
	}
	if env.Stats().Episodes == 0 {
		t.Fatal("no game finished: the test does not see a reset")
	}
	batched := false
	for _, b := range rec.batches {
		batched = batched || b > 1
	}
	if !batched {
		t.Error("every batch held one environment")
	}
	H := net.Hidden()
	out := make([]float32, net.PolicySize())
	var v [1]float32
	for e := range n {
		h, c := make([]float32, H), make([]float32, H)
		resets := 0
		for k, x := range rec.obs[e] {
			first := rec.first[e][k]
			if first {
				resets++
			}
			if err := net.Step(1, x, h, c, []bool{first}, out, v[:]); err != nil {
				t.Fatal(err)
			}
		}
		if resets < 2 && e == 0 {
			t.Errorf("environment 0 started %d games against the opponent, want several", resets)
		}
		gh, gc := inner.State(e, rec.player[e])
		for i := range H {
			if math.Abs(float64(gh[i]-h[i])) > 1e-5 || math.Abs(float64(gc[i]-c[i])) > 1e-5 {
				t.Fatalf("environment %d: LSTM state [%d] = %g, %g; alone %g, %g", e, i, gh[i], gc[i], h[i], c[i])
			}
		}
	}
}

// A recurrent run with study 000's schedule league: the pool refilled
// from the checkpoints (PoolCheckpoints, as `canopy ppo --resume` does)
// holds the same snapshots, bit for bit, as the pool of the uninterrupted
// run (the CLI's TestPPORecurrentLeagueResumeExact checks that the whole
// resumed run is exact).
func TestRecurrentLeaguePoolAfterResume(t *testing.T) {
	g := games.MustNew("sequence:jacks=false")
	net := smallRecurrentNet(t, g, 4)
	lo := Study000League(RandomOpponent(), RandomOpponent())
	lo.WarmupUpdates, lo.PoolSize = 1, 3
	league, err := NewRecurrentLeague(g, net, lo)
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnv(g, EnvOptions{N: 2, Seat: SeatAlternate, Seed: 6, Encoding: nets.Encoding{Features: true}, Opponents: league})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Close)
	o := Study000Options()
	o.Steps, o.Epochs, o.Minibatches, o.Seed, o.FreshGames = 40, 1, 2, 9, true
	p, err := NewRecurrentPPO(net, env, o)
	if err != nil {
		t.Fatal(err)
	}
	p.League = league
	dir := t.TempDir()
	if _, err := SaveRecurrentCheckpoint(dir, net, CheckpointInfo{Game: g.Spec()}); err != nil {
		t.Fatal(err)
	}
	if err := league.AddRecurrentSnapshot(net); err != nil {
		t.Fatal(err)
	}
	res, err := Train(context.Background(), p, TrainOptions{Dir: dir, Updates: 5, Every: 1, Info: CheckpointInfo{Game: g.Spec()},
		SnapshotRecurrent: league.AddRecurrentSnapshot})
	if err != nil {
		t.Fatal(err)
	}
	if len(league.pool) != 3 {
		t.Fatalf("pool of %d snapshots, want 3", len(league.pool))
	}
	if k := res.Last.Opponents[KindPool]; k.Episodes == 0 {
		t.Logf("no game against the pool finished in the last update (%+v)", res.Last.Opponents)
	}
	paths, err := PoolCheckpoints(dir, 5, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := NewRecurrentLeague(g, net, lo)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		snap, _, err := LoadRecurrentCheckpoint(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := resumed.AddRecurrentSnapshot(snap); err != nil {
			t.Fatal(err)
		}
	}
	if len(resumed.pool) != len(league.pool) {
		t.Fatalf("resumed pool of %d, uninterrupted %d", len(resumed.pool), len(league.pool))
	}
	distinct := false
	for i := range league.pool {
		a, b := league.pool[i].(*RecurrentOpponent).Net.Params(), resumed.pool[i].(*RecurrentOpponent).Net.Params()
		first := league.pool[0].(*RecurrentOpponent).Net.Params()
		for j := range a {
			if !equalBits(a[j].Data, b[j].Data) {
				t.Fatalf("snapshot %d, %s: resumed pool differs", i, a[j].Name)
			}
			distinct = distinct || (i > 0 && !equalBits(a[j].Data, first[j].Data))
		}
	}
	if !distinct {
		t.Error("the pool's snapshots are all alike: the check proves nothing")
	}
}

func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// Study 000's weight decay (section 4: "Adam (learning rate 3e-4, weight
// decay 1e-5)") reaches the learner's Adam; a negative one is refused.
func TestStudy000WeightDecay(t *testing.T) {
	p := smallSequenceLearner(t, 2, 4)
	if p.adam.WeightDecay != 1e-5 {
		t.Errorf("Adam weight decay %g, want the study's 1e-5", p.adam.WeightDecay)
	}
	o := Study000Options()
	o.WeightDecay = -1e-5
	if err := o.Validate(); err == nil {
		t.Error("a negative weight decay validates")
	}
}
