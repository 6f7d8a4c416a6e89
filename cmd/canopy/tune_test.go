package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTune(t *testing.T) {
	code, out, errs := runCLI(t, "", "tune", "--game", "tetrislink", "--games", "4", "--iters", "2", "--pop", "2", "--final-games", "6", "--seed", "3")
	if code != 0 || !strings.Contains(out, "iter 2/2") || !strings.Contains(out, "tuned weights (final mean)") || !strings.Contains(out, "95% CI") {
		t.Fatalf("tune: status %d\nstdout %s\nstderr %s", code, out, errs)
	}
	code, out2, _ := runCLI(t, "", "tune", "--games", "4", "--iters", "2", "--pop", "2", "--final-games", "6", "--seed", "3", "--json")
	var res tuneResult
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

func TestWilson95(t *testing.T) {
	// 50 of 100: the Wilson interval is about [40.4%, 59.6%].
	lo, hi := wilson95(50, 100)
	if lo < 0.403 || lo > 0.405 || hi < 0.595 || hi > 0.597 {
		t.Errorf("wilson95(50, 100) = [%.4f, %.4f], want about [0.404, 0.596]", lo, hi)
	}
}
