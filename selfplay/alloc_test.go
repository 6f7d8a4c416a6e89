package selfplay

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/canopy-go/canopy/search"
)

// One lock-step of a warmed tree (select 8 leaves, encode, submit, wait,
// back up) allocates nothing.
func TestStepAllocs(t *testing.T) {
	g, e := newEngine(t, "connect4", 3, EngineOptions{Workers: 1, Leaves: 8, Batch: 8, Wait: -1})
	o := search.DefaultOptions()
	o.Rule, o.Sims, o.MaxNodes = search.PUCT, 1<<20, 200000
	o.Eval = &rootEval{value: make([]float64, 2), priors: make([]float32, 7)}
	tr, err := search.New(g, o, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := e.newWorker()
	j := w.newJob(8)
	j.root = g.NewInitialState()
	j.setTree(tr, 5)
	tr.Prepare(j.root)
	j.prepared = true
	j.budget = new(atomic.Int64)
	j.budget.Store(1 << 40)
	round := func() {
		w.start(j)
		w.ready = w.ready[:0]
		w.step(j)
		for w.client.InFlight() > 0 {
			n, err := w.client.Wait(context.Background(), w.comps)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range w.comps[:n] {
				w.complete(c)
			}
		}
		w.ready = w.ready[:0]
	}
	for range 200 {
		round()
	}
	if n := testing.AllocsPerRun(200, round); n != 0 {
		t.Errorf("%v allocations per lock-step of 8 leaves, want 0", n)
	}
	if c := e.Counters(); c.Nodes < 400*8 || c.Evals == 0 {
		t.Errorf("counters %+v: the rounds did not run", c)
	}
}
