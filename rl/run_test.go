package rl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCheckpointInfoRoundTrip(t *testing.T) {
	in := CheckpointInfo{Game: "tictactoe", Preset: "p", Opponent: "onestep", Updates: 12, Samples: 3456}
	got, ok, err := ParseCheckpointInfo(in.Metadata())
	if !ok || err != nil || got != in {
		t.Fatalf("round trip: %+v, %v, %v; want %+v", got, ok, err, in)
	}
	if _, ok, err := ParseCheckpointInfo(map[string]string{"canopy.config": "{}"}); ok || err != nil {
		t.Fatalf("a plain net file: ok %v, err %v", ok, err)
	}
	for _, bad := range []map[string]string{
		{MetaUpdates: "x", MetaSamples: "1"},
		{MetaUpdates: "-1", MetaSamples: "1"},
		{MetaUpdates: "10000000", MetaSamples: "1"},
		{MetaUpdates: "1", MetaSamples: "-5"},
		{MetaUpdates: "1"},
	} {
		if _, ok, err := ParseCheckpointInfo(bad); !ok || err == nil {
			t.Errorf("%v: ok %v, err %v; want an error", bad, ok, err)
		}
	}
}

func TestLatestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if p, u, err := LatestCheckpoint(filepath.Join(dir, "missing")); p != "" || u != 0 || err != nil {
		t.Fatalf("missing dir: %q %d %v", p, u, err)
	}
	for _, name := range []string{"update-000002.safetensors", "update-000010.safetensors", "update-000010.safetensors.tmp",
		"update-99.safetensors", "update-000003.safetensors"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "update-000020.safetensors"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, u, err := LatestCheckpoint(dir)
	if err != nil || u != 10 || p != CheckpointPath(dir, 10) {
		t.Fatalf("got %q %d %v; want update 10", p, u, err)
	}
}

