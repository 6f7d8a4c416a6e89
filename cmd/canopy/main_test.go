package main

import (
	"bytes"
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
