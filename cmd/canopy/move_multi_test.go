package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4d"
)

// `canopy move --analyze` on a multi-action agent shows the whole turn
// it chose, one row per atomic action in playing order, and plays its
// first action. The position is search/multi's test position: x wins at
// once with 2a then 3a, whatever it plays on boards 0 and 1.
func TestMoveAnalyzeTurn(t *testing.T) {
	const moves = "0a 1d 2a 3a 4g 0g 1a 2a 3a 4g 0f 1a 2f 3a 4f 0g 1g 2g 3g 4e"
	g := games.MustNew("connect4d")
	for _, agentSpec := range []string{"mcts-v:sims=2000", "mcts-bb:sims=2000", "emcts:sims=2000", "emcts:sims=2000,bb=true", "oep:sims=2000"} {
		code, out, errs := runCLI(t, "", "move", "--game", "connect4d", "--agent", agentSpec, "--moves", moves, "--analyze", "--json")
		if code != 0 {
			t.Fatalf("%s: status %d: %s", agentSpec, code, errs)
		}
		var res struct {
			Move     string
			Analysis []struct{ Action string }
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%s: %v in %q", agentSpec, err, out)
		}
		s, _, err := parsePosition(g, moves)
		if err != nil {
			t.Fatal(err)
		}
		var turn []string
		for _, r := range res.Analysis {
			a, err := s.ParseAction(r.Action)
			if err == nil {
				err = games.ApplyChecked(s, a)
			}
			if err != nil {
				t.Fatalf("%s: analysis %v: %v", agentSpec, res.Analysis, err)
			}
			turn = append(turn, r.Action)
		}
		r := make([]float64, 2)
		s.Returns(r)
		if len(turn) == 0 || res.Move != turn[0] || !s.IsTerminal() || r[0] != 1 {
			t.Errorf("%s: move %s, turn %v: want the turn that wins (2a then 3a), first action played", agentSpec, res.Move, turn)
		}
		code, out, _ = runCLI(t, "", "move", "--game", "connect4d", "--agent", agentSpec, "--moves", moves, "--analyze")
		if code != 0 || strings.Count(out, "\n") != len(turn)+2 { // header, rows, move
			t.Errorf("%s: table: status %d, %q", agentSpec, code, out)
		}
	}
}
