package main

import (
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// Tests for issue 46 ("Hardening III"): each reproduces a failure seen
// there. They run in-process under -short, in seconds.

// Item 3: devices grew without limit (4.8 GB in 8 s) and a FIFO blocked
// for ever; every reader of whole files now takes regular files only, or
// reads pipes without waiting for a writer and with a cap.
func TestUnboundedInputFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses /dev/zero and mkfifo")
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fifo, fifo+".npz"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		want int
		args []string
	}{
		{1, []string{"net", "info", "/dev/zero"}},
		{1, []string{"net", "info", "/dev/urandom"}},
		{1, []string{"net", "info", fifo}},
		{1, []string{"net", "eval", "--game", "tictactoe", "--net", fifo}},
		{2, []string{"move", "--game", "connect4", "--agent", "az:net=/dev/zero"}},
		{2, []string{"move", "--game", "connect4", "--agent", "az:net=" + fifo}},
		{1, []string{"solve", "--outcome", "--book", "/dev/zero"}},
		{1, []string{"solve", "--outcome", "--book", fifo}},
		{1, []string{"replay", "--log", "/dev/zero"}},
		{1, []string{"replay", "--log", fifo}},
		{1, []string{"train", "--game", "tictactoe", "--data", fifo + ".npz"}},
	} {
		checkBad(t, c.want, "", c.args...)
	}
}

// Item 4: zero had no memory check and train --batch none at all; both
// died of out-of-memory. They refuse with the estimate, status 2, and
// leave no run directory.
func TestRunMemoryChecks(t *testing.T) {
	old := physicalMemory
	physicalMemory = func() (float64, bool) { return 2e9, true }
	defer func() { physicalMemory = old }()
	tmp := t.TempDir()
	out := filepath.Join(tmp, "zero")
	r := runGuarded(t, "", "zero", "--game", "tictactoe", "--games", "65536", "--trees", "65536", "--sims", "100000", "--out", out)
	if r.code != 2 || !strings.Contains(r.err, "needs about") {
		t.Errorf("zero --games 65536 --trees 65536 --sims 100000: status %d, %q; want 2 and the estimate", r.code, r.err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the refused zero run left a directory")
	}
	// Self-play trees with subtree reuse take 4 x sims nodes and a spare
	// arena: 1024 trees of 2000 simulations (about 4 GB) do not fit in
	// 2 GB; the old estimate (sims + leaves + 16 nodes, 0.5 GB) let them.
	r = runGuarded(t, "", "selfplay", "--game", "tictactoe", "--backend", "random", "--games", "1024", "--trees", "1024", "--sims", "2000", "--out", filepath.Join(tmp, "sp0"))
	if r.code != 2 || !strings.Contains(r.err, "needs about") {
		t.Errorf("selfplay 1024 trees x 2000 sims on 2 GB: status %d, %q; want 2 and the estimate", r.code, r.err)
	}
	sp := filepath.Join(tmp, "sp")
	if code, _, errs := runCLI(t, "", "selfplay", "--game", "connect4", "--backend", "random", "--games", "2", "--sims", "8", "--quiet", "--out", sp); code != 0 {
		t.Fatalf("selfplay: %s", errs)
	}
	r = runGuarded(t, "", "train", "--data", sp, "--out", filepath.Join(tmp, "nets"), "--batch", "65536", "--steps", "1", "--quiet")
	if r.code != 2 || !strings.Contains(r.err, "--batch 65536 needs about") {
		t.Errorf("train --batch 65536: status %d, %q; want 2 and the estimate", r.code, r.err)
	}
}

// Item 4: one argument no longer starts unbounded work: tune and arena
// cap their totals, perft estimates its time and asks for --yes.
func TestUnboundedWorkRefused(t *testing.T) {
	checkBad(t, 2, "", "tune", "--game", "tetrislink", "--games", "1000000000", "--iters", "1000000000")
	checkBad(t, 2, "", "perft", "--game", "hex:size=13", "--depth", "50")
	checkBad(t, 2, "", "arena", "--game", "tictactoe", "--agents", "random;random", "--games", "10000000", "--bootstrap", "100000")
	if code, out, errs := runCLI(t, "", "perft", "--game", "tictactoe", "--depth", "9"); code != 0 || !strings.Contains(out, "9 127872") {
		t.Errorf("perft tictactoe to depth 9 (127872 nine-move games, a known count): status %d, %q %q", code, out, errs)
	}
}

// Item 11: an out-of-range --games is a usage error like the others (it
// exited 1).
func TestSelfplayGamesRange(t *testing.T) {
	checkBad(t, 2, "", "selfplay", "--game", "tictactoe", "--backend", "random", "--games", "9223372036854775807", "--out", filepath.Join(t.TempDir(), "r"))
}

// Item 11: a network whose metadata names another game is refused where
// its shapes fit (it played that game's moves in this one).
func TestNetOfAnotherGameRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h5.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "hex:size=5,swap=true", "--out", p); code != 0 {
		t.Fatalf("net init: %s", errs)
	}
	checkBad(t, 2, "", "move", "--game", "hex:size=5,swap=false", "--agent", "az:sims=4,net="+p)
	if code, _, errs := runCLI(t, "", "move", "--game", "hex:size=5,swap=true", "--agent", "az:sims=4,net="+p); code != 0 {
		t.Errorf("the net on its own game: status %d, %s", code, errs)
	}
}

// overflowNetFor writes the built-in net of game spec with every weight
// 3e38: finite, so it loads, but its outputs overflow to NaN.
func overflowNetFor(t *testing.T, spec string) string {
	t.Helper()
	g, _ := games.New(spec)
	net, err := nets.New(mustBuiltin(t, g), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range net.Params() {
		for i := range p.Data {
			p.Data[i] = 3e38
		}
	}
	net.Invalidate()
	path := filepath.Join(t.TempDir(), "overflow.safetensors")
	if err := net.Save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Item 6: a run that failed before producing anything (a --net whose
// outputs are NaN) left settings that made the corrected command (without
// --net) fail the same way; now the corrected command runs in the same
// directory.
func TestFailedRunDoesNotBlockTheCorrectedOne(t *testing.T) {
	bad := overflowNetFor(t, "tictactoe")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"zero", []string{"zero", "--game", "tictactoe", "--games", "2", "--trees", "2", "--sims", "4", "--steps", "2", "--batch", "8",
			"--eval-games", "0", "--iterations", "1", "--backend", "cpu", "--quiet"}},
		{"selfplay", []string{"selfplay", "--game", "tictactoe", "--games", "2", "--sims", "4", "--backend", "cpu", "--quiet"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append(append([]string{}, c.args...), "--out", out)
			if r := runGuarded(t, "", append(args, "--net", bad)...); r.code == 0 {
				t.Fatalf("the overflowing net was accepted: %s", r.err)
			}
			if r := runGuarded(t, "", args...); r.code != 0 {
				t.Errorf("the corrected command: status %d: %s", r.code, tail(r.err))
			}
		})
	}
}
