package search

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/canopy-go/canopy/games"
)

// The simple pipeline driver: Prepare makes a position the root, simulate
// runs one simulation through the three steps (SelectLeaf in descend.go,
// the evaluator, Backup in backup.go), and Search/run loop over it until a
// budget is spent. Batched drivers call Prepare, SelectLeaf and Backup
// themselves.

// Prepare makes s the root: it reuses the previous tree when Options.Reuse
// is set and s descends from the previous root, else clears the arena. The
// root is expanded (with the evaluator's priors when ExpandVisits is 0) and
// root noise is applied.
func (t *Tree) Prepare(s games.State) {
	if len(t.walkers) == 0 {
		t.walkers = append(t.walkers, t.NewWalker(t.seed^0x9e3779b97f4a7c15))
	}
	t.full.Store(false)
	t.claimed.Store(0)
	if !(t.opt.Reuse && t.tryReuse(s)) {
		t.a.reset()
		if t.tt != nil {
			t.tt.clear()
		}
		s.CloneInto(t.rootState)
		t.root = t.a.newNode(playerOf(s))
	}
	t.reuse.remember(t, s)
	w := t.walkers[0]
	rn := &t.a.nodes[t.root]
	if rn.state != expanded && rn.player != games.TerminalPlayer {
		t.rootState.CloneInto(w.State)
		var pri []float32
		if t.opt.ExpandVisits == 0 {
			clear(w.Priors)
			if t.given != nil {
				copy(w.Priors, t.given)
				pri = w.Priors
			} else if t.opt.Eval.Evaluate(w.Ctx, w.State, w.Value, w.Priors) {
				pri = w.Priors
			}
			t.rootState.CloneInto(w.State)
		}
		t.legalOf(w, w.State)
		t.expand(w, t.root, pri)
	}
	if t.opt.DirichletA > 0 && rn.state == expanded && rn.player >= 0 {
		t.addNoise(rn)
	}
}

func playerOf(s games.State) int {
	if s.IsTerminal() {
		return games.TerminalPlayer
	}
	return s.CurrentPlayer()
}

// simulate runs one simulation through the pipeline:
//
//  1. SelectLeaf: descend from the root by the selection rule, applying a
//     virtual loss to each edge taken, to a new/unexpanded or terminal leaf;
//  2. evaluate the leaf with the Evaluator (skipped for terminal leaves);
//  3. Backup: expand the leaf if needed and add the values along the path.
func (t *Tree) simulate(w *Walker) {
	if t.SelectLeaf(w) { // (1)
		var pri []float32
		if w.expandAt {
			pri = w.Priors
			clear(pri)
		}
		if !t.opt.Eval.Evaluate(w.Ctx, w.State, w.Value, pri) { // (2)
			pri = nil
		}
		t.Backup(w, w.Value, pri) // (3)
		return
	}
	t.Backup(w, w.Value, nil) // (3), terminal leaf
}

// Search runs simulations from s until the simulation or time budget is
// spent, ctx is cancelled or (with StopWhenFull) the arena is full. It
// returns the number of simulations run. With Threads > 1 the tree is
// searched by that many goroutines.
func (t *Tree) Search(ctx context.Context, s games.State) int {
	t.Prepare(s)
	if t.a.nodes[t.root].player == games.TerminalPlayer {
		return 0
	}
	var deadline time.Time
	if t.opt.Time > 0 {
		deadline = time.Now().Add(t.opt.Time)
	}
	start := atomic.LoadInt64(&t.sims)
	if t.opt.Threads == 1 {
		t.shared = false
		t.run(ctx, t.walkers[0], deadline)
	} else {
		for len(t.walkers) < t.opt.Threads {
			t.walkers = append(t.walkers, t.NewWalker(t.seed+uint64(len(t.walkers))*0x9e3779b97f4a7c15))
		}
		t.shared = true
		var wg sync.WaitGroup
		for i := range t.opt.Threads {
			wg.Add(1)
			go func(w *Walker) {
				defer wg.Done()
				t.run(ctx, w, deadline)
			}(t.walkers[i])
		}
		wg.Wait()
		t.shared = false
	}
	return int(atomic.LoadInt64(&t.sims) - start)
}

// run is one goroutine's simulation loop. Budgets are claimed with an
// atomic counter, so exactly Sims simulations run in total.
func (t *Tree) run(ctx context.Context, w *Walker, deadline time.Time) {
	single := !t.shared // one goroutine: claim the budget with a plain counter
	for i := 0; ; i++ {
		if single {
			if t.opt.Sims > 0 && i >= t.opt.Sims {
				return
			}
		} else if t.opt.Sims > 0 && t.claimed.Add(1) > int64(t.opt.Sims) {
			return
		}
		if i&15 == 0 && i > 0 { // time.Now costs ~25ns; every 16 simulations
			if ctx.Err() != nil || (!deadline.IsZero() && time.Now().After(deadline)) {
				return
			}
		}
		if t.opt.StopWhenFull && t.full.Load() {
			return
		}
		t.simulate(w)
	}
}
