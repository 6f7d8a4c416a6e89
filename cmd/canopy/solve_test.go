package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// c4DataFile reads <repo>/../shared/data/connect4/<name>, found by walking
// up from the test's directory, or skips the test.
func c4DataFile(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "shared", "data", "connect4", name)
		if b, err := os.ReadFile(p); err == nil {
			return string(b)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skipf("reference data shared/data/connect4/%s not found above the working directory", name)
		}
		dir = parent
	}
}

// firstLines returns the first n non-empty lines of text.
func firstLines(text string, n int) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && len(out) < n {
			out = append(out, l)
		}
	}
	return out
}

// Piping Pons' benchmark files in must reproduce them line for line.
func TestSolveStdinMatchesReference(t *testing.T) {
	for _, name := range []string{"solver_L3_R1.txt", "solver_L2_R1.txt"} {
		want := firstLines(c4DataFile(t, name), 150)
		in := strings.Join(want, "\n") + "\n\n" // a blank line is skipped
		code, out, errs := runCLI(t, in, "solve", "--game", "connect4")
		if code != 0 {
			t.Fatalf("%s: status %d: %s", name, code, errs)
		}
		got := firstLines(out, 1000)
		if len(got) != len(want) {
			t.Fatalf("%s: %d output lines for %d positions", name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s line %d: got %q, want %q", name, i+1, got[i], want[i])
			}
		}
	}
}

func TestSolveMovesJSON(t *testing.T) {
	ref := strings.Fields(firstLines(c4DataFile(t, "solver_L3_R1.txt"), 1)[0])
	code, out, errs := runCLI(t, "", "solve", "--moves", ref[0], "--json")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	var r struct {
		Moves string `json:"moves"`
		Score int    `json:"score"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	if want, _ := strconv.Atoi(ref[1]); r.Moves != ref[0] || r.Score != want {
		t.Errorf("got %+v, want %s %s", r, ref[0], ref[1])
	}
}

// --analyze: the best column carries the reference score and exactly the
// full columns print "-".
func TestSolveAnalyze(t *testing.T) {
	lines := firstLines(c4DataFile(t, "solver_L3_R1.txt"), 20)
	code, out, errs := runCLI(t, strings.Join(lines, "\n"), "solve", "--analyze")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	got := firstLines(out, 100)
	if len(got) != len(lines) {
		t.Fatalf("%d output lines for %d positions", len(got), len(lines))
	}
	for i, l := range lines {
		ref := strings.Fields(l)
		f := strings.Fields(got[i])
		if len(f) != 8 || f[0] != ref[0] {
			t.Fatalf("line %d: %q, want moves then 7 scores", i+1, got[i])
		}
		best := -1000
		for col := 1; col <= 7; col++ {
			full := strings.Count(ref[0], strconv.Itoa(col)) == 6
			if (f[col] == "-") != full {
				t.Errorf("%s: column %d printed %q, full=%v", ref[0], col, f[col], full)
			}
			if v, err := strconv.Atoi(f[col]); err == nil {
				best = max(best, v)
			}
		}
		if want, _ := strconv.Atoi(ref[1]); best != want {
			t.Errorf("%s: best column score %d, want %d", ref[0], best, want)
		}
	}
	code, out, _ = runCLI(t, "", "solve", "--moves", "223344", "--analyze", "--json")
	var r struct {
		Scores []*int `json:"scores"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || len(r.Scores) != 7 || r.Scores[0] == nil || *r.Scores[0] != 18 {
		t.Errorf("analyze --json 223344: status %d, %q (X wins at once in column 1: 22-4 = 18)", code, out)
	}
}

func TestSolveErrors(t *testing.T) {
	const late = "2252576253462244111563365343671351441" // quick to solve
	for _, tc := range []struct {
		stdin string
		args  []string
		code  int
		want  string
	}{
		{late + "\n44x5 3\n", nil, 1, "line 2"},
		{late + "\n\n4444444\n", nil, 1, "line 3"},
		{"", []string{"--moves", "48"}, 2, "position 2"}, // a bad flag value is a usage error
		{"", []string{"--game", "nosuchgame"}, 2, "unknown game"},
		{"", []string{"extra"}, 2, "unexpected argument"},
	} {
		code, _, errs := runCLI(t, tc.stdin, append([]string{"solve"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("solve %v <<%q: status %d %q, want %d and %q", tc.args, tc.stdin, code, errs, tc.code, tc.want)
		}
	}
}

// --outcome must give the sign of Pons' reference scores, and --book must
// refuse a file that is not a book.
func TestSolveOutcomeMatchesReference(t *testing.T) {
	want := firstLines(c4DataFile(t, "solver_L2_R1.txt"), 100)
	code, out, errs := runCLI(t, strings.Join(want, "\n"), "solve", "--outcome")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	got := firstLines(out, 1000)
	if len(got) != len(want) {
		t.Fatalf("%d output lines for %d positions", len(got), len(want))
	}
	for i := range want {
		ref, res := strings.Fields(want[i]), strings.Fields(got[i])
		w := "draw"
		if strings.HasPrefix(ref[1], "-") {
			w = "loss"
		} else if ref[1] != "0" {
			w = "win"
		}
		if len(res) != 2 || res[0] != ref[0] || res[1] != w {
			t.Errorf("line %d: got %q, want %q %s (score %s)", i+1, got[i], ref[0], w, ref[1])
		}
	}
	bad := filepath.Join(t.TempDir(), "book.bin")
	if err := os.WriteFile(bad, []byte("not a book"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A bad book file is a usage error (exit 2) reported before any
	// position is answered, even those deeper than the book.
	for _, args := range [][]string{
		{"solve", "--moves", "4", "--outcome", "--book", bad},
		{"solve", "--outcome", "--book", bad},
		{"solve", "--outcome", "--book", filepath.Join(t.TempDir(), "missing.bin")},
	} {
		code, out, errs = runCLI(t, strings.Join(want, "\n"), args...)
		file := args[len(args)-1]
		if code != 2 || out != "" || !strings.Contains(errs, file) || !strings.Contains(errs, "genbook") {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want 2, nothing and an error naming the file", args, code, out, errs)
		}
		if file == bad && !strings.Contains(errs, "not a Connect Four opening book") {
			t.Errorf("%v: stderr %q does not say what is wrong", args, errs)
		}
	}
}

// The built-in opening book answers the empty board at once: only the
// centre column wins, the two beside it draw (Allis 1988; Tromp). The
// same with --book none would search for minutes.
func TestSolveOpeningFromTheBuiltInBook(t *testing.T) {
	code, out, errs := runCLI(t, "", "solve", "--moves", "", "--outcome", "--analyze")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	if want := " loss loss draw win draw loss loss\n"; out != want {
		t.Fatalf("got %q, want %q", out, want)
	}
	code, _, errs = runCLI(t, "", "solve", "--moves", "4", "--book", "none")
	if code != 2 || !strings.Contains(errs, "add --outcome") {
		t.Fatalf("--book without --outcome: status %d %q", code, errs)
	}
}
