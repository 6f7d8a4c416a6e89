package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/rl"
)

// TestPPOCLI trains a few tic-tac-toe updates, resumes to more, and plays
// a game with the checkpoint in the policy agent.
func TestPPOCLI(t *testing.T) {
	tmp := t.TempDir()
	g, err := games.New("tictactoe")
	if err != nil {
		t.Fatal(err)
	}
	// A small PPO net keeps the test fast.
	cfg, err := nets.Config{Head: nets.HeadPPO, ConvChannels: []int{8}, Dense: 32}.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nets.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	start := filepath.Join(tmp, "start.safetensors")
	if err := net.Save(start); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "run")
	args := []string{"ppo", "--game", "tictactoe", "--net", start, "--out", out, "--envs", "4", "--env-steps", "8",
		"--minibatches", "2", "--epochs", "2", "--checkpoint-every", "2", "--quiet"}

	code, stdout, errs := runCLI(t, "", append(args, "--updates", "3")...)
	if code != 0 || !strings.Contains(stdout, "update-000003.safetensors") {
		t.Fatalf("status %d\n%s\n%s", code, stdout, errs)
	}
	for _, u := range []int{0, 2, 3} {
		if _, err := os.Stat(rl.CheckpointPath(out, u)); err != nil {
			t.Errorf("checkpoint %d: %v", u, err)
		}
	}
	// The same command again refuses to overwrite the run.
	if code, _, errs := runCLI(t, "", append(args, "--updates", "3")...); code != 1 || !strings.Contains(errs, "--resume") {
		t.Fatalf("second fresh run: status %d, %s", code, errs)
	}
	// Resume with a changed setting is a usage error; with a new target it
	// continues from update 3.
	if code, _, errs := runCLI(t, "", "ppo", "--out", out, "--resume", "--lr", "0.5", "--quiet"); code != 2 || !strings.Contains(errs, "--lr") {
		t.Fatalf("resume with another --lr: status %d, %s", code, errs)
	}
	if code, _, errs := runCLI(t, "", "ppo", "--out", out, "--resume", "--wd", "1e-4", "--quiet"); code != 2 || !strings.Contains(errs, "--wd") {
		t.Fatalf("resume with another --wd: status %d, %s", code, errs)
	}
	code, stdout, errs = runCLI(t, "", "ppo", "--out", out, "--resume", "--updates", "5", "--json", "--quiet")
	if code != 0 {
		t.Fatalf("resume: status %d\n%s\n%s", code, stdout, errs)
	}
	var res struct {
		From int               `json:"from_update"`
		Info rl.CheckpointInfo `json:"info"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.From != 3 || res.Info.Updates != 5 || res.Info.Samples != 5*4*8 {
		t.Fatalf("resume result %+v, %v\n%s", res, err, stdout)
	}
	ms, err := rl.ReadMetrics(out)
	if err != nil || len(ms) != 5 || ms[4].Update != 5 {
		t.Fatalf("metrics: %d lines, %v", len(ms), err)
	}
	// Nothing left to do at the target.
	if code, stdout, _ := runCLI(t, "", "ppo", "--out", out, "--resume", "--quiet"); code != 0 || !strings.Contains(stdout, "already") {
		t.Fatalf("resume at the target: status %d, %s", code, stdout)
	}

	// The checkpoint plays as the policy agent.
	ckpt := rl.CheckpointPath(out, 5)
	a, err := agent.New(g, "policy:net="+ckpt, agent.Env{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAgent(a)
	s := g.NewInitialState()
	for !s.IsTerminal() {
		p := s.CurrentPlayer()
		var act games.Action
		if p == 0 {
			act, err = a.Act(context.Background(), s, p)
			if err != nil {
				t.Fatal(err)
			}
		} else {
			m := games.NewMask(g.NumActions())
			s.Legal(m)
			act = m.Random(games.NewRand(uint64(s.MoveNumber())))
		}
		s.Apply(act)
	}
}

func closeAgent(a agent.Agent) {
	if c, ok := a.(interface{ Close() error }); ok {
		c.Close()
	}
}

// Every numeric flag out of range is a usage error naming the flag.
func TestPPOFlagErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	for _, tc := range []struct{ flag, value string }{
		{"updates", "0"}, {"updates", "1000000"}, {"envs", "0"}, {"envs", "5000"}, {"env-steps", "0"}, {"env-steps", "70000"},
		{"lr", "0"}, {"lr", "NaN"}, {"lr", "2"}, {"ent", "-1"}, {"ent", "Inf"}, {"epochs", "0"}, {"minibatches", "0"},
		{"minibatches", "100000"}, {"checkpoint-every", "0"}, {"wd", "-1e-5"}, {"wd", "NaN"}, {"wd", "2"},
	} {
		code, _, errs := runCLI(t, "", "ppo", "--game", "tictactoe", "--out", out, "--"+tc.flag, tc.value, "--quiet")
		if code != 2 || !strings.Contains(errs, "--"+tc.flag) {
			t.Errorf("--%s %s: status %d, %q", tc.flag, tc.value, code, errs)
		}
	}
	if code, _, errs := runCLI(t, "", "ppo", "--game", "tictactoe", "--out", out, "--envs", "4096", "--env-steps", "4096"); code != 2 || !strings.Contains(errs, "--envs x --env-steps") {
		t.Errorf("huge rollout: status %d, %q", code, errs)
	}
	for _, extra := range [][]string{
		{"--league", "bogus"}, {"--ent-decay", "2"}, {"--ent-final", "0.001"}, {"--legal-plane", "--net", "x.safetensors"},
	} {
		code, _, errs := runCLI(t, "", append([]string{"ppo", "--game", "tictactoe", "--out", out, "--quiet"}, extra...)...)
		if code != 2 || !strings.Contains(errs, extra[0]) {
			t.Errorf("%v: status %d, %q", extra, code, errs)
		}
	}
	if code, _, errs := runCLI(t, "", "ppo", "--game", "sushigo", "--out", out, "--legal-plane", "--quiet"); code == 0 || !strings.Contains(errs, "legal") {
		t.Errorf("legal plane on sushigo: status %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "ppo", "--game", "tictactoe"); code != 2 || !strings.Contains(errs, "--out") {
		t.Errorf("no --out: status %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "ppo", "--game", "tictactoe", "--out", out, "--opponent", "nosuch", "--quiet"); code != 2 || !strings.Contains(errs, "--opponent") {
		t.Errorf("unknown opponent: status %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "ppo", "--out", filepath.Join(t.TempDir(), "none"), "--resume", "--quiet"); code != 1 || errs == "" {
		t.Errorf("resume of nothing: status %d, %q", code, errs)
	}
	if _, err := os.Stat(out); err == nil {
		// Usage errors and an unknown opponent fail before the directory
		// is recorded as a run.
		if _, ok, _ := rl.LoadRunConfig(out); ok {
			t.Error("a failed start recorded a run")
		}
	}
}

// copyDir copies the regular files of src into a new directory dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A run killed after a checkpoint and resumed computes the same weights,
// bit for bit, as the uninterrupted run, with study 002's league (its
// pool refilled from the checkpoints), shaped rewards, the legal-move
// plane and an entropy schedule. Without Adam's saved state it does not.
func TestPPOResumeExact(t *testing.T) {
	tmp := t.TempDir()
	g, err := games.New("tictactoe")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nets.Config{Head: nets.HeadPPO, ConvChannels: []int{8}, Dense: 32}.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	cfg.InputPlanes++ // the legal-move plane
	net, err := nets.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	start := filepath.Join(tmp, "start.safetensors")
	if err := net.Save(start); err != nil {
		t.Fatal(err)
	}
	common := []string{"ppo", "--game", "tictactoe", "--net", start, "--envs", "4", "--env-steps", "8",
		"--minibatches", "2", "--epochs", "2", "--checkpoint-every", "1", "--updates", "5", "--quiet"}
	resumeExact(t, filepath.Join(tmp, "fsp"), append(common, "--league", "fsp", "--shaping",
		"--ent", "0.02", "--ent-decay", "0.5", "--ent-final", "0.001"), rl.KindLatest)
	// Agents with random state of their own (onestep's random moves) are
	// reseeded per update.
	// Weight decay is a setting of the run, not of Adam's saved state.
	resumeExact(t, filepath.Join(tmp, "agents"), append(common, "--opponent", "onestep;random", "--wd", "1e-3"), "onestep")
}

// resumeExact runs args to update 5 in dir/full, then resumes copies of
// it cut back to update 2, with and without Adam's state, and compares.
// kind, unless "", is an opponent kind that must have finished games in
// the last update.
func resumeExact(t *testing.T, dir string, args []string, kind string) {
	t.Helper()
	tmp := dir
	full := filepath.Join(tmp, "full")
	code, stdout, errs := runCLI(t, "", append(args, "--out", full)...)
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, stdout, errs)
	}
	want, err := os.ReadFile(rl.CheckpointPath(full, 5))
	if err != nil {
		t.Fatal(err)
	}
	wantMetrics, err := rl.ReadMetrics(full)
	if err != nil || len(wantMetrics) != 5 {
		t.Fatalf("metrics: %d lines, %v", len(wantMetrics), err)
	}
	if _, ok := wantMetrics[4].Opponents[kind]; kind != "" && !ok {
		t.Errorf("no games against %s in %+v", kind, wantMetrics[4].Opponents)
	}
	if kind == rl.KindLatest && (wantMetrics[0].EntropyCoef != 0.02 || wantMetrics[4].EntropyCoef != 0.001) {
		t.Errorf("entropy coefficients %g .. %g, want 0.02 .. 0.001", wantMetrics[0].EntropyCoef, wantMetrics[4].EntropyCoef)
	}
	// The run as if killed after update 2's checkpoint: the later files
	// are gone, metrics of update 3 remain (to be dropped).
	for _, noAdam := range []bool{false, true} {
		dir := filepath.Join(tmp, fmt.Sprintf("killed-%v", noAdam))
		copyDir(t, full, dir)
		for u := 3; u <= 5; u++ {
			os.Remove(rl.CheckpointPath(dir, u))
			os.Remove(rl.AdamPath(dir, u))
		}
		if noAdam {
			os.Remove(rl.AdamPath(dir, 2))
		}
		code, stdout, errs := runCLI(t, "", "ppo", "--out", dir, "--resume", "--quiet")
		if code != 0 {
			t.Fatalf("resume: status %d\n%s\n%s", code, stdout, errs)
		}
		got, err := os.ReadFile(rl.CheckpointPath(dir, 5))
		if err != nil {
			t.Fatal(err)
		}
		if same := string(got) == string(want); same == noAdam {
			t.Errorf("without Adam's state %v: resumed checkpoint identical %v", noAdam, same)
		}
		if noAdam {
			continue
		}
		ms, err := rl.ReadMetrics(dir)
		if err != nil || len(ms) != 5 {
			t.Fatalf("resumed metrics: %d lines, %v", len(ms), err)
		}
		for i, m := range ms {
			w := wantMetrics[i]
			m.Time, m.SamplesPerSec, w.Time, w.SamplesPerSec = 0, 0, 0, 0
			a, _ := json.Marshal(m)
			b, _ := json.Marshal(w)
			if string(a) != string(b) {
				t.Errorf("update %d: resumed metrics\n%s\nuninterrupted\n%s", i+1, a, b)
			}
		}
	}
	// Charts are drawn into the run directory.
	if ents, _ := filepath.Glob(filepath.Join(full, "*.svg")); len(ents) == 0 {
		t.Error("no charts in the run directory")
	}
}

// Several fixed opponents share the games, and the metrics count each.
func TestPPOOpponentMix(t *testing.T) {
	tmp := t.TempDir()
	g, err := games.New("tictactoe")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nets.Config{Head: nets.HeadPPO, ConvChannels: []int{4}, Dense: 8}.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nets.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	start := filepath.Join(tmp, "start.safetensors")
	if err := net.Save(start); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "run")
	code, stdout, errs := runCLI(t, "", "ppo", "--game", "tictactoe", "--net", start, "--out", out, "--envs", "8", "--env-steps", "16",
		"--opponent", "onestep; random", "--updates", "1", "--quiet")
	if code != 0 {
		t.Fatalf("status %d\n%s\n%s", code, stdout, errs)
	}
	ms, err := rl.ReadMetrics(out)
	if err != nil || len(ms) != 1 {
		t.Fatalf("metrics %v, %v", ms, err)
	}
	one, rnd := ms[0].Opponents["onestep"], ms[0].Opponents["random"]
	if one.Episodes == 0 || rnd.Episodes == 0 || one.Episodes+rnd.Episodes != ms[0].Episodes {
		t.Errorf("games: onestep %d, random %d, all %d", one.Episodes, rnd.Episodes, ms[0].Episodes)
	}
	code, _, errs = runCLI(t, "", "ppo", "--game", "tictactoe", "--out", filepath.Join(tmp, "dup"), "--opponent", "random;random", "--quiet")
	if code != 2 || !strings.Contains(errs, "--opponent") {
		t.Errorf("duplicate opponents: status %d, %q", code, errs)
	}
}
