package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if code, _, errs := runCLI(t, "", append(args, "--resume", "--sims", "9")...); code != 1 || !strings.Contains(errs, "settings") {
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
	if code, _, errs := runCLI(t, "", "selfplay", "--game", "tictactoe", "--net", "/no/such.safetensors"); code != 1 || !strings.Contains(errs, "--net") {
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
