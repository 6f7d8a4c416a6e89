package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/train"
)

// TestBadNetIsUsageError: a --net that names no file (nor a shipped
// network), or a network made for another game, is a usage error (exit
// 2) in every command that takes one, and the message names the file or
// the two games (issue 39: a missing weights file exited 1 in selfplay, a
// wrong-game net 1 in net eval and 2 in arena).
func TestBadNetIsUsageError(t *testing.T) {
	tmp := t.TempDir()
	g, _ := games.New("connect4")
	net, err := nets.New(mustBuiltin(t, g), 1)
	if err != nil {
		t.Fatal(err)
	}
	c4 := filepath.Join(tmp, "c4.safetensors")
	if err := net.Save(c4); err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(tmp, "sp")
	if code, _, errs := runCLI(t, "", "selfplay", "--game", "tictactoe", "--games", "2", "--sims", "4", "--out", sp, "--quiet"); code != 0 {
		t.Fatalf("selfplay: %d %s", code, errs)
	}
	missing := filepath.Join(tmp, "missing.safetensors")
	for _, c := range []struct {
		ref, want string
	}{{missing, "missing.safetensors"}, {c4, "made for connect4, not tictactoe"}} {
		for _, args := range [][]string{
			{"selfplay", "--game", "tictactoe", "--net", c.ref, "--games", "1", "--out", filepath.Join(tmp, "sp2"), "--quiet"},
			{"zero", "--game", "tictactoe", "--net", c.ref, "--out", filepath.Join(tmp, "z"), "--iterations", "1", "--quiet"},
			{"train", "--game", "tictactoe", "--net", c.ref, "--data", sp, "--out", filepath.Join(tmp, "tr"), "--quiet"},
			{"ppo", "--game", "tictactoe", "--net", c.ref, "--out", filepath.Join(tmp, "ppo"), "--updates", "1", "--quiet"},
			{"net", "eval", "--net", c.ref, "--game", "tictactoe"},
			{"bench", "search", "--game", "tictactoe", "--net", c.ref, "--seconds", "0.1", "--quiet", "--out", filepath.Join(tmp, "bs")},
			{"bench", "net", "--game", "tictactoe", "--net", c.ref, "--seconds", "0.1", "--batches", "1"},
			{"net", "export", c.ref, "--game", "tictactoe", "--onnx", filepath.Join(tmp, "x.onnx")},
			{"arena", "--game", "tictactoe", "--agents", "az:net=" + c.ref + ";random", "--games", "2"},
			{"move", "--game", "tictactoe", "--agent", "az:net=" + c.ref},
		} {
			code, _, errs := runCLI(t, "", args...)
			if want := c.want; code != 2 || !strings.Contains(errs, want) {
				t.Errorf("%s: status %d, %q; want 2 and %q", strings.Join(args, " "), code, errs, want)
			}
		}
	}
	// train without --game takes the game from --net: data of another
	// game is then the mistake.
	if code, _, errs := runCLI(t, "", "train", "--net", c4, "--data", sp, "--out", filepath.Join(tmp, "tr2"), "--quiet"); code != 2 || !strings.Contains(errs, "not connect4") {
		t.Errorf("train --net (connect4) on tictactoe data: status %d, %q", code, errs)
	}
	// net info has no game: only the missing file.
	if code, _, errs := runCLI(t, "", "net", "info", missing); code != 2 || !strings.Contains(errs, "missing.safetensors") {
		t.Errorf("net info of a missing file: status %d, %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "zero", "--score-net", missing, "--solver-positions", "1", "--solver-sims", "1", "--backend", "cpu"); code != 2 || !strings.Contains(errs, "missing.safetensors") {
		t.Errorf("zero --score-net of a missing file: status %d, %q", code, errs)
	}
}

// TestSelfplayNetCacheSameGames: --net-cache changes how often the
// network runs, never the games: the same positions, visit targets and
// values as without it (the CPU backend's rows do not depend on their
// batch).
func TestSelfplayNetCacheSameGames(t *testing.T) {
	tmp := t.TempDir()
	rows := func(cache string) []string {
		dir := filepath.Join(tmp, "c"+cache)
		if code, _, errs := runCLI(t, "", "selfplay", "--game", "tictactoe", "--net", "init", "--backend", "cpu", "--games", "6", "--trees", "3",
			"--sims", "16", "--net-cache", cache, "--out", dir, "--quiet"); code != 0 {
			t.Fatalf("--net-cache %s: %d %s", cache, code, errs)
		}
		g, _ := games.New("tictactoe")
		ds, err := train.LoadDataset([]string{dir}, g, train.DatasetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		obs := make([]float32, ds.ObsSize())
		var out []string
		for i := range ds.Len() {
			p, v, _ := ds.Row(i, obs)
			out = append(out, fmt.Sprint(obs, p, v, ds.RootQ(i)))
		}
		slices.Sort(out) // games finish in any order
		return out
	}
	a, b := rows("0"), rows("4096")
	if len(a) == 0 || !slices.Equal(a, b) {
		t.Errorf("--net-cache 4096 recorded other positions (%d rows) than without (%d rows)", len(b), len(a))
	}
	for _, args := range [][]string{
		{"selfplay", "--net-cache", "-1", "--out", filepath.Join(tmp, "x")},
		{"bench", "search", "--net", "init", "--net-cache", "-1", "--quiet", "--out", filepath.Join(tmp, "bs")},
	} {
		if code, _, errs := runCLI(t, "", args...); code != 2 || !strings.Contains(errs, "--net-cache") {
			t.Errorf("%s --net-cache -1: %d %q", args[0], code, errs)
		}
	}
}

// TestONNXWhereCanopyNetIsNeeded: an ONNX model given to a command that
// needs a Canopy network file (to train, grow, export or self-play it) is
// a usage error that says how to convert it, not a safetensors parse
// error ("header length ... exceeds"); net eval and the agents take it.
func TestONNXWhereCanopyNetIsNeeded(t *testing.T) {
	tmp := t.TempDir()
	c4 := filepath.Join(tmp, "c4.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "tictactoe", "--out", c4); code != 0 {
		t.Fatal(errs)
	}
	model := filepath.Join(tmp, "c4.onnx")
	if code, _, errs := runCLI(t, "", "net", "export", c4, "--onnx", model); code != 0 {
		t.Fatal(errs)
	}
	sp := filepath.Join(tmp, "sp")
	if code, _, errs := runCLI(t, "", "selfplay", "--game", "tictactoe", "--games", "2", "--sims", "4", "--out", sp, "--quiet"); code != 0 {
		t.Fatalf("selfplay: %d %s", code, errs)
	}
	for _, args := range [][]string{
		{"selfplay", "--game", "tictactoe", "--net", model, "--games", "1", "--out", filepath.Join(tmp, "sp2"), "--quiet"},
		{"zero", "--game", "tictactoe", "--net", model, "--out", filepath.Join(tmp, "z"), "--iterations", "1", "--quiet"},
		{"train", "--net", model, "--data", sp, "--out", filepath.Join(tmp, "tr"), "--quiet"},
		{"ppo", "--game", "tictactoe", "--net", model, "--out", filepath.Join(tmp, "ppo"), "--updates", "1", "--quiet"},
		{"bench", "search", "--net", model, "--seconds", "0.1", "--quiet", "--out", filepath.Join(tmp, "bs")},
		{"net", "grow", "--net", model, "--out", filepath.Join(tmp, "g.safetensors"), "--channels", "64"},
	} {
		if code, _, errs := runCLI(t, "", args...); code != 2 || !strings.Contains(errs, "canopy net import") || strings.Contains(errs, "header") {
			t.Errorf("%s: status %d, %q; want 2 and how to convert the model", strings.Join(args, " "), code, errs)
		}
	}
	// A missing model is a usage error whether the game comes from --game
	// or from the model's metadata.
	missing := filepath.Join(tmp, "missing.onnx")
	for _, args := range [][]string{{"net", "eval", "--net", missing}, {"net", "eval", "--net", missing, "--game", "tictactoe"}} {
		if code, _, errs := runCLI(t, "", args...); code != 2 || !strings.Contains(errs, "missing.onnx") {
			t.Errorf("%s: status %d, %q; want 2 naming the file", strings.Join(args, " "), code, errs)
		}
	}
	if code, _, errs := runCLI(t, "", "net", "export", model, "--onnx", filepath.Join(tmp, "y.onnx")); code != 2 || !strings.Contains(errs, "already") {
		t.Errorf("net export of an ONNX model: status %d, %q", code, errs)
	}
	for _, args := range [][]string{
		{"net", "eval", "--net", model},
		{"move", "--game", "tictactoe", "--agent", "az:net=" + model + ",sims=8", "--backend", "cpu"},
	} {
		if code, _, errs := runCLI(t, "", args...); code != 0 {
			t.Errorf("%s: status %d, %q; want it to take the model", strings.Join(args, " "), code, errs)
		}
	}
}

// A network of a simultaneous game named for its sequential view (the
// shipped Sushi Go nets for sushigo-seq, which Python's VecEnv needs) is
// refused with what to do instead, not only "is for X, not Y".
func TestSequentialViewNetHint(t *testing.T) {
	code, _, errs := runCLI(t, "", "net", "eval", "--net", "sushigo4-zero", "--game", "sushigo-seq:players=4")
	if code != 2 || !strings.Contains(errs, "sequential view of sushigo:players=4") || !strings.Contains(errs, "canopy zero --game sushigo-seq:players=4") {
		t.Errorf("status %d, %q", code, errs)
	}
	// Other mismatches keep the plain message.
	if code, _, errs := runCLI(t, "", "net", "eval", "--net", "sushigo4-zero", "--game", "sushigo:players=3"); code != 2 || strings.Contains(errs, "sequential view") {
		t.Errorf("players=3: status %d, %q", code, errs)
	}
}
