package cudabackend

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/tictactoe"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
)

// TestSelfPlayOnGPU plays a few tictactoe games of AlphaZero self-play
// through the cuda backend (many searches batched by the engine, pinned
// buffers, the stream, a graph captured per batch size), on the emulated
// device in CI or on a real GPU.
func TestSelfPlayOnGPU(t *testing.T) {
	if err := Probe(); err != nil {
		fake.NoGPU(t, err)
	}
	g := games.MustNew("tictactoe")
	cfg, err := nets.Preset("connect4")
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = cfg.ForGame(g); err != nil {
		t.Fatal(err)
	}
	cfg.Blocks = 2
	net, err := nets.New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	be, err := Open(net, Options{MaxBatch: 64, Graphs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	e, err := engine.New(g, be, engine.Options{Workers: 2, Leaves: 2, Batch: 32, Slots: engine.SlotsFor(4, 2)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st := selfplay.DefaultSettings()
	st.Sims, st.Leaves = 16, 2
	games, positions := 0, 0
	err = selfplay.Run(context.Background(), e, selfplay.Config{Settings: st, Seed: 5, NumGames: 4, Trees: 4,
		OnGame: func(r *selfplay.GameRecord) error {
			games++
			positions += r.Positions()
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if games != 4 || positions < 4*5 {
		t.Errorf("%d games, %d positions; want 4 complete tictactoe games", games, positions)
	}
	t.Logf("%d games, %d positions on %s (%s)", games, positions, be.Device().Info().Name, be.Options().Precision)
	checkNoViolations(t)
}
