package bench

import (
	"context"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/nets"
)

func TestSearchBench(t *testing.T) {
	g := games.MustNew("connect4")
	be := nets.NewRandomBackend(84, 7, 1, nets.BackendOptions{})
	r, err := Search(context.Background(), SearchConfig{Game: g, Backend: be, Trees: 16, Batch: 16, Sims: 16,
		Duration: 300 * time.Millisecond, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Nodes <= 0 || r.Evals <= 0 || r.Evals > r.Nodes+r.Nodes/int64(r.Sims)+2*int64(r.Trees) || r.MeanBatch < 1 || r.MeanBatch > 16 {
		t.Errorf("implausible result %+v", r)
	}
	if r.Seconds < 0.25 || r.Seconds > 5 {
		t.Errorf("ran %v s for a 0.3 s budget", r.Seconds)
	}
	if _, err := Search(context.Background(), SearchConfig{Game: g, Backend: be, Trees: 0, Sims: 1, Duration: time.Second}, nil); err == nil {
		t.Error("trees=0 accepted")
	}
}
