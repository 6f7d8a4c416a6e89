package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/rl"
)

// TestPPORecurrentCLI trains study 000's CNN-LSTM on Sequence for two
// tiny updates, resumes to a third, plays the checkpoint in the arena as
// the policy agent, and refuses what recurrent runs do not take before
// creating a run directory.
func TestPPORecurrentCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the full-size CNN-LSTM (seconds)")
	}
	tmp := t.TempDir()
	out := filepath.Join(tmp, "run")
	args := []string{"ppo", "--game", "sequence:jacks=false", "--preset", "sequence-lstm", "--out", out, "--envs", "2", "--env-steps", "8",
		"--minibatches", "2", "--epochs", "1", "--checkpoint-every", "1", "--quiet"}
	if code, stdout, errs := runCLI(t, "", append(args, "--updates", "2")...); code != 0 || !strings.Contains(stdout, "update-000002.safetensors") {
		t.Fatalf("status %d\n%s\n%s", code, stdout, errs)
	}
	if code, stdout, errs := runCLI(t, "", append(args, "--updates", "3", "--resume")...); code != 0 || !strings.Contains(stdout, "update-000003.safetensors") {
		t.Fatalf("resume: status %d\n%s\n%s", code, stdout, errs)
	}
	ckpt := rl.CheckpointPath(out, 3)
	if code, stdout, errs := runCLI(t, "", "arena", "--game", "sequence:jacks=false", "--games", "2", "--agents", "policy:net="+ckpt+";random"); code != 0 {
		t.Fatalf("arena: status %d\n%s\n%s", code, stdout, errs)
	}
	for _, bad := range [][]string{{"--minibatches", "3"}, {"--legal-plane"}} {
		dir := filepath.Join(tmp, "bad")
		a := []string{"ppo", "--game", "sequence:jacks=false", "--preset", "sequence-lstm", "--out", dir, "--envs", "2", "--updates", "1"}
		if code, _, errs := runCLI(t, "", append(a, bad...)...); code != 2 {
			t.Errorf("%v: status %d (%s), want a usage error", bad, code, errs)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%v: the refused run created %s", bad, dir)
		}
	}
}

// Study 000's schedule league with the recurrent learner: after the
// warm-up, recurrent snapshots from the pool play; a run killed after
// update 2 and resumed (its pool refilled from the checkpoints) ends with
// the same weights, bit for bit, as the uninterrupted run, so the pool
// and the opponents' LSTM states were restored as they were.
func TestPPORecurrentLeagueResumeExact(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the full-size CNN-LSTM for 11 updates (seconds)")
	}
	for _, league := range []string{"schedule", "fsp"} {
		args := []string{"ppo", "--game", "sequence:jacks=false", "--preset", "sequence-lstm", "--league", league,
			"--league-warmup", "2", "--greedy", "sequence-greedy", "--envs", "2", "--env-steps", "8", "--minibatches", "2", "--epochs", "1",
			"--checkpoint-every", "1", "--updates", "5", "--wd", "1e-5", "--quiet"}
		resumeExact(t, filepath.Join(t.TempDir(), league), args, "")
	}
}
