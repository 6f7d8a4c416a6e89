package search

import (
	"context"
	"sync"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// A batching driver keeps many leaves in flight: select 16 leaves, then
// evaluate and back them all up. Virtual losses must spread the leaves
// over different nodes and be fully removed afterwards.
func TestSelectLeafBackupBatched(t *testing.T) {
	g := games.MustNew("connect4")
	for _, rule := range []Rule{PUCT, UCT} {
		o := DefaultOptions()
		o.Rule, o.Sims, o.MaxNodes = rule, 1, 100000
		if rule == PUCT {
			o.Eval = Uniform{}
		}
		tr, err := New(g, o, 1)
		if err != nil {
			t.Fatal(err)
		}
		tr.Prepare(g.NewInitialState())
		const batch = 16
		ws := make([]*Walker, batch)
		for i := range ws {
			ws[i] = tr.NewWalker(uint64(i))
		}
		for round := range 20 {
			leaves := map[int32]bool{}
			var need [batch]bool
			for i, w := range ws {
				need[i] = tr.SelectLeaf(w)
				leaves[w.leaf] = true
			}
			if round > 2 && len(leaves) < batch/2 {
				t.Errorf("%v round %d: %d distinct leaves among %d in flight", rule, round, len(leaves), batch)
			}
			for i, w := range ws {
				var pri []float32
				if need[i] {
					if tr.opt.Eval.Evaluate(w.Ctx, w.State, w.Value, w.Priors) {
						pri = w.Priors
					}
				}
				tr.Backup(w, w.Value, pri)
			}
		}
		if !tr.virtual {
			t.Fatalf("%v: %d walkers, but the tree keeps no virtual losses", rule, batch)
		}
		for i := range tr.a.numEdges {
			if v := tr.a.vl[i]; v != 0 {
				t.Fatalf("%v: edge %d keeps virtual loss %d", rule, i, v)
			}
		}
		total := 0
		for _, x := range tr.RootStats(0, nil) {
			total += x.Visits
		}
		if total != 20*batch {
			t.Errorf("%v: root visits %d, want %d", rule, total, 20*batch)
		}
	}
}

// Tree parallelism: concurrent Search goroutines (run with -race) and
// concurrent external walkers on a shared tree.
func TestParallelSearch(t *testing.T) {
	for _, gs := range []string{"connect4", "tetrislink:players=3"} {
		g := games.MustNew(gs)
		for _, rule := range []Rule{UCT, PUCT, RAVE, PoolRAVE} {
			o := DefaultOptions()
			o.Rule, o.Sims, o.Threads = rule, 1000, 4
			if rule == PUCT {
				o.Eval = Uniform{}
			}
			if rule == PoolRAVE {
				o.PoolAt = PoolInTree // pool draws from shared AMAF statistics
			}
			tr, err := New(g, o, 1)
			if err != nil {
				t.Fatal(err)
			}
			s := g.NewInitialState()
			if n := tr.Search(context.Background(), s); n != 1000 {
				t.Errorf("%s %v: %d simulations, want 1000", gs, rule, n)
			}
			total := 0
			for _, x := range tr.RootStats(s.CurrentPlayer(), nil) {
				total += x.Visits
			}
			if total != 1000 {
				t.Errorf("%s %v: root visits %d, want 1000", gs, rule, total)
			}
			for i := range tr.a.numEdges {
				if v := tr.vlOf(i, 1)[0]; v != 0 {
					t.Fatalf("%s %v: edge %d keeps virtual loss %d", gs, rule, i, v)
				}
			}
		}
	}
	// External walkers on a shared tree.
	g := games.MustNew("connect4")
	o := DefaultOptions()
	o.Sims = 1
	tr, _ := New(g, o, 2)
	tr.Prepare(g.NewInitialState())
	tr.SetShared(true)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func(w *Walker) {
			defer wg.Done()
			for range 500 {
				if tr.SelectLeaf(w) {
					tr.opt.Eval.Evaluate(w.Ctx, w.State, w.Value, nil)
				}
				tr.Backup(w, w.Value, nil)
			}
		}(tr.NewWalker(uint64(i)))
	}
	wg.Wait()
	if n := tr.a.nodes[tr.root].n; n != 2000 {
		t.Errorf("shared walkers: root visits %d, want 2000", n)
	}
}

// Single-threaded searches are deterministic for a seed.
func TestDeterministic(t *testing.T) {
	g := games.MustNew("connect4")
	run := func() []ActionStat {
		o := DefaultOptions()
		o.Sims = 3000
		tr, _ := New(g, o, 42)
		s, _ := g.ParseState("4453")
		tr.Search(context.Background(), s)
		return tr.RootStats(s.CurrentPlayer(), nil)
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("run 1 %+v != run 2 %+v", a[i], b[i])
		}
	}
}
