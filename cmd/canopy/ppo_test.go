package main

import (
	"context"
	"encoding/json"
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
	args := []string{"ppo", "--game", "tictactoe", "--net", start, "--out", out, "--envs", "4", "--steps", "8",
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
	a, err := agent.New(g, "policy:net="+ckpt, 1)
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
		{"updates", "0"}, {"updates", "1000000"}, {"envs", "0"}, {"envs", "5000"}, {"steps", "0"}, {"steps", "70000"},
		{"lr", "0"}, {"lr", "NaN"}, {"lr", "2"}, {"ent", "-1"}, {"ent", "Inf"}, {"epochs", "0"}, {"minibatches", "0"},
		{"minibatches", "100000"}, {"checkpoint-every", "0"},
	} {
		code, _, errs := runCLI(t, "", "ppo", "--game", "tictactoe", "--out", out, "--"+tc.flag, tc.value, "--quiet")
		if code != 2 || !strings.Contains(errs, "--"+tc.flag) {
			t.Errorf("--%s %s: status %d, %q", tc.flag, tc.value, code, errs)
		}
	}
	if code, _, errs := runCLI(t, "", "ppo", "--game", "tictactoe", "--out", out, "--envs", "4096", "--steps", "4096"); code != 2 || !strings.Contains(errs, "--envs x --steps") {
		t.Errorf("huge rollout: status %d, %q", code, errs)
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
