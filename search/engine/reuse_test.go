package engine

import (
	"context"
	"math"
	"testing"

	"github.com/canopy-go/canopy/search"
)

// A job whose tree reuses subtrees keeps the played child's visits from
// one Start to the next, and with root noise the kept root's priors (the
// flat network policy of the zero-logit backend: uniform) are noised
// afresh; without noise they stay exactly the network's.
func TestJobReuseRenoises(t *testing.T) {
	for _, alpha := range []float64{0, 0.3} {
		g, e := newEngine(t, "connect4", 0, Options{Workers: 1, Batch: 8, Wait: -1})
		o := search.DefaultOptions()
		o.Rule, o.Eval, o.Reuse = search.PUCT, search.Uniform{}, true
		o.DirichletA, o.DirichletEps = alpha, 0.25
		o.Sims, o.MaxNodes, o.ExpandVisits = 300, 4*300+32, 0
		tr, err := search.New(g, o, 1)
		if err != nil {
			t.Fatal(err)
		}
		w := e.NewWorker()
		j := w.NewJob(1, nil)
		j.SetTree(tr, 0)
		s := g.NewInitialState()
		search1 := func() []search.ActionStat {
			s.CloneInto(j.Root())
			w.Start(j, o.Sims)
			if err := w.Loop(context.Background()); err != nil {
				t.Fatal(err)
			}
			return tr.RootStats(s.CurrentPlayer(), nil)
		}
		first := search1()
		best := first[0] // sorted by visits
		s.Apply(best.Action)
		second := search1()
		var visits int
		var sum float64
		uniform := true
		for _, x := range second {
			visits += x.Visits
			sum += float64(x.Prior)
			if x.Prior != float32(1/float64(len(second))) {
				uniform = false
			}
		}
		// The kept root had best.Visits visits, best.Visits-1 of them
		// through its edges (the first created it).
		if want := o.Sims + best.Visits - 1; visits != want {
			t.Errorf("alpha %v: root edges have %d visits after the second search, want %d (%d kept + %d new)", alpha, visits, want, best.Visits-1, o.Sims)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("alpha %v: root priors sum to %v", alpha, sum)
		}
		if uniform != (alpha == 0) {
			t.Errorf("alpha %v: kept root's priors uniform = %v, want %v", alpha, uniform, alpha == 0)
		}
	}
}
