package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/train"
)

// selfplayRun writes a small tictactoe self-play run with the CLI.
func selfplayRun(t *testing.T, dir string, seed string) {
	t.Helper()
	code, out, errs := runCLI(t, "", "selfplay", "--game", "tictactoe", "--games", "4", "--trees", "2", "--sims", "8",
		"--out", dir, "--quiet", "--seed", seed)
	if code != 0 {
		t.Fatalf("selfplay: status %d\n%s\n%s", code, out, errs)
	}
}

func TestTrainCLI(t *testing.T) {
	tmp := t.TempDir()
	sp0, sp1, out := filepath.Join(tmp, "sp0"), filepath.Join(tmp, "sp1"), filepath.Join(tmp, "nets")
	selfplayRun(t, sp0, "1")
	selfplayRun(t, sp1, "2")

	// Iteration 1 from a fresh net; the game comes from the manifest.
	code, stdout, errs := runCLI(t, "", "train", "--data", sp0, "--out", out, "--steps", "3", "--batch", "8", "--quiet")
	if code != 0 || !strings.Contains(stdout, "iter-0001.safetensors") || !strings.Contains(stdout, "iter-0001.avg.safetensors") {
		t.Fatalf("status %d\n%s\n%s", code, stdout, errs)
	}
	first := filepath.Join(out, "iter-0001.safetensors")
	_, info, err := train.LoadCheckpoint(first)
	if err != nil || info.Game != "tictactoe" || info.Iteration != 1 || info.Steps != 3 || info.Positions != 24 || info.Preset != "small" {
		t.Fatalf("checkpoint info %+v, %v", info, err)
	}
	// The same iteration again is refused (exit 1) unless --force.
	if code, _, errs := runCLI(t, "", "train", "--data", sp0, "--out", out, "--steps", "1", "--batch", "4", "--quiet"); code != 1 ||
		!strings.Contains(errs, "already exists") || !strings.Contains(errs, "--force") {
		t.Errorf("existing checkpoint: %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "train", "--data", sp0, "--out", out, "--steps", "3", "--batch", "8", "--quiet", "--force"); code != 0 {
		t.Errorf("--force: %d %q", code, errs)
	}
	// Iteration 2 continues from iteration 1 over both runs, with Adam and
	// a cosine schedule, and prints JSON; it trains on sp1 alone (the
	// window), so sp0 is held out.
	code, stdout, errs = runCLI(t, "", "train", "--data", sp0+","+sp1, "--net", first, "--out", out, "--steps", "2", "--batch", "8",
		"--optimizer", "adam", "--lr", "0.001", "--lr-schedule", "cosine", "--window-iters", "1", "--json", "--held-out", sp0)
	if code != 0 {
		t.Fatalf("iteration 2: status %d\n%s\n%s", code, stdout, errs)
	}
	var res struct {
		Game    string `json:"game"`
		Sources []train.Source
		Result  train.Result `json:"result"`
		HeldOut struct {
			Positions     int
			Before, After nets.Loss
			Average       *nets.Loss
		} `json:"held_out"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("JSON: %v\n%s", err, stdout)
	}
	if res.Game != "tictactoe" || res.Result.Info.Iteration != 2 || res.Result.Info.Parent != "iter-0001.safetensors" ||
		res.Result.Info.Steps != 5 || len(res.Sources) == 0 || !strings.HasPrefix(res.Sources[0].Path, sp1) {
		t.Errorf("iteration 2 result %+v", res)
	}
	// The held-out losses are those of the starting and the trained
	// networks (and the average) on sp0's positions.
	heldDS, err := train.LoadDataset([]string{sp0}, nil, train.DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file string
		got        *nets.Loss
	}{{"before", first, &res.HeldOut.Before}, {"after", filepath.Join(out, "iter-0002.safetensors"), &res.HeldOut.After},
		{"average", filepath.Join(out, "iter-0002.avg.safetensors"), res.HeldOut.Average}} {
		n, _, err := train.LoadCheckpoint(c.file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := train.HeldOutLoss(n, heldDS, 0, heldDS.Len(), 2048)
		if err != nil {
			t.Fatal(err)
		}
		if c.got == nil || *c.got != want {
			t.Errorf("held-out loss %s: %+v, want %+v (%s on sp0)", c.name, c.got, want, filepath.Base(c.file))
		}
	}
	if res.HeldOut.Positions != heldDS.Len() {
		t.Errorf("held out %d positions, want sp0's %d", res.HeldOut.Positions, heldDS.Len())
	}
	if !strings.Contains(errs, "train 2/2") {
		t.Errorf("no progress line on stderr: %q", errs)
	}
}

func TestTrainCLIBadInput(t *testing.T) {
	tmp := t.TempDir()
	sp := filepath.Join(tmp, "sp")
	selfplayRun(t, sp, "3")
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	out := filepath.Join(tmp, "out")
	base := []string{"train", "--data", sp, "--out", out, "--quiet"}
	for _, tc := range []struct {
		want int
		args []string
		msg  string
	}{
		{2, []string{"train"}, "--data is required"},
		{2, []string{"train", "--data", sp, "extra"}, "unexpected argument"},
		{2, append(base, "--lr", "NaN"), "--lr"},
		{2, append(base, "--lr", "-1"), "--lr"},
		{2, append(base, "--lr", "1e300"), "--lr"},
		{2, append(base, "--steps", "0"), "--steps"},
		{2, append(base, "--steps", "99999999999"), "--steps"},
		{2, append(base, "--batch", "1"), "--batch"},
		{2, append(base, "--batch", "-5"), "--batch"},
		{2, append(base, "--momentum", "1.5"), "--momentum"},
		{2, append(base, "--l2", "-1"), "--l2"},
		{2, append(base, "--polyak", "1"), "--polyak"},
		{2, append(base, "--polyak", "Inf"), "--polyak"},
		{2, append(base, "--optimizer", "rmsprop"), "--optimizer"},
		{2, append(base, "--lr-schedule", "linear"), "--lr-schedule"},
		{2, append(base, "--warmup", "-1"), "--warmup"},
		{2, append(base, "--window", "-1"), "--window"},
		{2, append(base, "--window-iters", "-2"), "--window-iters"},
		{2, append(base, "--held-out-positions", "0"), "--held-out-positions"},
		{2, append(base, "--held-out", filepath.Join(tmp, "missing")), "--held-out"}, // a missing input is a usage error
		{2, append(base, "--held-out", sp), "also in --data's window"},
		{2, append(base, "--iter", "0"), "--iter"},
		{2, append(base, "--seed", "-1"), "seed"},
		{2, append(base, "--game", "nosuchgame"), "unknown game"},
		{2, append(base, "--preset", "nosuch"), "--preset"},
		{2, append(base, "--preset", "connect4", "--net", file), "exclude each other"},
		{1, append(base, "--net", file), "--net"},
		{2, append(base, "--net", filepath.Join(tmp, "missing.safetensors")), "missing.safetensors"},
		{2, []string{"train", "--data", filepath.Join(tmp, "missing"), "--out", out, "--quiet"}, "does not exist"},
		{1, []string{"train", "--data", sp, "--out", file, "--quiet"}, "--out"},
		{1, []string{"train", "--data", sp, "--out", filepath.Join(file, "sub"), "--quiet"}, "is a file"},
		{2, append(base, "--game", "connect4"), "not connect4"},
		{2, []string{"train", "--data", filepath.Join(sp, "shard-000000.npz"), "--out", out, "--quiet"}, "--game"},
	} {
		r := runGuarded(t, "", tc.args...)
		if p := errorProblem(r); p != "" || r.code != tc.want || !strings.Contains(r.err, tc.msg) {
			t.Errorf("canopy %s: status %d (want %d), problem %q, stderr %q (want it to mention %q)",
				quoteArgs(tc.args), r.code, tc.want, p, r.err, tc.msg)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed run created the output directory")
	}
}

// zero --score prints the overall shares and one row per group of the
// solver-labelled set; the network alone (random weights) and the
// positions' values decide nothing here, only the layout is checked.
func TestZeroScorePrintsGroups(t *testing.T) {
	code, out, errs := runCLI(t, "", "zero", "--score-net", "init", "--solver-positions", "24", "--solver-sims", "4", "--backend", "cpu")
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	for _, want := range []string{"on 24 solver-labelled positions: network alone", "group", "plies 8-13", "won"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
