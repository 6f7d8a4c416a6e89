package search

import (
	"context"
	"slices"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/connect4"
)

// TestReleasedArenaSearchesAlike checks that a tree made on a released,
// used arena (New after Tree.Release) searches exactly as one made on a
// fresh arena: nothing a search reads may depend on what an earlier tree
// left in the memory.
func TestReleasedArenaSearchesAlike(t *testing.T) {
	g := games.Game(connect4.New())
	// A budget of its own, so that no other test's trees share the shape.
	o := DefaultOptions()
	o.Sims, o.Rule = 1237, RAVE
	dirty, err := g.ParseState("4444")
	if err != nil {
		t.Fatal(err)
	}
	pos, err := g.ParseState("3352")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// Fill an agent's arena with another position's tree and release it;
	// sync.Pool may drop a released arena (always possible, and at random
	// under the race detector), so try until one is taken again.
	var reused *Agent
	for range 50 {
		a, err := NewAgent(g, o, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Stats(ctx, dirty, dirty.CurrentPlayer()); err != nil {
			t.Fatal(err)
		}
		used := a.Tree().a
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := NewAgent(g, o, 7)
		if err != nil {
			t.Fatal(err)
		}
		if b.Tree().a == used {
			reused = b
			break
		}
	}
	if reused == nil {
		t.Fatal("no released arena was taken again in 50 tries")
	}
	fresh, err := NewAgent(g, o, 7)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Tree().a == reused.Tree().a {
		t.Fatal("two live trees share an arena")
	}
	got, err := reused.Stats(ctx, pos, pos.CurrentPlayer())
	if err != nil {
		t.Fatal(err)
	}
	want, err := fresh.Stats(ctx, pos, pos.CurrentPlayer())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("search on a released arena differs from one on a fresh arena:\n got %v\nwant %v", got, want)
	}
}
