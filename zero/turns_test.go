package zero

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/canopy-go/canopy/games/connect4d"
	"github.com/canopy-go/canopy/selfplay"
)

// tinyTurns is a one-iteration MegaZero run (study 004) on Connect4d
// with 4 boards and the built-in small network: self-play by MCTS-BB
// with 12 evaluations per turn.
func tinyTurns() Config {
	c := DefaultConfig("connect4d:d=4")
	c.Iterations, c.Games, c.Trees = 1, 4, 4
	c.TurnSearch = "mcts-bb:sims=12"
	c.Train.Steps, c.Train.Batch, c.Train.MetricsEvery = 4, 16, 2
	c.EvalGames, c.EvalSims = 2, 4
	c.Baselines = []string{"random"}
	c.SolverPositions = 0
	c.Backend = "cpu"
	return c
}

// A zero run whose self-play searches whole turns completes an
// iteration (about a second): its self-play manifest records the turn search (with the
// study's defaults), one row per atomic action of every game, and
// training moves the network. Its value targets mix in the turn
// search's values (qmix), which MCTS-BB records.
func TestTurnSearchIteration(t *testing.T) {
	dir := t.TempDir()
	cfg := tinyTurns()
	cfg.Train.QMix = 0.5
	if err := Run(context.Background(), dir, cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	if n, err := Finished(dir); n != 1 || err != nil {
		t.Fatalf("%d iterations finished (%v), want 1", n, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, selfplayDir, iterName(1), selfplay.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m selfplay.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	// 168 = 42 cells x 4 boards: every action is drawn from the visits.
	if m.TurnSearch != "mcts-bb:sel=puct,sims=12,tempplies=168" || m.Totals.Games != 4 || m.Totals.Positions < 4*4*4 {
		t.Errorf("self-play manifest: turn search %q, %d games, %d positions", m.TurnSearch, m.Totals.Games, m.Totals.Positions)
	}
	if m.Settings != selfplay.DefaultSettings() {
		t.Errorf("self-play settings %+v, want the defaults under a turn search", m.Settings)
	}
	if bytes.Equal(checkpointBytes(t, dir, 0), checkpointBytes(t, dir, 1)) {
		t.Error("iteration 1's network equals the starting one")
	}
}

// Settings that have no meaning with a turn search, and turn searches
// that cannot run, are refused with one line naming them; so is a fleet.
func TestTurnSearchRefused(t *testing.T) {
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.SelfPlay.Sims = 99 }, "sims: no meaning with turn-search"},
		{func(c *Config) { c.SelfPlay.Dir = 0.3 }, "dir: no meaning"},
		{func(c *Config) { c.Train.QMix = 0.5; c.TurnSearch = "emcts:sims=12" }, "records no value per position"},
		{func(c *Config) { c.TurnSearch = "oep" }, "not a TurnSearcher"},
		{func(c *Config) { c.TurnSearch = "mcts-bb:eval=init" }, "eval= has no meaning"},
		{func(c *Config) { c.Game = "tictactoe" }, "not a multi-action game"},
	} {
		cfg := tinyTurns()
		c.edit(&cfg)
		err := Run(context.Background(), t.TempDir(), cfg, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v; want one line with %q", cfg.TurnSearch, err, c.want)
		}
	}
	dir := t.TempDir()
	err := Run(context.Background(), dir, tinyTurns(), Options{Fleet: &Fleet{URL: "embedded"}})
	if err == nil || !strings.Contains(err.Error(), "fleet") {
		t.Errorf("turn search on a fleet: %v", err)
	}
	if _, ok, _ := LoadConfig(dir); ok {
		t.Error("the refused run wrote its configuration")
	}
}
