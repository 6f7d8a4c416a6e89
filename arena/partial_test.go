package arena

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)

// Cancelling a tournament keeps the games that finished: Tournament
// returns their ratings, marked partial, together with ctx's error.
func TestTournamentPartialOnCancel(t *testing.T) {
	g, err := games.New("tictactoe")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const games = 200
	res, err := Tournament(ctx, g, TournamentConfig{Agents: []string{"random", "onestep"}, Games: games, Seed: 1, Parallel: 2, Bootstrap: 20,
		Progress: func(done int) {
			if done == 10 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if res == nil || !res.Partial || res.TotalGames < 10 || res.TotalGames >= games || len(res.Games) != res.TotalGames {
		t.Fatalf("partial result %+v, want 10..%d finished games marked partial", res, games-1)
	}
	if p := res.Pairwise[0][1]; p.Games != res.TotalGames || len(res.Elo) != 2 {
		t.Errorf("pairwise %+v and Elo %v do not cover the %d finished games", p, res.Elo, res.TotalGames)
	}
	// Cancelled before any game: no result, just the error.
	cancelled, stop := context.WithCancel(context.Background())
	stop()
	if res, err := Tournament(cancelled, g, TournamentConfig{Agents: []string{"random", "random"}, Games: 50}); res != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled up front: %v, %v; want nil and context.Canceled", res, err)
	}
}

// Stats does the same: the finished games' statistics, marked partial.
func TestStatsPartialOnCancel(t *testing.T) {
	g, err := games.New("tictactoe")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const games = 500
	res, err := Stats(ctx, g, StatsConfig{Agents: []string{"random", "random"}, Games: games, Seed: 1, Parallel: 2,
		Progress: func(done int) {
			if done == 10 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if res == nil || !res.Partial || res.Games < 10 || res.Games >= games || res.Length.N != res.Games {
		t.Fatalf("partial result %+v, want 10..%d finished games marked partial", res, games-1)
	}
	if w := res.Wins[0] + res.Wins[1] + res.Draws; w != res.Games {
		t.Errorf("wins %v + draws %d = %d, want the %d finished games", res.Wins, res.Draws, w, res.Games)
	}
}

// Games in TournamentConfig.Played are counted, not played again; entries
// that do not fit the schedule are refused.
func TestTournamentPlayed(t *testing.T) {
	g, err := games.New("tictactoe")
	if err != nil {
		t.Fatal(err)
	}
	cfg := TournamentConfig{Agents: []string{"random", "onestep"}, Games: 4, Seed: 2, Parallel: 1, Bootstrap: -1}
	var logged []int
	cfg.OnGame = func(i int, rec *Record, chanceSeed uint64) error {
		logged = append(logged, i)
		return nil
	}
	full, err := Tournament(context.Background(), g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Played = map[int]GameResult{0: full.Games[0], 2: full.Games[2]}
	logged = nil
	var progress []int
	cfg.Progress = func(done int) { progress = append(progress, done) }
	res, err := Tournament(context.Background(), g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(logged, []int{1, 3}) || !slices.Equal(progress, []int{3, 4}) {
		t.Errorf("played games %v with progress %v, want [1 3] and [3 4]", logged, progress)
	}
	if !reflect.DeepEqual(res.Pairwise, full.Pairwise) || res.TotalGames != 4 {
		t.Errorf("pairwise %+v over %d games, want %+v", res.Pairwise, res.TotalGames, full.Pairwise)
	}
	for _, played := range []map[int]GameResult{
		{4: full.Games[0]},  // beyond the schedule
		{1: full.Games[0]},  // game 1's seats are swapped
		{-1: full.Games[0]}, // negative
	} {
		cfg.Played = played
		if _, err := Tournament(context.Background(), g, cfg); err == nil || !strings.Contains(err.Error(), "played game") {
			t.Errorf("Played %v: err %v, want a refusal", played, err)
		}
	}
}
