package selfplay

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
)

// Analyze searches one position with one tree shared by all the engine's
// workers (analysis mode): each worker keeps Leaves leaves of the tree in
// flight and all draw on one budget of o.Sims simulations. o must use
// PUCT-style expansion at evaluation (ExpandVisits 0); o.Eval is replaced
// by the network. The result is not reproducible run to run (workers race
// for the budget); use RootStats on the returned tree.
func (e *Engine) Analyze(ctx context.Context, s games.State, o search.Options, seed uint64) (*search.Tree, error) {
	if s.IsTerminal() || s.CurrentPlayer() < 0 {
		return nil, fmt.Errorf("selfplay: analyze: the position must have a player to move")
	}
	if o.Sims <= 0 {
		return nil, fmt.Errorf("selfplay: analyze: sims = %d, want >= 1", o.Sims)
	}
	o.ExpandVisits = 0
	o.Time = 0
	g := e.game
	re := &rootEval{value: make([]float64, g.NumPlayers()), priors: make([]float32, g.NumActions())}
	o.Eval = re
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
	v, err := e.b.Evaluate(ctx, func(row []float32) { s.Observation(mover, row) }, pol)
	if err != nil {
		return nil, err
	}
	e.evals.Add(1)
	fillValue(re.value, mover, v)
	re.ok = nets.MaskedSoftmax(pol, mask, re.priors)
	t.Prepare(s)
	t.SetShared(true)
	defer t.SetShared(false)
	var budget atomic.Int64
	budget.Store(int64(o.Sims))
	err = e.runWorkers(ctx, e.opt.Workers, func(i int, w *worker) error {
		j := w.newJob(e.opt.Leaves)
		j.budget = &budget
		j.root = s
		j.setTree(t, seed+uint64(i+1)*0x632be59bd9b4e019)
		j.prepared = true
		w.start(j)
		return nil
	})
	return t, err
}
