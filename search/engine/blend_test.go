package engine

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/sequence"
)

// With blend weight 0 every leaf value is the blend's rollout alone. A
// one-turn rollout cannot finish an early Sequence game, so with cut=zero
// every root Q is exactly 0, and with cut=heuristic (study 000's cut-off
// rollouts scored, issue 21) the cut position's value reaches the root.
func TestSearcherBlendCut(t *testing.T) {
	search := func(cut string) []float64 {
		t.Helper()
		g, e := newEngine(t, "sequence:jacks=false", 11, Options{Workers: 1, Leaves: 1, Batch: 8, Wait: -1})
		st := DefaultSettings()
		st.Sims, st.Det, st.Blend, st.Turns, st.Cut = 256, 2, 0, 1, cut
		s, err := NewSearcher(e, st.SearchOptions(), 5)
		if err != nil {
			t.Fatalf("cut=%s: %v", cut, err)
		}
		root := g.NewInitialState()
		if _, err := s.Search(context.Background(), root, root.CurrentPlayer()); err == nil {
			t.Fatal("searching the deal (a chance node): no error, want one")
		}
		rng := games.NewRand(3)
		for root.CurrentPlayer() == games.ChancePlayer {
			root.Apply(root.(games.ChanceState).SampleChance(rng))
		}
		stats, err := s.Search(context.Background(), root, root.CurrentPlayer())
		if err != nil {
			t.Fatalf("cut=%s: %v", cut, err)
		}
		qs := make([]float64, 0, len(stats))
		for _, x := range stats {
			if x.Visits > 0 {
				qs = append(qs, x.Q)
			}
		}
		return qs
	}
	for _, q := range search("zero") {
		if q != 0 {
			t.Fatalf("cut=zero: root Q %v, want every Q exactly 0 (the network's value must be weighted out)", q)
		}
	}
	qs := search("heuristic")
	nonzero := 0
	for _, q := range qs {
		if !(q > -1 && q < 1) {
			t.Errorf("cut=heuristic: root Q %v outside (-1, 1)", q)
		}
		if math.Abs(q) > 1e-3 {
			nonzero++
		}
	}
	if nonzero == 0 {
		t.Errorf("cut=heuristic: all %d visited root actions have Q 0: the cut position was not scored", len(qs))
	}
}

// A cut the game cannot score is refused when the searcher is built.
func TestSearcherBlendCutRefused(t *testing.T) {
	_, e := newEngine(t, "connect4", 1, Options{Workers: 1})
	st := DefaultSettings()
	st.Blend, st.Cut = 0.5, "heuristic"
	_, err := NewSearcher(e, st.SearchOptions(), 1)
	if err == nil || !strings.Contains(err.Error(), "no heuristic") {
		t.Fatalf("connect4 with cut=heuristic: err %v, want one naming the missing heuristic", err)
	}
	st.Cut = "score"
	if _, err := NewSearcher(e, st.SearchOptions(), 1); err == nil {
		t.Fatal("connect4 with cut=score: no error, want one (no running scores)")
	}
}
