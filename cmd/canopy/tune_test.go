package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games/tetrislink"
)

func TestTune(t *testing.T) {
	code, out, errs := runCLI(t, "", "tune", "--game", "tetrislink", "--games", "4", "--iters", "2", "--pop", "2", "--final-games", "6", "--seed", "3")
	if code != 0 || !strings.Contains(out, "iter 2/2") || !strings.Contains(out, "tuned weights (final mean)") || !strings.Contains(out, "95% CI") {
		t.Fatalf("tune: status %d\nstdout %s\nstderr %s", code, out, errs)
	}
	code, out2, _ := runCLI(t, "", "tune", "--games", "4", "--iters", "2", "--pop", "2", "--final-games", "6", "--seed", "3", "--json")
	var res tetrislink.TuneResult
	if code != 0 || json.Unmarshal([]byte(out2), &res) != nil {
		t.Fatalf("tune --json: status %d, output %q", code, out2)
	}
	if len(res.History) != 2 || res.EvalGames != 6 || res.Lo > res.Rate || res.Rate > res.Hi || !strings.Contains(out, res.Mean) {
		t.Errorf("tune --json: %+v (same seed must give the same weights as the text run)", res)
	}
	for _, args := range [][]string{
		{"tune", "--game", "nosuchgame"},
		{"tune", "--games", "0"},
		{"tune", "--pop", "1"},
		{"tune", "extra"},
	} {
		if code, _, _ := runCLI(t, "", args...); code != 2 {
			t.Errorf("%v: status %d, want 2", args, code)
		}
	}
}
