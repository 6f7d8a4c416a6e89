package arena

import (
	"context"
	"errors"
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
