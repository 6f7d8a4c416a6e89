package search

import (
	"context"
	"runtime"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/games/sushigo"
)

// TreeBytes is what a real tree allocates (runtime.MemStats around New,
// two searches and a subtree reuse), within 10% plus 256 KiB for walkers,
// states and scratch: the memory guards of self-play and the CLI build
// on it (issue 39 item 2). The Sushi Go rows (simultaneous moves: a
// joint-action link per node) search a dealt position twice, the second
// time reusing the whole tree.
func TestTreeBytesMatchesAllocations(t *testing.T) {
	// New takes a released tree's arena of the same shape when one is
	// pooled (Tree.Release) and then allocates almost nothing: start
	// without any, whatever tests ran before.
	spareArenas.Clear()
	c4, sushi := games.Game(connect4.New()), games.Game(sushigo.New(2, false))
	for _, c := range []struct {
		name  string
		set   func(o *Options)
		sushi bool
	}{
		{"uct", func(o *Options) {}, false},
		{"rave", func(o *Options) { o.Rule = RAVE }, false},
		{"ucb1tuned", func(o *Options) { o.Rule = UCB1Tuned }, false},
		{"tt", func(o *Options) { o.TT = true }, false},
		{"reuse", func(o *Options) { o.Reuse = true }, false},
		{"reuse+rave+nodes", func(o *Options) { o.Reuse, o.Rule, o.MaxNodes = true, RAVE, 90_000 }, false},
		{"sushigo", func(o *Options) {}, true},
		{"sushigo+reuse", func(o *Options) { o.Reuse = true }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := c4
			if c.sushi {
				g = sushi
			}
			o := DefaultOptions()
			o.Sims = 30_000
			c.set(&o)
			want, err := o.TreeBytes(g, 1)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			tree, err := New(g, o, 1)
			if err != nil {
				t.Fatal(err)
			}
			s := g.NewInitialState()
			if c.sushi {
				s = sushiPosition(g, 2, 5)
			}
			tree.Search(context.Background(), s)
			if !c.sushi {
				s.Apply(3)
				s.Apply(3)
			}
			tree.Search(context.Background(), s) // reuses the subtree with Reuse
			runtime.ReadMemStats(&after)
			got := int64(after.TotalAlloc - before.TotalAlloc)
			if lo, hi := want*9/10, want*11/10+256<<10; got < lo || got > hi {
				t.Errorf("allocated %d bytes, TreeBytes says %d (want within 10%% + 256 KiB)", got, want)
			}
			t.Logf("allocated %d bytes, TreeBytes %d (%.3f)", got, want, float64(got)/float64(want))
			runtime.KeepAlive(tree)
		})
	}
}
