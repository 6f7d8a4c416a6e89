package main

import (
	"encoding/csv"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/arena"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)

func TestArenaText(t *testing.T) {
	code, out, errs := runCLI(t, "", "arena", "--game", "tictactoe", "--agents", "random;onestep,random",
		"--games", "20", "--seed", "3", "--bootstrap", "30")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	for _, want := range []string{`#1\s+random\n`, `#2\s+onestep\n`, "Pairwise", `#2\s+-?\s*\d+-\d+-\d+ \d+\.\d% \[\d+\.\d, \d+\.\d\]`, "Game length",
		`Elo \[95% bootstrap, B=30\]`, "ILSR", `60 \(20 per table, seed 3\)`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "games 60/60") {
		t.Errorf("no progress line: %q", errs)
	}
}

func TestArenaJSONReproducible(t *testing.T) {
	args := []string{"arena", "--game", "connect4", "--agents", "random,onestep", "--games", "10", "--seed", "7", "--json", "--quiet"}
	code, out1, errs := runCLI(t, "", append(args, "--parallel", "1")...)
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	if errs != "" {
		t.Errorf("--quiet still wrote %q", errs)
	}
	_, out2, _ := runCLI(t, "", append(args, "--parallel", "3")...)
	if out1 != out2 {
		t.Error("JSON output depends on --parallel")
	}
	var res arena.TournamentResult
	if err := json.Unmarshal([]byte(out1), &res); err != nil {
		t.Fatal(err)
	}
	if res.TotalGames != 10 || len(res.Elo) != 2 || len(res.BradleyTerry) != 2 || len(res.ILSR) != 2 || res.Pairwise[0][1].Games != 10 {
		t.Errorf("unexpected result %+v", res)
	}
	if p, q := res.Pairwise[0][1], res.Pairwise[1][0]; p.Wins != q.Losses || p.Draws != q.Draws {
		t.Errorf("pairwise table not antisymmetric: %+v vs %+v", p, q)
	}
}

func TestArenaCSV(t *testing.T) {
	code, out, errs := runCLI(t, "", "arena", "--game", "tictactoe", "--agents", "random,onestep", "--games", "6", "--csv", "--quiet", "--bootstrap", "0")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// header + 2 pair rows + 2 length rows + 3 ratings x 2 agents
	if len(rows) != 1+2+2+6 || rows[0][0] != "table" || rows[1][0] != "pair" || rows[1][3] != "6" {
		t.Errorf("CSV rows %v", rows)
	}
}

func TestArenaErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--agents", "random,random"}, 2, "--game is required"},
		{[]string{"--game", "tictactoe", "--agents", "random"}, 2, "at least 2 agents"},
		{[]string{"--game", "tictactoe", "--agents", "random,random", "--games", "0"}, 2, "--games must be positive"},
		{[]string{"--game", "tictactoe", "--agents", "random,random", "--json", "--csv"}, 2, "exclude"},
		{[]string{"--game", "tictactoe", "--agents", "random,random", "--bootstrap", "-1"}, 2, "--bootstrap"},
		{[]string{"--game", "nosuchgame", "--agents", "random,random"}, 2, "nosuchgame"},
		{[]string{"--game", "tictactoe", "--agents", "random,nosuchagent"}, 2, "nosuchagent"}, // bad flag value: usage
		{[]string{"--game", "tictactoe", "--agents", "random,random", "extra"}, 2, "unexpected argument"},
	} {
		code, _, errs := runCLI(t, "", append([]string{"arena", "--quiet"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("%v: status %d, stderr %q; want status %d mentioning %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}
