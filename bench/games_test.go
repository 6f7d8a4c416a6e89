package bench

import (
	"context"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/all"
)

// Every registered game (simultaneous, chance and multi-action ones
// included) must be measurable: Games returns within its time budget with
// positive rates.
func TestGamesEveryGame(t *testing.T) {
	for _, r := range games.Registered() {
		g, err := games.New(r.Name)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan GameResult, 1)
		go func() { done <- Games(context.Background(), g, 1, 40*time.Millisecond, nil) }()
		select {
		case res := <-done:
			if res.Playouts == 0 || res.PlayoutsSec <= 0 || res.LegalNs <= 0 || res.CloneNs <= 0 || res.ApplyNs < 0 {
				t.Errorf("%s: implausible result %+v", r.Name, res)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: bench.Games did not return within 30 s", r.Name)
		}
	}
}
