package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// An input named on the command line that does not exist is a usage
// error (exit 2), in every command that reads one (issue 39, also-fix
// list: "usage errors exit 2 everywhere"; a missing weights file already
// was one in every --net).
func TestMissingInputsAreUsageErrors(t *testing.T) {
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "nosuch")
	for _, args := range [][]string{
		{"replay", "--log", missing},
		{"net", "import", missing + ".onnx", "--out", filepath.Join(tmp, "x.safetensors")},
		{"plot", "run", missing, "--out", tmp},
		{"plot", "logs", missing, "--out", tmp},
		{"plot", "arena", missing, "--out", tmp},
		{"train", "--data", missing, "--game", "tictactoe", "--out", filepath.Join(tmp, "t")},
	} {
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "nosuch") || !strings.Contains(stderr, "--help` for usage") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 naming the file and pointing at --help", strings.Join(args, " "), code, stderr)
		}
	}
}

// canopy bench's targets are subcommands like net's: a failure names the
// target once ("canopy bench net: ..."), points at the target's own
// --help, and a misspelled target is suggested.
func TestBenchSubcommandMessages(t *testing.T) {
	code, _, stderr := runCLI(t, "", "bench", "net", "--game", "conect4")
	if code != 2 || !strings.HasPrefix(stderr, "canopy bench net: ") || !strings.Contains(stderr, "`canopy bench net --help`") {
		t.Errorf("bench net --game conect4: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "bench", "games", "--bogus")
	if code != 2 || !strings.HasPrefix(stderr, "canopy bench games: flag provided but not defined: -bogus") {
		t.Errorf("bench games --bogus: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "bench", "nett")
	if code != 2 || !strings.Contains(stderr, `(did you mean "net"?)`) {
		t.Errorf("bench nett: exit %d, stderr %q", code, stderr)
	}
}

// canopy plot names its kind once and suggests a misspelled one.
func TestPlotKindMessages(t *testing.T) {
	code, _, stderr := runCLI(t, "", "plot", "rnu", "x")
	if code != 2 || !strings.Contains(stderr, `(did you mean "run"?)`) {
		t.Errorf("plot rnu x: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "plot", "nope")
	if code != 2 || strings.Contains(stderr, "plot nope:") || !strings.Contains(stderr, "want run, logs or arena") {
		t.Errorf("plot nope: exit %d, stderr %q; want the unknown kind named once", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "plot", "run", "a", "b")
	if code != 2 || strings.Contains(stderr, "plot: plot run") {
		t.Errorf("plot run a b: exit %d, stderr %q; want the command named once", code, stderr)
	}
}
