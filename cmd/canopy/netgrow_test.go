package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/train"
)

func TestNetGrowCLI(t *testing.T) {
	dir := t.TempDir()
	src, big := filepath.Join(dir, "iter-0007.safetensors"), filepath.Join(dir, "big.safetensors")
	cfg, err := nets.DefaultConfig(mustGame(t, "connect4"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Channels, cfg.Blocks = 16, 1
	net, err := nets.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	hist := train.CheckpointInfo{Game: "connect4", Iteration: 7, Positions: 1000, Steps: 50, Parent: "iter-0006.safetensors"}
	if err := net.SaveWithMetadata(src, hist.Metadata()); err != nil {
		t.Fatal(err)
	}

	code, out, errs := runCLI(t, "", "net", "grow", "--net", src, "--out", big, "--channels", "24", "--blocks", "2")
	if code != 0 || !strings.Contains(out, "grown from 16 x 1") {
		t.Fatalf("grow: status %d, stdout %q, stderr %q", code, out, errs)
	}
	grown, meta, err := nets.LoadWithMetadata(big)
	if err != nil {
		t.Fatal(err)
	}
	if c := grown.Config(); c.Channels != 24 || c.Blocks != 2 || c.Preset != "connect4-24x2" {
		t.Errorf("grown config %d x %d, preset %q; want 24 x 2, connect4-24x2", c.Channels, c.Blocks, c.Preset)
	}
	info, ok, err := train.ParseCheckpointInfo(meta)
	if err != nil || !ok {
		t.Fatalf("grown file's training metadata: ok %v, err %v", ok, err)
	}
	if info.Iteration != 7 || info.Positions != 1000 || info.Steps != 50 || info.Parent != "iter-0007.safetensors" || info.Preset != "connect4-24x2" {
		t.Errorf("grown file's history %+v: want iteration 7, 1000 positions, 50 steps, parent iter-0007.safetensors", info)
	}

	shipped := filepath.Join(dir, "shipped.safetensors")
	if code, out, errs := runCLI(t, "", "net", "grow", "--net", "tetrislink4-zero", "--out", shipped, "--blocks", "3"); code != 0 || !strings.Contains(out, "grown from 32 x 2") {
		t.Errorf("grow of the shipped tetrislink4-zero: status %d, stdout %q, stderr %q", code, out, errs)
	}

	ppo := filepath.Join(dir, "ppo.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--preset", "connect4-ppo", "--out", ppo); code != 0 {
		t.Fatalf("net init ppo: %d %s", code, errs)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--net", src, "--out", filepath.Join(dir, "a")}, 2, "--channels, --blocks"},
		{[]string{"--net", src, "--channels", "32"}, 2, "--out"},
		{[]string{"--net", big, "--out", filepath.Join(dir, "b"), "--channels", "16"}, 2, "smaller"},
		{[]string{"--net", ppo, "--out", filepath.Join(dir, "c"), "--blocks", "3"}, 2, "AlphaZero"},
		{[]string{"--net", filepath.Join(dir, "missing.safetensors"), "--out", filepath.Join(dir, "d"), "--blocks", "3"}, 2, "missing.safetensors"},
	} {
		code, _, errs := runCLI(t, "", append([]string{"net", "grow"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("net grow %v: status %d, stderr %q; want status %d naming %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

func mustGame(t *testing.T, spec string) games.Game {
	t.Helper()
	g, err := games.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
