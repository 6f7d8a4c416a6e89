package zero

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/canopy-go/canopy/arena"
	_ "github.com/canopy-go/canopy/games/sushigo"
	_ "github.com/canopy-go/canopy/games/tetrislink"
)

// TestMultiPlayerEvaluation runs an iteration of a three-player game:
// evaluation plays the new network against two copies of each opponent
// (it used to fail: "a 3-player game needs at least 3 agents, got 2"),
// every match has three seats with the new network once, each score
// counts its games, and the rolling Elo rates the network.
func TestMultiPlayerEvaluation(t *testing.T) {
	dir := t.TempDir()
	c := tinyMulti("tetrislink:players=3", 3, "random")
	if err := Run(context.Background(), dir, c, Options{}); err != nil {
		t.Fatal(err)
	}
	var rec Record
	if ok, err := readJSON(filepath.Join(dir, itersDir, "iter-0001.json"), &rec); !ok || err != nil {
		t.Fatalf("record of iteration 1: %v", err)
	}
	if len(rec.Eval.Scores) != 2 {
		t.Fatalf("scores %+v: want one against iter-0000 and one against random", rec.Eval.Scores)
	}
	for _, sc := range rec.Eval.Scores {
		if sc.Games != c.EvalGames || sc.Score < 0 || sc.Score > 1 || sc.Lo > sc.Score || sc.Hi < sc.Score {
			t.Errorf("score %+v: want %d games and a score inside its interval", sc, c.EvalGames)
		}
	}
	if len(rec.Eval.Matches) != 2*c.EvalGames {
		t.Fatalf("%d matches, want %d", len(rec.Eval.Matches), 2*c.EvalGames)
	}
	for _, m := range rec.Eval.Matches {
		n := 0
		for _, s := range m.Seats {
			if s == "iter-0001" {
				n++
			}
		}
		if len(m.Seats) != 3 || len(m.Returns) != 3 || n != 1 {
			t.Errorf("match %+v: want three seats, iter-0001 in one of them", m)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, MetricsName))
	if err != nil {
		t.Fatal(err)
	}
	var last Record
	if err := json.Unmarshal(bytes.TrimSpace(data), &last); err != nil || last.Elo == nil {
		t.Errorf("metrics %s: want iteration 1 with a rolling Elo (%v)", data, err)
	}
}

// ratedGames splits a game of one agent against copies of another into
// two-player comparisons, and leaves other games whole.
func TestRatedGames(t *testing.T) {
	m := Match{Seats: []string{"b", "a", "b"}, Returns: []float64{1, 0, -1}}
	got := ratedGames(m)
	want := []ratedGame{
		{names: []string{"a", "b"}, res: arena.GameResult{Returns: []float64{0, 1}}},
		{names: []string{"a", "b"}, res: arena.GameResult{Returns: []float64{0, -1}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ratedGames(%+v) = %+v, want %+v", m, got, want)
	}
	whole := Match{Seats: []string{"a", "b", "c"}, Returns: []float64{0, 1, 0}}
	if got := ratedGames(whole); len(got) != 1 || !reflect.DeepEqual(got[0].names, whole.Seats) {
		t.Errorf("ratedGames of distinct agents = %+v, want the game whole", got)
	}
	if got := ratedGames(Match{Seats: []string{"a", "a", "b", "b"}, Returns: []float64{1, 0, 0, 0}}); got != nil {
		t.Errorf("two pairs of copies: %+v, want none (not a shape evaluation plays)", got)
	}
}

// The loop runs on a simultaneous-move game (Sushi Go's sushigo view,
// three players): self-play records one position per seat of every
// joint move (3 rounds x 9 tricks x 3 seats per game), the per-player
// head trains on them, and evaluation plays the joint moves.
func TestSimultaneousLoop(t *testing.T) {
	dir := t.TempDir()
	c := tinyMulti("sushigo:players=3", 2, "sushigo-heuristic")
	if err := Run(context.Background(), dir, c, Options{}); err != nil {
		t.Fatal(err)
	}
	var rec Record
	if ok, err := readJSON(filepath.Join(dir, itersDir, "iter-0001.json"), &rec); !ok || err != nil {
		t.Fatalf("record of iteration 1: %v", err)
	}
	if rec.SelfPlay.Games != 2 || rec.SelfPlay.Positions != 2*3*9*3 {
		t.Errorf("self-play %+v: want 2 games of %d positions", rec.SelfPlay, 3*9*3)
	}
	if len(rec.Eval.Scores) != 2 {
		t.Fatalf("scores %+v: want one against iter-0000 and one against sushigo-heuristic", rec.Eval.Scores)
	}
}

// tinyMulti is a one-iteration run of a game of three or more players:
// games self-play games on as many trees, 4 simulations, 3 training
// steps, and 3 evaluation games against baseline ("" for none).
func tinyMulti(game string, games int, baseline string) Config {
	c := DefaultConfig(game)
	c.Iterations, c.Games, c.Trees = 1, games, games
	c.SelfPlay.Sims = 4
	c.Train.Steps, c.Train.Batch, c.Train.MetricsEvery = 3, 16, 3
	c.EvalGames, c.EvalSims = 3, 4
	c.Baselines = []string{baseline}
	if baseline == "" {
		c.EvalGames, c.Baselines = 0, nil
	}
	c.Backend = "cpu"
	return c
}
