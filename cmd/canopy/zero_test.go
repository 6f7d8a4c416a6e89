package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestZeroNetCacheFlag: zero takes --net-cache as selfplay does; a size
// out of range, or one with fleet self-play (whose workers keep no
// cache), is a usage error.
func TestZeroNetCacheFlag(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"zero", "--game", "tictactoe", "--out", dir + "/a", "--net-cache", "-1"},
		{"zero", "--game", "tictactoe", "--out", dir + "/b", "--net-cache", "64", "--nats", "embedded"},
	} {
		if code, _, errs := runCLI(t, "", args...); code != 2 || !strings.Contains(errs, "--net-cache") {
			t.Errorf("%v: status %d, stderr %q: want 2 naming --net-cache", args, code, errs)
		}
	}
}

// zero writes the CPU and allocation profiles it is asked for, over the
// loop and over --score-net alike; a profile that cannot be written is a
// usage error before anything runs.
func TestZeroProfiles(t *testing.T) {
	d := t.TempDir()
	for name, args := range map[string][]string{
		"loop": {"zero", "--game", "tictactoe", "--out", filepath.Join(d, "run"), "--iterations", "1", "--games", "4",
			"--trees", "2", "--sims", "8", "--steps", "2", "--batch", "8", "--eval-games", "2", "--baselines", "random", "--quiet"},
		"score-net": {"zero", "--score-net", "init", "--solver-positions", "4", "--solver-sims", "8"},
	} {
		cpu, mem := filepath.Join(d, name+"-cpu.pprof"), filepath.Join(d, name+"-mem.pprof")
		code, _, errs := runCLI(t, "", append(args, "--cpuprofile", cpu, "--memprofile", mem)...)
		if code != 0 {
			t.Fatalf("%s: %d %s", name, code, errs)
		}
		checkProfiles(t, cpu, mem)
	}
	out := filepath.Join(d, "never")
	code, _, errs := runCLI(t, "", "zero", "--game", "tictactoe", "--out", out, "--cpuprofile", filepath.Join(d, "no", "such", "dir", "cpu.pprof"))
	if code != 2 || !strings.Contains(errs, "--cpuprofile") {
		t.Errorf("--cpuprofile in a missing directory: status %d, stderr %q: want 2 naming --cpuprofile", code, errs)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the refused command created %s", out)
	}
}
