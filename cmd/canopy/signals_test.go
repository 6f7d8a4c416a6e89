package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 46 item 5: every run command stops on SIGTERM (what timeout,
// systemd, docker stop and batch schedulers send) and SIGHUP (a closed
// terminal) as on Ctrl-C: it saves what it has, says so with status 1,
// and the same command continues the run.
func TestRunCommandsSaveOnSIGTERM(t *testing.T) {
	exists := func(pattern string) func() bool {
		return func() bool { m, _ := filepath.Glob(pattern); return len(m) > 0 }
	}
	for _, tc := range []struct {
		name  string
		args  func(dir string) []string
		ready func(dir string) func() bool // when to send the signal
		// resume is the command that continues the run; check looks at
		// its result.
		resume func(dir string) []string
		check  func(t *testing.T, dir, out string)
	}{
		{
			name: "zero",
			args: func(dir string) []string {
				return []string{"zero", "--game", "tictactoe", "--games", "4", "--trees", "4", "--sims", "8", "--steps", "4",
					"--batch", "8", "--eval-games", "0", "--iterations", "100000", "--quiet", "--backend", "cpu", "--out", dir}
			},
			ready:  func(dir string) func() bool { return exists(filepath.Join(dir, "checkpoints", "iter-0002*")) },
			resume: func(dir string) []string { return []string{"zero", "--more", "1", "--quiet", "--out", dir} },
			check: func(t *testing.T, dir, _ string) {
				if _, err := os.Stat(filepath.Join(dir, "metrics.jsonl")); err != nil {
					t.Error(err)
				}
			},
		},
		{
			name: "train",
			args: func(dir string) []string {
				return []string{"train", "--data", filepath.Join(dir, "..", "sp"), "--out", dir, "--steps", "3000", "--batch", "16",
					"--checkpoint-every", "100", "--quiet"}
			},
			ready: func(dir string) func() bool { return exists(filepath.Join(dir, "iter-0001.step-*")) },
			check: func(t *testing.T, dir, out string) {
				if !strings.Contains(out, "3000 steps in all") {
					t.Errorf("the rerun's report: %q, want 3000 steps in all", out)
				}
				if m, _ := filepath.Glob(filepath.Join(dir, "*.step-*")); len(m) > 0 {
					t.Errorf("intermediate saves left after the run completed: %v", m)
				}
			},
		},
		{
			name: "ppo",
			args: func(dir string) []string {
				return []string{"ppo", "--game", "tictactoe", "--out", dir, "--envs", "4", "--env-steps", "8", "--updates", "100000", "--quiet"}
			},
			ready: func(dir string) func() bool { return exists(filepath.Join(dir, "update-*.safetensors")) },
			resume: func(dir string) []string {
				m, _ := filepath.Glob(filepath.Join(dir, "update-??????.safetensors"))
				return []string{"ppo", "--game", "tictactoe", "--out", dir, "--envs", "4", "--env-steps", "8", "--quiet", "--resume",
					"--updates", strings.TrimLeft(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m[len(m)-1]), "update-"), ".safetensors"), "0") + "1"}
			},
		},
		{
			name: "arena",
			args: func(dir string) []string {
				return []string{"arena", "--game", "tictactoe", "--agents", "random;mcts:sims=50", "--games", "100000", "--logs", dir, "--quiet"}
			},
			ready: func(dir string) func() bool { return exists(filepath.Join(dir, "game-*.json")) },
			resume: func(dir string) []string {
				return []string{"arena", "--game", "tictactoe", "--agents", "random;mcts:sims=50", "--games", "100000", "--logs", dir, "--report"}
			},
			check: func(t *testing.T, dir, out string) {
				if !strings.Contains(out, "PARTIAL") {
					t.Errorf("--report on the saved logs: %q", out)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, "run")
			if tc.name == "train" {
				if code, _, errs := runCLI(t, "", "selfplay", "--game", "tictactoe", "--backend", "random", "--games", "20",
					"--sims", "8", "--quiet", "--out", filepath.Join(tmp, "sp")); code != 0 {
					t.Fatalf("selfplay: %s", errs)
				}
			}
			args := tc.args(dir)
			cmd, _, errb := startCLI(t, args...)
			if !waitFor(60*time.Second, tc.ready(dir)) {
				t.Fatalf("nothing saved after 60 s; stderr %q", tail(errb.String()))
			}
			cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("still running 60 s after SIGTERM")
			}
			msg := strings.TrimSpace(errb.String())
			if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(msg, "interrupted") || !strings.Contains(msg, "terminated") {
				t.Fatalf("after SIGTERM: %v, stderr %q; want status 1 and an interrupted (terminated) message", cmd.ProcessState, tail(msg))
			}
			// Item 8: temporary files of writes a kill -9 cut short, in
			// the run's directories, are removed when the run resumes.
			var temps []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() && d.Name() != "plots" && tc.name != "arena" { // arena: --report only reads
					tmp := filepath.Join(p, ".iter-0001.safetensors.tmp-123456")
					write(t, tmp, "partial")
					temps = append(temps, tmp)
				}
				return nil
			})
			resume := args
			if tc.resume != nil {
				resume = tc.resume(dir)
			}
			code, out, errs := runCLI(t, "", resume...)
			if code != 0 {
				t.Fatalf("canopy %s: status %d: %s", quoteArgs(resume), code, tail(errs))
			}
			if tc.check != nil {
				tc.check(t, dir, out)
			}
			for _, p := range temps {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s: temporary file left after the run resumed", p)
				}
			}
		})
	}
}

// Issue 46 item 11: an arena stopped before any game finished says so
// (it printed only "context canceled").
func TestArenaInterruptedBeforeAnyGame(t *testing.T) {
	cmd, _, errb := startCLI(t, "arena", "--game", "connect4", "--agents", "mcts:sims=10000000;random", "--games", "1", "--quiet")
	time.Sleep(time.Second)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	msg := strings.TrimSpace(errb.String())
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(msg, "interrupted (terminated)") || !strings.Contains(msg, "no game") {
		t.Errorf("status %d, stderr %q; want 1 and a message saying no game had finished", code, msg)
	}
}
