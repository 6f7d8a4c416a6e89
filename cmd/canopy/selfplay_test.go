package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/canopy-go/canopy/internal/runlock"
)

func TestSelfplayCLI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"selfplay", "--game", "tictactoe", "--games", "4", "--trees", "2", "--sims", "8", "--out", dir, "--quiet", "--seed", "3"}
	code, out, errs := runCLI(t, "", args...)
	if code != 0 || !strings.Contains(out, "4 games") {
		t.Fatalf("status %d\n%s\n%s", code, out, errs)
	}
	var m struct {
		Game          string              `json:"game"`
		NetworkSHA256 string              `json:"network_sha256"`
		Totals        struct{ Games int } `json:"totals"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil || json.Unmarshal(data, &m) != nil || m.Game != "tictactoe" || m.Totals.Games != 4 || len(m.NetworkSHA256) != 64 {
		t.Fatalf("manifest %s: %v", data, err)
	}
	// Same directory without --resume: refused (exit 1); with --resume and
	// more games: continues.
	if code, _, errs := runCLI(t, "", args...); code != 1 || !strings.Contains(errs, "--resume") {
		t.Errorf("rerun without --resume: %d %q", code, errs)
	}
	args[4] = "6"
	if code, out, errs := runCLI(t, "", append(args, "--resume", "--json")...); code != 0 || !strings.Contains(out, `"games": 6`) {
		t.Errorf("resume: %d %q %q", code, out, errs)
	}
	// A changed flag is a usage error naming it (the last --sims wins).
	if code, _, errs := runCLI(t, "", append(args, "--resume", "--sims", "9")...); code != 2 || !strings.Contains(errs, "these settings differ from the run's: --sims 9 (run: 8)") {
		t.Errorf("resume with other sims: %d %q", code, errs)
	}
	for _, bad := range [][]string{
		{"selfplay", "--games", "0"},
		{"selfplay", "--game", "nosuchgame"},
		{"selfplay", "--game", "tictactoe", "--backend", "nosuch", "--out", t.TempDir()},
	} {
		if code, _, errs := runCLI(t, "", bad...); code != 2 {
			t.Errorf("%v: status %d, want 2 (%q)", bad, code, errs)
		}
	}
	if code, _, errs := runCLI(t, "", "selfplay", "--game", "tictactoe", "--net", "/no/such.safetensors"); code != 2 || !strings.Contains(errs, "--net") {
		t.Errorf("missing net: %d %q", code, errs)
	}
}

func TestBenchSearchCLI(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "", "bench", "search", "--game", "connect4", "--net", "random", "--trees", "8", "--sims", "16",
		"--seconds", "0.3", "--out", dir, "--quiet")
	if code != 0 || !strings.Contains(out, "nodes/s") || !strings.Contains(out, "latency") {
		t.Fatalf("status %d\n%s\n%s", code, out, errs)
	}
	for _, f := range []string{"cpu.pprof", "result.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run directory lacks %s: %v", f, err)
		}
	}
	if code, _, _ := runCLI(t, "", "bench", "search", "--trees", "0"); code != 2 {
		t.Errorf("--trees 0: status %d, want 2", code)
	}
}

// cliHelperEnv carries, JSON-encoded, the arguments a re-executed test
// binary runs the CLI with (TestCLIHelperProcess): a real process, for
// signals and locks.
const cliHelperEnv = "CANOPY_TEST_CLI_ARGS"

// TestCLIHelperProcess is not a test: it is the body of the process
// startCLI starts.
func TestCLIHelperProcess(t *testing.T) {
	js := os.Getenv(cliHelperEnv)
	if js == "" {
		t.Skip("helper process only")
	}
	var args []string
	if err := json.Unmarshal([]byte(js), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	os.Exit(run(args, &env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}

// startCLI starts canopy args in a child process.
func startCLI(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	js, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLIHelperProcess$")
	cmd.Env = append(os.Environ(), cliHelperEnv+"="+string(js))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &out, &errb
}

// waitFor polls cond for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

type spManifest struct {
	Shards []struct {
		File  string `json:"file"`
		Games int    `json:"games"`
	} `json:"shards"`
	Totals   struct{ Games int } `json:"totals"`
	Sessions []struct {
		Backend string `json:"backend"`
		Games   int    `json:"games"`
	} `json:"sessions"`
}

func readSPManifest(t *testing.T, dir string) spManifest {
	t.Helper()
	var m spManifest
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil || json.Unmarshal(data, &m) != nil {
		t.Fatalf("manifest: %v\n%s", err, data)
	}
	return m
}

// SIGTERM and SIGHUP, like Ctrl-C, stop self-play after saving the
// finished games.
func TestSelfplaySavesOnSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			cmd, _, errb := startCLI(t, "selfplay", "--game", "tictactoe", "--backend", "random", "--games", "1000000",
				"--trees", "4", "--sims", "64", "--quiet", "--out", dir)
			if !waitFor(60*time.Second, func() bool { _, err := os.Stat(filepath.Join(dir, "manifest.json")); return err == nil }) {
				t.Fatalf("no manifest after 60 s; stderr %q", errb)
			}
			time.Sleep(time.Second) // some games finish, some wait in the buffer
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatalf("still running 60 s after %v", sig)
			}
			var n int
			msg := strings.TrimSpace(errb.String())
			i := strings.Index(msg, "after ")
			if code := cmd.ProcessState.ExitCode(); code != 1 || i < 0 || !strings.Contains(msg, "--resume") {
				t.Fatalf("after %v: %v, stderr %q; want status 1 and the interrupted message", sig, cmd.ProcessState, msg)
			}
			fmt.Sscanf(msg[i:], "after %d new games", &n)
			if m := readSPManifest(t, dir); n < 1 || m.Totals.Games != n {
				t.Errorf("%d games reported, %d saved; want the same, at least 1", n, m.Totals.Games)
			}
		})
	}
}

// A directory in use by another process is refused at once, naming the
// holder; free again, it works.
func TestSelfplayLockedDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	lock, err := runlock.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"selfplay", "--game", "tictactoe", "--backend", "random", "--games", "2", "--trees", "2", "--sims", "4",
		"--quiet", "--out", dir}
	r := runGuarded(t, "", args...)
	want := fmt.Sprintf("is in use by another canopy process (pid %d, started ", os.Getpid())
	if p := errorProblem(r); p != "" || r.code != 1 || !strings.Contains(r.err, want) {
		t.Errorf("locked directory: status %d, problem %q, stderr %q; want 1 and %q", r.code, p, r.err, want)
	}
	lock.Release()
	if r := runGuarded(t, "", args...); r.code != 0 {
		t.Errorf("after release: status %d, %q", r.code, r.err)
	}
	// train and zero take the same lock on their --out.
	lock, _ = runlock.Acquire(dir)
	defer lock.Release()
	if r := runGuarded(t, "", "train", "--data", dir, "--out", dir, "--steps", "1", "--batch", "2", "--quiet"); r.code != 1 ||
		!strings.Contains(r.err, want) {
		t.Errorf("train into a locked directory: status %d, %q", r.code, r.err)
	}
}

// --resume checks the shards: a missing one is regenerated (and said so);
// a finished run is left byte for byte as it was.
func TestSelfplayResumeChecksShards(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"selfplay", "--game", "tictactoe", "--backend", "random", "--games", "6", "--trees", "2", "--sims", "8",
		"--quiet", "--out", dir, "--seed", "5"}
	if r := runGuarded(t, "", args...); r.code != 0 {
		t.Fatalf("status %d\n%s", r.code, r.err)
	}
	first := readSPManifest(t, dir)
	if len(first.Shards) == 0 {
		t.Fatalf("manifest %+v", first)
	}
	if len(first.Sessions) != 1 || first.Sessions[0].Games != 6 {
		t.Errorf("sessions %+v, want one of 6 games", first.Sessions)
	}
	// Resuming a finished run rewrites nothing.
	mpath := filepath.Join(dir, "manifest.json")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(mpath, old, old)
	before, _ := os.ReadFile(mpath)
	if r := runGuarded(t, "", append(args, "--resume")...); r.code != 0 || !strings.Contains(r.out, "(0 new games") || r.err != "" {
		t.Errorf("resume of a finished run: status %d, %q %q", r.code, r.out, r.err)
	}
	after, _ := os.ReadFile(mpath)
	if fi, _ := os.Stat(mpath); string(after) != string(before) || !fi.ModTime().Equal(old) {
		t.Errorf("resume of a finished run rewrote the manifest")
	}
	// A deleted shard is noticed and its games played again.
	os.Remove(filepath.Join(dir, first.Shards[0].File))
	r := runGuarded(t, "", append(args, "--resume")...)
	if again := fmt.Sprintf("(%d new games", first.Shards[0].Games); r.code != 0 || !strings.Contains(r.out, "6 games") || !strings.Contains(r.out, again) {
		t.Fatalf("resume after deleting a shard: status %d, %q %q", r.code, r.out, r.err)
	}
	if !strings.Contains(r.err, "warning") || !strings.Contains(r.err, first.Shards[0].File+`", which is missing`) ||
		!strings.Contains(r.err, "will be regenerated") || strings.Count(r.err, "\n") != len(first.Shards) {
		t.Errorf("stderr %q; want one warning per shard naming it and its games", r.err)
	}
	if m := readSPManifest(t, dir); m.Totals.Games != 6 || len(m.Sessions) != 2 {
		t.Errorf("repaired manifest: %+v", m)
	}
}

