package engine

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
)

// Analyze searches one position with one tree shared by all the engine's
// workers (analysis mode): each worker keeps Options.Leaves leaves of the
// tree in flight and all draw on one budget of o.Sims simulations. o must
// use PUCT-style expansion at evaluation (ExpandVisits 0); the network
// evaluates every leaf. The result is not reproducible run to run
// (workers race for the budget); use RootStats on the returned tree.
func (e *Engine) Analyze(ctx context.Context, s games.State, o search.Options, seed uint64) (*search.Tree, error) {
	if s.IsTerminal() || s.CurrentPlayer() < 0 {
		return nil, fmt.Errorf("engine: analyze: the position must have a player to move")
	}
	if o.Sims <= 0 {
		return nil, fmt.Errorf("engine: analyze: sims = %d, want >= 1", o.Sims)
	}
	o.ExpandVisits = 0
	o.Time = 0
	g := e.game
	o.Eval = search.Uniform{} // never called: leaves and root come from the network
	if o.MaxNodes <= 0 {
		o.MaxNodes = o.Sims + e.opt.Workers*e.opt.Leaves + 16
	}
	t, err := search.New(g, o, seed)
	if err != nil {
		return nil, err
	}
	mover := s.CurrentPlayer()
	mask := games.NewMask(g.NumActions())
	s.Legal(mask)
	pol := make([]float32, e.polSize)
	if _, err := e.Evaluate(ctx, s, mover, pol); err != nil {
		return nil, err
	}
	priors := make([]float32, g.NumActions())
	if !maskedSoftmax(pol, mask, priors) {
		priors = nil
	}
	t.PrepareWith(s, priors)
	t.SetShared(true)
	defer t.SetShared(false)
	var budget atomic.Int64
	budget.Store(int64(o.Sims))
	return t, e.RunWorkers(ctx, e.opt.Workers, func(i int, w *Worker) error {
		j := w.NewJob(e.opt.Leaves, nil)
		j.budget = &budget
		j.sims = int64(o.Sims)
		s.CloneInto(j.root)
		j.SetTree(t, 1+i*e.opt.Leaves) // walker 0 prepared the root
		j.prepared = true
		w.queue(j)
		return nil
	})
}
