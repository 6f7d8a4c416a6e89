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
