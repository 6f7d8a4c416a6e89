package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/canopy-go/canopy/arena"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/sushigo"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)

func TestArenaText(t *testing.T) {
	code, out, errs := runCLI(t, "", "arena", "--game", "tictactoe", "--agents", "random;onestep,random",
		"--games", "20", "--seed", "3", "--bootstrap", "30")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	for _, want := range []string{`#1\s+random\n`, `#2\s+onestep\n`, "Pairwise", `#2\s+-?\s*\d+-\d+-\d+ \d+\.\d% \[\d+\.\d, \d+\.\d\]`, "Game length",
		`Elo \[95% bootstrap, B=30\]`, "ILSR", `60 \(20 per table, seed 3\)`,
		"Per agent", `#2\s+40\s+\d+ \d+\.\d% \[\d+\.\d, \d+\.\d\]\s+\d+\s+\d+-\d+-\d+ \d+\.\d% \[[\d.]+, [\d.]+\]\s+1\.\d{3} \[[\d.]+, [\d.]+\]\s+\d+\.\d+ \(\d+ moves\)`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "games 60/60") {
		t.Errorf("no progress line: %q", errs)
	}
}

// Games of 3 or more players get the Plackett-Luce column, in the text,
// the JSON and the CSV; two-player games only in the JSON and CSV.
func TestArenaPlackettLuce(t *testing.T) {
	args := []string{"arena", "--game", "sushigo:players=3", "--agents", "random;onestep;random;random", "--games", "3", "--seed", "5", "--quiet"}
	code, out, errs := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	row := `#4\s+[+-]\d+ \[[+-]\d+, [+-]\d+\]\s+[+-][\d.]+ \[[+-][\d.]+, [+-][\d.]+\]\s+[+-][\d.]+\s+[+-]\d+ \[[+-]\d+, [+-]\d+\]`
	for _, want := range []string{`Plackett-Luce Elo \[95% Laplace\]`, row, "Davidson-Luce ties"} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = runCLI(t, "", append(args, "--json")...)
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	var res arena.TournamentResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.PlackettLuce == nil || len(res.PlackettLuce.Ratings) != 4 || res.PlackettLuce.Ratings[1].Agent != "onestep" {
		t.Fatalf("JSON Plackett-Luce: %+v", res.PlackettLuce)
	}
	code, out, errs = runCLI(t, "", append(args, "--csv")...)
	if code != 0 || strings.Count(out, "\npl,") != 4 {
		t.Errorf("CSV: status %d, %d pl rows, want 4: %s%s", code, strings.Count(out, "\npl,"), out, errs)
	}
	code, out, errs = runCLI(t, "", "arena", "--game", "tictactoe", "--agents", "random;onestep", "--games", "4", "--quiet")
	if code != 0 || strings.Contains(out, "Plackett-Luce") {
		t.Errorf("two players: status %d, Plackett-Luce column in\n%s%s", code, out, errs)
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
	var res, res2 arena.TournamentResult
	if err := json.Unmarshal([]byte(out1), &res); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out2), &res2); err != nil {
		t.Fatal(err)
	}
	for i := range res.PerAgent { // measured times differ between runs
		if !(res.PerAgent[i].MoveTime > 0) || !(res2.PerAgent[i].MoveTime > 0) {
			t.Errorf("agent %d: times per move %v and %v, want > 0", i, res.PerAgent[i].MoveTime, res2.PerAgent[i].MoveTime)
		}
		res.PerAgent[i].MoveTime, res2.PerAgent[i].MoveTime = 0, 0
	}
	if !reflect.DeepEqual(res, res2) {
		t.Error("JSON output depends on --parallel")
	}
	if len(res.PerAgent) != 2 || res.PerAgent[0].Games != 10 || res.PerAgent[1].SoleWins != res.Pairwise[1][0].Wins ||
		math.Abs(res.PerAgent[1].MeanOrdinal.Value-(2-res.Pairwise[1][0].Score.Value)) > 1e-12 {
		t.Errorf("per-agent columns %+v do not match the pairwise table %+v", res.PerAgent, res.Pairwise)
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
	kinds := map[string]int{}
	for _, r := range rows[1:] {
		kinds[r[0]]++
	}
	// header + 2 pair rows + 2 length rows + 4 per-agent rows x 2 agents + 4
	// ratings x 2 agents + one tie prevalence if a game was drawn
	if len(rows) != 1+2+2+8+8+kinds["pl_ties"] || kinds["pl_ties"] > 1 || rows[0][0] != "table" || rows[1][0] != "pair" || rows[1][3] != "6" {
		t.Errorf("CSV rows %v", rows)
	}
	for _, r := range rows[1:] {
		if r[0] == "ordinal" {
			// Two players: the mean ordinal is 2 minus the pair score.
			for _, q := range rows[1:] {
				if q[0] == "pairscore" && q[1] == r[1] {
					o, _ := strconv.ParseFloat(r[7], 64)
					p, _ := strconv.ParseFloat(q[7], 64)
					if math.Abs(o-(2-p)) > 1e-6 {
						t.Errorf("%s: ordinal %v, pair score %v: want ordinal = 2 - score", r[1], o, p)
					}
				}
			}
		}
	}
	for _, k := range []string{"sole", "pairscore", "ordinal", "move_ms", "elo", "bt", "ilsr", "pl"} {
		if kinds[k] != 2 {
			t.Errorf("%d %q rows, want one per agent: %v", kinds[k], k, rows)
		}
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
		{[]string{"--game", "tictactoe", "--agents", "random,random", "--games", "0"}, 2, "--games 0: out of range (want 1..10000000)"},
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

// arena --logs writes one replayable log per game, seated as scheduled,
// that plot logs reads; a second arena into the same directory is refused.
func TestArenaLogs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	code, _, errs := runCLI(t, "", "arena", "--game", "tictactoe", "--agents", "random;onestep", "--games", "6", "--logs", dir, "--quiet")
	if code != 0 {
		t.Fatalf("arena --logs: status %d: %s", code, errs)
	}
	sched, err := arena.Schedule(2, 2, 6)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"random", "onestep"}
	for i, seats := range sched {
		f, err := os.Open(filepath.Join(dir, fmt.Sprintf("game-%06d.json", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		l, st, err := arena.ReadLog(f)
		f.Close()
		if err != nil {
			t.Fatalf("game %d: %v", i+1, err)
		}
		if !st.IsTerminal() {
			t.Errorf("game %d: the log replays to an unfinished game", i+1)
		}
		for s, a := range seats {
			if l.Players[s] != names[a] {
				t.Errorf("game %d seat %d: %q, scheduled %q", i+1, s, l.Players[s], names[a])
			}
		}
	}
	out := t.TempDir()
	logs, _ := filepath.Glob(filepath.Join(dir, "game-*.json"))
	if code, _, errs := runCLI(t, "", append([]string{"plot", "logs", "--out", out}, logs...)...); code != 0 {
		t.Fatalf("plot logs of the arena's logs: status %d: %s", code, errs)
	}
	code, _, errs = runCLI(t, "", "arena", "--game", "tictactoe", "--agents", "random;onestep", "--games", "2", "--logs", dir)
	if code != 2 || !strings.Contains(errs, "already holds 6 game logs") {
		t.Fatalf("second arena into %s: status %d %q", dir, code, errs)
	}
}

// arena --logs DIR --resume continues an interrupted run: the games logged
// in DIR are read back, not played again, and the result is the one of an
// uninterrupted run (times per move aside), also for a simultaneous-move
// game and a table of three agents.
func TestArenaResume(t *testing.T) {
	for _, tc := range []struct {
		game, agents string
		keep         []int // game numbers the "interrupted" run had logged
	}{
		{"connect4", "random;onestep;mcts:sims=30", []int{1, 2, 5, 9, 12}},
		{"sushigo:players=2", "random;onestep", []int{2, 3, 4}},
	} {
		t.Run(tc.game, func(t *testing.T) {
			args := []string{"arena", "--game", tc.game, "--agents", tc.agents, "--games", "4", "--seed", "11", "--parallel", "2", "--json", "--quiet", "--bootstrap", "20"}
			full := filepath.Join(t.TempDir(), "full")
			code, out, errs := runCLI(t, "", append(args, "--logs", full)...)
			if code != 0 {
				t.Fatalf("full run: status %d: %s", code, errs)
			}
			// The interrupted run: some of the full run's logs.
			dir := filepath.Join(t.TempDir(), "resumed")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			kept := map[string][]byte{}
			for _, n := range tc.keep {
				name := fmt.Sprintf("game-%06d.json", n)
				b, err := os.ReadFile(filepath.Join(full, name))
				if err != nil {
					t.Fatal(err)
				}
				kept[name] = b
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// --report: the kept games alone, marked partial.
			code, rep, errs := runCLI(t, "", append(args, "--logs", dir, "--report")...)
			if code != 0 {
				t.Fatalf("--report: status %d: %s", code, errs)
			}
			if r := decodeArena(t, rep); !r.Partial || r.TotalGames != len(tc.keep) {
				t.Errorf("--report on %d logs: partial %v, %d games", len(tc.keep), r.Partial, r.TotalGames)
			}
			code, out2, errs := runCLI(t, "", append(args, "--logs", dir, "--resume")...)
			if code != 0 {
				t.Fatalf("resumed run: status %d: %s", code, errs)
			}
			res, res2 := decodeArena(t, out), decodeArena(t, out2)
			if !reflect.DeepEqual(res, res2) {
				t.Errorf("resumed result differs from the uninterrupted one:\n%+v\n%+v", res2, res)
			}
			all, _ := filepath.Glob(filepath.Join(full, "game-*.json"))
			now, _ := filepath.Glob(filepath.Join(dir, "game-*.json"))
			if len(now) != len(all) {
				t.Errorf("resumed run left %d logs, want %d", len(now), len(all))
			}
			for name, b := range kept { // not played again: a replayed game's times would differ
				if got, _ := os.ReadFile(filepath.Join(dir, name)); !bytes.Equal(got, b) {
					t.Errorf("%s was rewritten by the resumed run", name)
				}
			}
			// --report on the finished logs is the full result.
			if code, rep, errs := runCLI(t, "", append(args, "--logs", dir, "--report")...); code != 0 || !reflect.DeepEqual(decodeArena(t, rep), res) {
				t.Errorf("--report on every log: status %d, %s; differs from the run's result", code, errs)
			}
			// Resuming a finished run plays nothing and gives the same result.
			code, out3, errs := runCLI(t, "", append(args, "--logs", dir, "--resume")...)
			if code != 0 || !reflect.DeepEqual(decodeArena(t, out3), res) {
				t.Errorf("resuming a finished run: status %d, %s; result differs: %v", code, errs, !reflect.DeepEqual(decodeArena(t, out3), res))
			}
		})
	}
}

// decodeArena parses arena --json output with the measured times per move
// zeroed (they differ between runs).
func decodeArena(t *testing.T, out string) arena.TournamentResult {
	t.Helper()
	var res arena.TournamentResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("arena --json output: %v\n%s", err, out)
	}
	for i := range res.PerAgent {
		if !(res.PerAgent[i].MoveTime > 0) {
			t.Errorf("agent %d: time per move %v, want > 0", i, res.PerAgent[i].MoveTime)
		}
		res.PerAgent[i].MoveTime = 0
	}
	return res
}

// --resume refuses logs of another tournament, a corrupt log and a missing
// --logs, each with an error naming the fix; the logs stay as they were.
func TestArenaResumeRefuses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	base := []string{"arena", "--game", "tictactoe", "--agents", "random;onestep", "--quiet", "--logs", dir}
	if code, _, errs := runCLI(t, "", append(base, "--games", "4", "--seed", "3")...); code != 0 {
		t.Fatalf("first run: status %d: %s", code, errs)
	}
	if err := os.Remove(filepath.Join(dir, "game-000004.json")); err != nil {
		t.Fatal(err)
	}
	before, _ := filepath.Glob(filepath.Join(dir, "game-*.json"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--games", "4", "--seed", "3"}, "add --resume to continue"},
		{[]string{"--games", "4", "--seed", "4", "--resume"}, "played with other settings"},
		{[]string{"--games", "2", "--seed", "3", "--resume"}, "this tournament has 2 games"},
		{[]string{"--games", "4", "--seed", "3", "--resume", "--agents", "onestep;random"}, "played with other settings"},
		{[]string{"--games", "4", "--seed", "4", "--report"}, "--report: "},
	} {
		code, _, errs := runCLI(t, "", append(append([]string{}, base...), tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: status %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
	for _, flag := range []string{"--resume", "--report"} {
		if code, _, errs := runCLI(t, "", "arena", "--game", "tictactoe", "--agents", "random;onestep", flag); code != 2 || !strings.Contains(errs, "with --logs") {
			t.Errorf("%s without --logs: status %d, stderr %q", flag, code, errs)
		}
	}
	if code, _, errs := runCLI(t, "", "arena", "--game", "tictactoe", "--agents", "random;onestep", "--report", "--logs", t.TempDir()); code != 1 || !strings.Contains(errs, "no game logs") {
		t.Errorf("--report on an empty directory: status %d, stderr %q", code, errs)
	}
	// A corrupt log: named, with the fix.
	bad := filepath.Join(dir, "game-000002.json")
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, bytes.Replace(b, []byte(`"returns"`), []byte(`"returnz"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "", append(base, "--games", "4", "--seed", "3", "--resume")...)
	if code == 0 || !strings.Contains(errs, "game-000002.json") || !strings.Contains(errs, "delete the file") {
		t.Errorf("corrupt log: status %d, stderr %q", code, errs)
	}
	after, _ := filepath.Glob(filepath.Join(dir, "game-*.json"))
	if !reflect.DeepEqual(before, after) {
		t.Errorf("refused runs changed the logs: %v, then %v", before, after)
	}
}

// A resumed run's ETA comes from the games it has played itself, not from
// those an earlier run left.
func TestProgressETAResumed(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b, "games", 100, false)
	p.before = 90
	p.start = time.Now().Add(-10 * time.Second) // 5 games in 10 s: 5 left take 10 s
	p.update(95, "")
	if !strings.Contains(b.String(), "95/100") || !strings.Contains(b.String(), "ETA 10s") {
		t.Errorf("progress line %q, want 95/100 and ETA 10s", b.String())
	}
}

// TestArenaBackendChoiceOnce: the backend choice (on a machine without CUDA,
// "cuda unavailable: ...; using cpu") is printed once, when the network is
// opened, and not again in the end-of-run usage line.
func TestArenaBackendChoiceOnce(t *testing.T) {
	code, _, errs := runCLI(t, "", "arena", "--game", "connect4", "--agents", "az:net=default,sims=4;onestep",
		"--games", "2", "--seed", "1")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	if n := strings.Count(errs, "using cpu"); n > 1 {
		t.Errorf("backend choice printed %d times:\n%s", n, errs)
	}
	if !strings.Contains(errs, " evals in ") {
		t.Errorf("no usage line:\n%s", errs)
	}
}

// arena writes the CPU and allocation profiles of its games, and refuses
// a profile path it cannot write before it plays.
func TestArenaProfiles(t *testing.T) {
	d := t.TempDir()
	cpu, mem := filepath.Join(d, "cpu.pprof"), filepath.Join(d, "mem.pprof")
	code, _, errs := runCLI(t, "", "arena", "--game", "tictactoe", "--agents", "mcts:sims=200;random", "--games", "4",
		"--quiet", "--seed", "1", "--cpuprofile", cpu, "--memprofile", mem)
	if code != 0 {
		t.Fatalf("arena: %d %s", code, errs)
	}
	checkProfiles(t, cpu, mem)

	file := filepath.Join(d, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(d, "logs")
	code, _, errs = runCLI(t, "", "arena", "--game", "tictactoe", "--agents", "random;random", "--games", "2",
		"--quiet", "--logs", logs, "--cpuprofile", filepath.Join(file, "cpu.pprof"))
	if code == 0 || !strings.Contains(errs, "--cpuprofile") {
		t.Fatalf("an unwritable --cpuprofile: exit %d, stderr %q; want an error naming the flag", code, errs)
	}
	if entries, _ := os.ReadDir(logs); len(entries) > 0 {
		t.Errorf("the arena played (%d logs) before refusing the profile path", len(entries))
	}
}