// Run directories that must be refused with a one-line error.
func TestSelfplayBadRunDirs(t *testing.T) {
	tmp := t.TempDir()
	base := []string{"selfplay", "--game", "tictactoe", "--backend", "random", "--games", "2", "--trees", "2", "--sims", "4",
		"--quiet", "--resume", "--out"}
	good := filepath.Join(tmp, "good")
	if r := runGuarded(t, "", append(base, good)...); r.code != 0 {
		t.Fatalf("status %d %q", r.code, r.err)
	}
	manifest, _ := os.ReadFile(filepath.Join(good, "manifest.json"))
	for name, edit := range map[string]func(string) string{
		"games 3e9":       func(s string) string { return strings.Replace(s, `"games": 2,`, `"games": 3000000000,`, 1) },
		"negative games":  func(s string) string { return strings.Replace(s, `"games": 2,`, `"games": -2,`, 1) },
		"not JSON":        func(string) string { return "\x00garbage" },
		"truncated":       func(s string) string { return s[:len(s)/2] },
		"other obs shape": func(s string) string { return strings.Replace(s, `"obs_shape": [`, `"obs_shape": [1073741824, `, 1) },
	} {
		dir := filepath.Join(tmp, strings.ReplaceAll(name, " ", "-"))
		os.Mkdir(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(edit(string(manifest))), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) { checkBad(t, 1, "", append(base, dir)...) })
	}
	// A manifest entry pointing outside the run is dropped, never read.
	dir := filepath.Join(tmp, "escape")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(strings.Replace(string(manifest), `"shard-000000.npz"`, `"../../../../etc/passwd"`, 1)), 0o644)
	if r := runGuarded(t, "", append(base, dir)...); r.code != 0 || !strings.Contains(r.err, "not a plain .npz file name") {
		t.Errorf("escaping shard entry: status %d, %q", r.code, r.err)
	}
}