// A run trains, checkpoints every 2 updates and at the end, records one
// metrics line per update; Resume restores the last checkpoint and drops
// metrics of later updates (and a torn last line); a resumed session
// continues the counts.
func TestTrainAndResume(t *testing.T) {
	dir := t.TempDir()
	p := tictactoePPO(t, 3)
	p.Opt.Steps = 8 // the buffers were sized for 32: use a part of them
	p.Buf = NewRollout(8, p.Buf.N, p.Buf.ObsSize, p.Buf.P)
	p.perm = p.perm[:8*p.Buf.N]
	cfg := RunConfig{Game: "tictactoe", Opponent: "random", Envs: p.Env.N(), Seed: 3, Every: 2, Updates: 3, Options: p.Opt}
	if err := Start(dir, cfg); err != nil {
		t.Fatal(err)
	}
	// A run that produced nothing binds nothing (issue 46 item 6): a
	// second Start replaces it.
	if err := Start(dir, cfg); err != nil {
		t.Fatalf("second Start of a run that produced nothing: %v, want it replaced", err)
	}
	if _, err := Resume(dir); !errors.Is(err, ErrNoRun) {
		t.Fatalf("Resume without a checkpoint: %v, want ErrNoRun", err)
	}
	var seen []int
	res, err := Train(context.Background(), p, TrainOptions{Dir: dir, Updates: 3, Every: 2,
		Info: CheckpointInfo{Game: "tictactoe", Opponent: "random"}, Progress: func(m Metrics) { seen = append(seen, m.Update) }})
	if err != nil {
		t.Fatal(err)
	}
	n := int64(8 * p.Env.N())
	if res.Checkpoint != CheckpointPath(dir, 3) || res.Info.Updates != 3 || res.Info.Samples != 3*n || res.Samples != 3*n || len(seen) != 3 {
		t.Fatalf("result %+v, progress %v", res, seen)
	}
	for _, u := range []int{2, 3} {
		if _, err := os.Stat(CheckpointPath(dir, u)); err != nil {
			t.Errorf("checkpoint of update %d: %v", u, err)
		}
	}
	if _, err := os.Stat(CheckpointPath(dir, 1)); err == nil {
		t.Error("update 1 was checkpointed with Every 2")
	}
	ms, err := ReadMetrics(dir)
	if err != nil || len(ms) != 3 || ms[2].Update != 3 || ms[2].Samples != 3*n || ms[0].Episodes == 0 || ms[0].SamplesPerSec <= 0 {
		t.Fatalf("metrics %+v, %v", ms, err)
	}
	if err := Start(dir, cfg); !errors.Is(err, ErrRunExists) {
		t.Fatalf("Start on a run with updates: %v, want ErrRunExists", err)
	}

	// Lose update 3's checkpoint and tear the metrics: Resume goes back to
	// update 2 and keeps its two lines.
	if err := os.Remove(CheckpointPath(dir, 3)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, MetricsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"update":4,"samp`)
	f.Close()
	r, err := Resume(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Info.Updates != 2 || r.Info.Samples != 2*n || r.Checkpoint != CheckpointPath(dir, 2) || len(r.Metrics) != 2 || r.Config.Envs != cfg.Envs {
		t.Fatalf("resumed %+v", r)
	}
	b, _ := os.ReadFile(filepath.Join(dir, MetricsFile))
	if strings.Count(string(b), "\n") != 2 || strings.Contains(string(b), "samp\"") {
		t.Fatalf("trimmed metrics:\n%s", b)
	}
	p2, err := NewPPO(r.Net, p.Env, p.Opt)
	if err != nil {
		t.Fatal(err)
	}
	p2.Updates = r.Info.Updates
	res, err = Train(context.Background(), p2, TrainOptions{Dir: dir, Updates: 4, Every: 2, Info: r.Info})
	if err != nil || res.Info.Updates != 4 || res.Info.Samples != 4*n {
		t.Fatalf("resumed train: %+v, %v", res, err)
	}
	if ms, _ := ReadMetrics(dir); len(ms) != 4 || ms[3].Update != 4 {
		t.Fatalf("metrics after resume: %+v", ms)
	}
	if _, info, err := LoadCheckpoint(CheckpointPath(dir, 4)); err != nil || info.Updates != 4 || info.Game != "tictactoe" {
		t.Fatalf("checkpoint 4: %+v, %v", info, err)
	}

	// A cancelled context stops before the next update and saves the
	// updates done (here none since the last checkpoint: nothing new).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, p2, TrainOptions{Dir: dir, Updates: 6, Info: res.Info}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if _, err := Train(context.Background(), p2, TrainOptions{Dir: dir, Updates: 2}); err == nil {
		t.Fatal("training backwards succeeded")
	}
}

func TestSessionSeed(t *testing.T) {
	if SessionSeed(7, 0) != 7 || SessionSeed(7, 10) == 7 || SessionSeed(7, 10) == SessionSeed(7, 20) {
		t.Fatal("session seeds: fresh runs keep the seed, resumed sessions get their own")
	}
}

// Adam's state survives its file; a file for another net is refused.
func TestAdamStateFile(t *testing.T) {
	p := tictactoePPO(t, 2)
	p.Opt.Steps = 4
	if _, err := p.Iterate(); err != nil {
		t.Fatal(err)
	}
	st := p.AdamState()
	path := AdamPath(t.TempDir(), 1)
	if err := SaveAdamState(path, st); err != nil {
		t.Fatal(err)
	}
	got, err := LoadAdamState(path, len(p.Net.Params()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Step != st.Step || st.Step != p.Opt.Epochs*p.Opt.Minibatches {
		t.Fatalf("step %d, saved %d, want %d", got.Step, st.Step, p.Opt.Epochs*p.Opt.Minibatches)
	}
	for i := range st.M {
		if !slices.Equal(got.M[i], st.M[i]) || !slices.Equal(got.V[i], st.V[i]) {
			t.Fatalf("moments of parameter %d differ", i)
		}
	}
	if _, err := LoadAdamState(path, len(p.Net.Params())+1); err == nil {
		t.Fatal("state loaded for a net with another parameter count")
	}
}

// The pool after update u is the last n checkpoints on the cadence.
func TestPoolCheckpoints(t *testing.T) {
	dir := t.TempDir()
	for _, u := range []int{0, 3, 5, 6, 9, 12} {
		if err := os.WriteFile(CheckpointPath(dir, u), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := PoolCheckpoints(dir, 11, 3, 3)
	want := []string{CheckpointPath(dir, 3), CheckpointPath(dir, 6), CheckpointPath(dir, 9)}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("pool %v, %v; want %v", got, err, want)
	}
	if got, err := PoolCheckpoints(dir, 12, 3, 20); err != nil || len(got) != 5 || got[0] != CheckpointPath(dir, 0) {
		t.Fatalf("whole pool %v, %v", got, err)
	}
	os.Remove(CheckpointPath(dir, 6))
	if _, err := PoolCheckpoints(dir, 11, 3, 3); err == nil {
		t.Fatal("missing checkpoint not reported")
	}
}
