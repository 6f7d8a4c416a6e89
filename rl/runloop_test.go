package rl

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/rundir"
	"github.com/canopy-go/canopy/nets"
)

// smallRun is a run of a few tic-tac-toe updates on a small PPO net saved
// in dir (Run takes the net from a file or a preset).
func smallRun(t *testing.T, dir string, updates int) RunConfig {
	t.Helper()
	g := games.MustNew("tictactoe")
	cfg, err := nets.Config{Head: nets.HeadPPO, ConvChannels: []int{4}, Dense: 16}.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nets.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	start := filepath.Join(dir, "start.safetensors")
	if err := net.Save(start); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Steps, o.Epochs, o.Minibatches, o.FreshGames = 8, 2, 2, true
	return RunConfig{Game: "tictactoe", Net: start, Opponent: "random", League: "fsp", Envs: 4, Seed: 7, Every: 1,
		Updates: updates, Options: o}
}

// Run trains a run to its target, and a run interrupted by its context
// (a checkpoint saved of the updates done) and resumed with Resume ends
// with the same weights, byte for byte, as the uninterrupted one: the
// league's pool is refilled and Adam's state restored by Run itself.
func TestRunInterruptedAndResumed(t *testing.T) {
	tmp := t.TempDir()
	c := smallRun(t, tmp, 4)
	whole := filepath.Join(tmp, "whole")
	var started []Session
	res, err := Run(context.Background(), whole, c, RunOptions{Started: func(s Session) { started = append(started, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Start != 0 || res.Updates != 4 || res.Info.Updates != 4 || res.Checkpoint != CheckpointPath(whole, 4) || res.Done {
		t.Errorf("result %+v", res)
	}
	if len(started) != 1 || started[0].Resumed || started[0].Net == nil || started[0].Config.Net != c.Net {
		t.Errorf("Started: %+v", started)
	}

	part := filepath.Join(tmp, "part")
	ctx, cancel := context.WithCancel(context.Background())
	res, err = Run(ctx, part, c, RunOptions{Progress: func(m Metrics) {
		if m.Update == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || res.Updates != 2 {
		t.Fatalf("interrupted run: %v, %+v; want context.Canceled after update 2", err, res)
	}
	if _, err := Run(context.Background(), part, c, RunOptions{}); !errors.Is(err, ErrRunExists) {
		t.Errorf("a second fresh start: %v, want ErrRunExists", err)
	}
	started = nil
	res, err = Run(context.Background(), part, c, RunOptions{Resume: true, Started: func(s Session) { started = append(started, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 1 || !started[0].Resumed || started[0].Start != 2 || started[0].AdamStep <= 0 || res.Start != 2 {
		t.Errorf("resumed session %+v, result start %d", started, res.Start)
	}
	for u := 1; u <= 4; u++ {
		a, errA := os.ReadFile(CheckpointPath(whole, u))
		b, errB := os.ReadFile(CheckpointPath(part, u))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("update %d: the resumed run's checkpoint differs from the uninterrupted run's (%v, %v)", u, errA, errB)
		}
	}
	// At its target, a resume trains nothing.
	res, err = Run(context.Background(), part, c, RunOptions{Resume: true})
	if err != nil || !res.Done || res.Start != 4 {
		t.Errorf("resume of a finished run: %+v, %v", res, err)
	}
}

// A resumed run keeps its settings: a given flag that differs is a
// rundir.Changes error naming it, the same value given again or a flag
// not given is no difference, and a given --updates sets the new target.
func TestRunResumeKeepsSettings(t *testing.T) {
	tmp := t.TempDir()
	c := smallRun(t, tmp, 1)
	dir := filepath.Join(tmp, "run")
	if _, err := Run(context.Background(), dir, c, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	given := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, m := range names {
				if m == n {
					return true
				}
			}
			return false
		}
	}
	other := c
	other.Options.LR, other.Envs, other.Seed = 0.5, 2, 8
	other.Shaping = StudyShaping(games.MustNew("tictactoe"))
	_, err := Run(context.Background(), dir, other, RunOptions{Resume: true, Given: given("lr", "envs", "shaping")})
	var cs rundir.Changes
	if !errors.As(err, &cs) || !strings.Contains(err.Error(), "these settings differ from the run's: --envs 2 (run: 4), --lr 0.5 (run: 0.00025), --shaping true (run: false)") {
		t.Fatalf("resume with other --lr, --envs and --shaping: %v, want them named", err)
	}
	// The same values given again are no change; "" is the league fixed.
	if _, err := Run(context.Background(), dir, c, RunOptions{Resume: true, Given: given("lr", "envs", "shaping", "league")}); err != nil {
		t.Fatalf("resume with the run's own flags: %v", err)
	}
	// Not given: the stored value holds (the seed), and the target
	// grows.
	other = c
	other.Seed, other.Updates = 99, 2
	res, err := Run(context.Background(), dir, other, RunOptions{Resume: true, Given: given("updates")})
	if err != nil || res.Start != 1 || res.Updates != 2 || res.Config.Seed != c.Seed {
		t.Fatalf("resume to 2 updates: %+v, %v", res, err)
	}
	stored, _, err := LoadRunConfig(dir)
	if err != nil || stored.Updates != 2 {
		t.Errorf("stored target %d, %v; want 2", stored.Updates, err)
	}
	// Without Given, every setting is compared.
	other = c
	other.Updates, other.Seed = 2, 99
	if _, err := Run(context.Background(), dir, other, RunOptions{Resume: true}); err == nil || !strings.Contains(err.Error(), "--seed 99 (run: 7)") {
		t.Errorf("resume of a whole config with another seed: %v", err)
	}
	if _, err := Run(context.Background(), filepath.Join(tmp, "none"), c, RunOptions{Resume: true}); err == nil {
		t.Error("resume of a missing directory")
	}
	empty := filepath.Join(tmp, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := Run(context.Background(), empty, c, RunOptions{Resume: true}); !errors.Is(err, ErrNoRun) {
		t.Errorf("resume of an empty directory: %v, want ErrNoRun", err)
	}
}

// Bad settings are SettingErrors naming their flag, found before the run
// directory is created.
func TestRunSettingErrors(t *testing.T) {
	tmp := t.TempDir()
	base := smallRun(t, tmp, 1)
	for _, tc := range []struct {
		flag string
		edit func(*RunConfig)
	}{
		{"updates", func(c *RunConfig) { c.Updates = 0 }},
		{"envs", func(c *RunConfig) { c.Envs = MaxEnvs + 1 }},
		{"env-steps", func(c *RunConfig) { c.Options.Steps = 0 }},
		{"lr", func(c *RunConfig) { c.Options.LR = 2 }},
		{"minibatches", func(c *RunConfig) { c.Options.Minibatches = 1000 }},
		{"league", func(c *RunConfig) { c.League = "bogus" }},
		{"league-warmup", func(c *RunConfig) { c.Warmup = -1 }},
		{"net", func(c *RunConfig) { c.Preset = "connect4-ppo" }},
		{"net", func(c *RunConfig) { c.Net = filepath.Join(tmp, "missing.safetensors") }},
		{"legal-plane", func(c *RunConfig) { c.LegalPlane = true }},
		{"opponent", func(c *RunConfig) { c.League, c.Opponent = "fixed", "nosuchagent" }},
	} {
		c := base
		tc.edit(&c)
		dir := filepath.Join(tmp, "run-"+tc.flag)
		_, err := Run(context.Background(), dir, c, RunOptions{})
		var se *SettingError
		if !errors.As(err, &se) || se.Flag != tc.flag || !strings.Contains(err.Error(), "--"+tc.flag) {
			t.Errorf("%s: %v (%+v), want a SettingError naming --%s", tc.flag, err, se, tc.flag)
		}
		if _, ok, _ := LoadRunConfig(dir); ok {
			t.Errorf("%s: the refused run was recorded", tc.flag)
		}
	}
}
