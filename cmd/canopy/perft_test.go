package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// refColumn returns the first two columns ("ply value") of a reference
// table's data rows, as "ply value" lines, for plies 0..maxPly; col picks
// the value column (1 = second field).
func refColumn(t *testing.T, name string, maxPly, col int) []string {
	var out []string
	for _, l := range strings.Split(c4DataFile(t, name), "\n") {
		f := strings.Fields(l)
		if len(f) <= col || strings.HasPrefix(f[0], "#") || len(out) > maxPly {
			continue
		}
		out = append(out, f[0]+" "+f[col])
	}
	return out
}

func TestPerftConnect4(t *testing.T) {
	want := refColumn(t, "perft_paths.txt", 6, 1)
	code, out, errs := runCLI(t, "", "perft", "--game", "connect4", "--depth", "6")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	if got := strings.Split(strings.TrimSpace(out), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("perft:\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}
}

func TestPerftDistinctJSON(t *testing.T) {
	want := refColumn(t, "positions_per_ply.txt", 7, 1)
	code, out, errs := runCLI(t, "", "perft", "--game", "connect4", "--depth", "7", "--distinct", "--json")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	var r struct {
		Counts []uint64 `json:"counts"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Counts) != 8 {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	for ply, c := range r.Counts {
		if got := strings.Fields(want[ply])[0] + " " + itoa(c); got != want[ply] {
			t.Errorf("distinct ply %d: %d, want %s", ply, c, want[ply])
		}
	}
}

func itoa(v uint64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// From "4453" the first ply offers 7 moves, and so on; a finished game
// counts only itself.
func TestPerftFromMoves(t *testing.T) {
	code, out, errs := runCLI(t, "", "perft", "--game", "connect4", "--depth", "2", "--moves", "1212121")
	if code != 0 || strings.TrimSpace(out) != "0 1\n1 0\n2 0" {
		t.Errorf("finished game: status %d %q %s", code, out, errs)
	}
	// Column 4 full after 444444: 6 moves per ply from there.
	code, out, _ = runCLI(t, "", "perft", "--game", "connect4", "--depth", "2", "--moves", "444444")
	if code != 0 || strings.TrimSpace(out) != "0 1\n1 6\n2 36" {
		t.Errorf("full column: status %d %q", code, out)
	}
}

func TestPerftErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--depth", "3"}, 2, "--game"},
		{[]string{"--game", "connect4"}, 2, "--depth"},
		{[]string{"--game", "connect4", "--depth", "2", "--moves", "9"}, 2, "moves"}, // bad flag value: usage
	} {
		code, _, errs := runCLI(t, "", append([]string{"perft"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("perft %v: status %d %q, want %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}
