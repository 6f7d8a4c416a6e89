package main

import (
	"encoding/json"
	"strings"
	"testing"

	_ "github.com/canopy-go/canopy/games/tictactoe"
)

func TestMove(t *testing.T) {
	// X (1,2) against O (4,5): X wins at 3.
	code, out, errs := runCLI(t, "", "move", "--game", "tictactoe", "--agent", "mcts:sims=2000", "--moves", "1425")
	if code != 0 || strings.TrimSpace(out) != "3" {
		t.Fatalf("move: status %d, out %q, err %q; want 3", code, out, errs)
	}
	code, out, errs = runCLI(t, "", "move", "--game", "tictactoe", "--agent", "mcts:sims=2000", "--moves", "1425", "--analyze", "--json", "--seed", "5")
	if code != 0 {
		t.Fatalf("analyze: %d %q", code, errs)
	}
	var res struct {
		Move     string
		Analysis []struct {
			Action string
			Visits int
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v in %q", err, out)
	}
	total := 0
	for _, r := range res.Analysis {
		total += r.Visits
	}
	if res.Move != "3" || len(res.Analysis) != 5 || res.Analysis[0].Action != "3" || total != 2000 {
		t.Errorf("analysis %+v", res)
	}
	code, out, _ = runCLI(t, "", "move", "--game", "tictactoe", "--agent", "mcts:sims=500", "--moves", "1425", "--analyze")
	if code != 0 || !strings.Contains(out, "visits") {
		t.Errorf("analyze table: %d %q", code, out)
	}
	for _, bad := range [][]string{
		{"move", "--game", "tictactoe"},                                                   // no agent
		{"move", "--game", "tictactoe", "--agent", "mcts:sel=nope"},                       // bad option value
		{"move", "--game", "tictactoe", "--agent", "mcts:bogus=1"},                        // unknown option
		{"move", "--game", "tictactoe", "--agent", "mcts", "--moves", "11"},               // illegal move
		{"move", "--game", "tictactoe", "--agent", "random", "--moves", "1", "--analyze"}, // cannot analyze
	} {
		if code, _, errs := runCLI(t, "", bad...); code != 2 {
			t.Errorf("%v: status %d, want 2 (%q)", bad, code, errs)
		}
	}
	if code, _, errs := runCLI(t, "", "move", "--game", "tictactoe", "--agent", "mcts", "--moves", "14253"); code != 1 {
		t.Errorf("finished game: status %d, want 1 (%q)", code, errs)
	}
}

// The policy agent values positions, not moves: --analyze gives the
// position's value once and no q per move (it used to repeat the value
// as every move's q).
func TestMoveAnalyzePolicy(t *testing.T) {
	code, out, errs := runCLI(t, "", "move", "--game", "connect4", "--agent", "policy:net=random", "--moves", "44", "--analyze", "--json")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	var res struct {
		Value    *float64 `json:"value"`
		Analysis []struct {
			Q     *float64 `json:"q"`
			Prior float64  `json:"prior"`
		} `json:"analysis"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Value == nil || len(res.Analysis) != 7 {
		t.Fatalf("want the position's value and 7 rows: %s", out)
	}
	for _, r := range res.Analysis {
		if r.Q != nil {
			t.Errorf("a q per move from the policy agent: %s", out)
			break
		}
	}
	code, out, _ = runCLI(t, "", "move", "--game", "connect4", "--agent", "policy:net=random", "--moves", "44", "--analyze")
	if code != 0 || !strings.Contains(out, "value of the position for player 0:") || !strings.Contains(out, "values positions, not moves") {
		t.Errorf("text output does not say what q means:\n%s", out)
	}
}

// az with a per-player value head: --analyze gives every player's value
// of the position (the search's, by seat), in JSON and in the table; a
// scalar head gives none.
func TestMoveAnalyzeSeatValues(t *testing.T) {
	dir := t.TempDir()
	f := dir + "/tl3.safetensors"
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "tetrislink:players=3", "--out", f); code != 0 {
		t.Fatalf("init: %q", errs)
	}
	az := "az:net=" + f + ",sims=40"
	code, out, errs := runCLI(t, "", "move", "--game", "tetrislink:players=3", "--agent", az, "--moves", "players=3;L0@9", "--analyze", "--json", "--backend", "cpu")
	var res struct {
		Player int
		Values []float64
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("analyze: %d %q %q", code, errs, out)
	}
	if res.Player != 1 || len(res.Values) != 3 {
		t.Fatalf("player %d, values %v: want player 1 and three values", res.Player, res.Values)
	}
	for _, v := range res.Values {
		if !(v >= -1 && v <= 1) {
			t.Errorf("values %v: outside [-1, 1]", res.Values)
		}
	}
	code, out, _ = runCLI(t, "", "move", "--game", "tetrislink:players=3", "--agent", az, "--analyze", "--backend", "cpu")
	if code != 0 || !strings.Contains(out, "values of the position by seat") {
		t.Errorf("table: %d %q", code, out)
	}
	// The policy agent: its network's values by seat, the mover's being
	// the position's value it reports.
	code, out, errs = runCLI(t, "", "move", "--game", "tetrislink:players=3", "--agent", "policy:net="+f, "--moves", "players=3;L0@9", "--analyze", "--json", "--backend", "cpu")
	var pol struct {
		Player int
		Value  float64
		Values []float64
	}
	if code != 0 || json.Unmarshal([]byte(out), &pol) != nil || len(pol.Values) != 3 || pol.Values[pol.Player] != pol.Value {
		t.Errorf("policy agent: %d %q %q: want three values, the mover's equal to the value", code, out, errs)
	}
	code, out, _ = runCLI(t, "", "move", "--game", "connect4", "--agent", "az:net=init,sims=20", "--analyze", "--json", "--backend", "cpu")
	if code != 0 || strings.Contains(out, `"values"`) {
		t.Errorf("scalar head: %d %q", code, out)
	}
}

// A game that starts with chance events (dealing) is dealt with --seed
// before the agent is asked, as net eval does: the deal is in the JSON
// (and on stderr as text), the same for the same seed.
func TestMoveDealsChance(t *testing.T) {
	run := func(seed string) (string, []string) {
		code, out, errs := runCLI(t, "", "move", "--game", "sushigo:players=3", "--agent", "random", "--seed", seed, "--json")
		var res struct {
			Position string
			Move     string
			Chance   []string
		}
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Move == "" {
			t.Fatalf("move at a deal: %d %q %q", code, out, errs)
		}
		return res.Position, res.Chance
	}
	pos, deal := run("3")
	if len(deal) == 0 || !strings.Contains(pos, "round=1") {
		t.Errorf("position %q, chance %v: want the dealt first position and the deal", pos, deal)
	}
	if again, _ := run("3"); again != pos {
		t.Error("the same --seed dealt another position")
	}
	if other, _ := run("4"); other == pos {
		t.Error("--seed 4 dealt the same position as --seed 3")
	}
	if code, _, errs := runCLI(t, "", "move", "--game", "sushigo:players=3", "--agent", "random"); code != 0 || !strings.Contains(errs, "sampled") {
		t.Errorf("text: %d %q", code, errs)
	}
}
