package search

import (
	"context"
	"runtime"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/connect4"
)

// TreeBytes is what a real tree allocates (runtime.MemStats around New,
// two searches and a subtree reuse), within 10% plus 256 KiB for walkers,
// states and scratch: the memory guards of self-play and the CLI build
// on it (issue 39 item 2).
func TestTreeBytesMatchesAllocations(t *testing.T) {
	g := games.Game(connect4.New())
	for _, c := range []struct {
		name string
		set  func(o *Options)
	}{
		{"uct", func(o *Options) {}},
		{"rave", func(o *Options) { o.Rule = RAVE }},
		{"ucb1tuned", func(o *Options) { o.Rule = UCB1Tuned }},
		{"tt", func(o *Options) { o.TT = true }},
		{"reuse", func(o *Options) { o.Reuse = true }},
		{"reuse+rave+nodes", func(o *Options) { o.Reuse, o.Rule, o.MaxNodes = true, RAVE, 90_000 }},
	} {
		t.Run(c.name, func(t *testing.T) {
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
			tree.Search(context.Background(), s)
			s.Apply(3)
			s.Apply(3)
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