// --turn-search plays and records whole-turn self-play (the manifest
// names the search) and resumes it; flags without meaning under it,
// single-action games and non-TurnSearchers are usage errors of one
// line.
func TestSelfplayTurnSearchCLI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"selfplay", "--game", "connect4d:d=4", "--turn-search", "emcts:sims=12", "--games", "3", "--trees", "2",
		"--out", dir, "--quiet", "--backend", "cpu"}
	if code, out, errs := runCLI(t, "", args...); code != 0 || !strings.Contains(out, "3 games") {
		t.Fatalf("status %d\n%s\n%s", code, out, errs)
	}
	var m struct {
		TurnSearch string              `json:"turn_search"`
		Totals     struct{ Games int } `json:"totals"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil || json.Unmarshal(data, &m) != nil || m.TurnSearch != "emcts:sims=12" || m.Totals.Games != 3 {
		t.Fatalf("manifest %s: %v", data, err)
	}
	args[6] = "4"
	if code, out, errs := runCLI(t, "", append(args, "--resume")...); code != 0 || !strings.Contains(out, "4 games") {
		t.Errorf("resume: %d %q %q", code, out, errs)
	}
	args[4] = "emcts:sims=13"
	if code, _, errs := runCLI(t, "", append(args, "--resume")...); code != 2 || !strings.Contains(errs, "--turn-search emcts:sims=13 (run: emcts:sims=12)") {
		t.Errorf("resume with another turn search: %d %q", code, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--game", "connect4d:d=4", "--turn-search", "mcts-bb", "--sims", "9", "--dirichlet", "0.3"}, "--dirichlet, --sims: no meaning with --turn-search"},
		{[]string{"--game", "connect4d:d=4", "--turn-search", "mcts-bb", "--workers", "2"}, "--workers: no meaning"},
		{[]string{"--game", "tictactoe", "--turn-search", "mcts-bb"}, "not a multi-action game"},
		{[]string{"--game", "strands:size=4", "--turn-search", "oep"}, "not a TurnSearcher"},
		{[]string{"--game", "strands:size=4", "--turn-search", "mcts-bb:time=1s"}, "use sims=N"},
	} {
		code, _, errs := runCLI(t, "", append([]string{"selfplay", "--out", t.TempDir()}, c.args...)...)
		// The error's line (after any deprecation warning: --dirichlet).
		lines := strings.Split(errs, "\n")
		for len(lines) > 1 && strings.Contains(lines[0], ": warning: ") {
			lines = lines[1:]
		}
		if code != 2 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%v: status %d, %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}
