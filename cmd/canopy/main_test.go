package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the CLI in-process and returns status, stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

func TestTopLevel(t *testing.T) {
	if code, _, _ := runCLI(t, ""); code != 2 {
		t.Errorf("no args: status %d, want 2", code)
	}
	if code, out, _ := runCLI(t, "", "help"); code != 0 || !strings.Contains(out, "Commands:") {
		t.Errorf("help: %d %q", code, out)
	}
	if code, _, errs := runCLI(t, "", "frobnicate"); code != 2 || !strings.Contains(errs, "unknown command") {
		t.Errorf("unknown: %d %q", code, errs)
	}
}

// Every command must answer --help with status 0 and a usage line.
func TestEveryCommandHasHelp(t *testing.T) {
	for name := range commands {
		code, _, errs := runCLI(t, "", name, "--help")
		if code != 0 || !strings.Contains(errs, "Usage: canopy "+name) {
			t.Errorf("%s --help: status %d, output %q", name, code, errs)
		}
		code, _, errs = runCLI(t, "", name, "--no-such-flag")
		if code != 2 {
			t.Errorf("%s --no-such-flag: status %d, want 2 (%q)", name, code, errs)
		}
	}
}

// Misspelled commands, flags, games, agents, agent options and backends
// are usage errors (exit 2) that name what was meant.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"arnea"}, `did you mean "arena"?`},
		{[]string{"help", "selfply"}, `did you mean "selfplay"?`},
		{[]string{"arena", "--gmes", "3"}, "did you mean --games?"},
		{[]string{"arena", "--game", "conect4", "--agents", "random,random", "--games", "1"}, `did you mean "connect4"?`},
		{[]string{"arena", "--game", "connect4", "--agents", "randm,random", "--games", "1"}, `did you mean "random"?`},
		{[]string{"arena", "--game", "connect4", "--agents", "mcts:smis=3;random", "--games", "1"}, `did you mean "sims"?`},
		{[]string{"arena", "--game", "connect4", "--agents", "random,random", "--games", "1", "--backend", "cpp"}, `did you mean "cpu"?`},
		{[]string{"arena", "--game", "connect4", "--agents", "random,random", "--games", "1", "--backend", "cpu:thread=2"}, `did you mean "threads"?`},
	} {
		code, _, stderr := runCLI(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// Progress and status written to a file or pipe (anything but a
// terminal) are whole lines: no carriage returns or erase sequences in
// redirected output.
func TestProgressPlainWhenRedirected(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b, "games", 100, false)
	for i := 1; i <= 100; i++ {
		p.update(i, "")
	}
	st := newStatus(&b, false)
	st.set("iteration 1 self-play: 3/64 games")
	st.set("iteration 1 self-play: 4/64 games") // within plainEvery: dropped
	st.clear()
	out := b.String()
	if strings.ContainsAny(out, "\r\x1b") {
		t.Errorf("redirected progress has \\r or ESC: %q", out)
	}
	if !strings.Contains(out, "games 1/100") || !strings.Contains(out, "games 100/100 (100%)") || !strings.Contains(out, "3/64 games\n") || strings.Contains(out, "4/64") {
		t.Errorf("redirected progress: %q; want the first and last counts and one status line", out)
	}
	if n := strings.Count(out, "\n"); n > 13 {
		t.Errorf("%d lines for 100 quick updates; want about one per tenth", n)
	}
}

// --help after a subcommand's kind prints the command's help and exits 0
// (canopy plot run --help used to exit 2 with "flag: help requested").
func TestPlotKindHelp(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "plot", "run", "--help")
	if code != 0 || !strings.Contains(stdout, "Usage: canopy plot") || strings.Contains(stderr, "help requested") {
		t.Errorf("plot run --help: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// A net subcommand's failure names the subcommand once ("canopy net
// eval: ...", not "canopy net: net eval: ..."), and its --help says what
// it does and how it is called, not only its flags.
func TestNetSubcommandMessages(t *testing.T) {
	code, _, stderr := runCLI(t, "", "net", "eval", "--net", filepath.Join(t.TempDir(), "nosuch.safetensors"), "--game", "connect4")
	if code == 0 || !strings.HasPrefix(stderr, "canopy net eval: --net") || strings.Contains(stderr, "net: net eval") {
		t.Errorf("net eval of a missing file: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, "", "net", "init", "--bogus")
	if code != 2 || !strings.HasPrefix(stderr, "canopy net init: flag provided but not defined: -bogus") || !strings.Contains(stderr, "canopy net init --help") {
		t.Errorf("net init --bogus: exit %d, stderr %q", code, stderr)
	}
	for _, sub := range []string{"init", "info", "eval", "import", "export"} {
		code, stdout, stderr := runCLI(t, "", "net", sub, "--help")
		out := stdout + stderr
		if code != 0 || !strings.Contains(out, "Usage: canopy net "+sub) || strings.Contains(out, "Usage of") {
			t.Errorf("net %s --help: exit %d, output %q", sub, code, out)
		}
	}
}
