package engine

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
)

// NetEvaluator is a search.Evaluator that evaluates each leaf with a
// pooled engine's network, one blocking request per leaf (the requests
// of concurrent searches share batches). It is what `mcts:eval=<net>`
// uses; the `az` agent drives the engine directly instead. It is safe for
// concurrent use.
type NetEvaluator struct {
	e     *Engine
	lease *Lease    // nil for an engine the caller owns (NewEngineEvaluator)
	bufs  sync.Pool // *evalScratch
	// paranoid: SetBackup(BackupParanoid); set before the first Evaluate.
	paranoid bool
	// failed holds the first error of the engine (a closed engine, a
	// backend failure); set once, never cleared.
	failed atomic.Pointer[error]
}

type evalScratch struct {
	logits []float32
	vals   []float32 // a per-player head's value row
	mask   games.Mask
	// simultaneous states (evaluateSim): every player's value, and the
	// rows of a per-player head
	own, simVals []float32
}

// NewNetEvaluator returns an evaluator for g on network netRef (see
// nets.OpenNet) and backend, on an engine of pool p.
func NewNetEvaluator(p *Pool, g games.Game, netRef, backend string) (*NetEvaluator, error) {
	l, err := p.Acquire(g, netRef, backend)
	if err != nil {
		return nil, err
	}
	ev := NewEngineEvaluator(l.Engine)
	ev.lease = l
	return ev, nil
}

// NewEngineEvaluator returns an evaluator on e, an engine the caller
// owns: it must stay open while the evaluator is used, and the
// evaluator's Close leaves it open (self-play's turn searchers share the
// run's engine so).
func NewEngineEvaluator(e *Engine) *NetEvaluator {
	n := e.Game().NumActions()
	ev := &NetEvaluator{e: e}
	ev.bufs.New = func() any {
		return &evalScratch{logits: make([]float32, n), vals: make([]float32, e.vsize), mask: games.NewMask(n)}
	}
	return ev
}

// Close releases the evaluator's pooled engine (none for
// NewEngineEvaluator's).
func (ev *NetEvaluator) Close() error {
	if ev.lease != nil {
		ev.lease.Release()
	}
	return nil
}

// Err returns the first error the engine returned to Evaluate (whose
// leaf was then valued 0 without priors), or nil: a caller that must
// not keep the results of such searches (self-play) checks it after
// them.
func (ev *NetEvaluator) Err() error {
	if p := ev.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// Evaluate implements search.Evaluator. Chance states are advanced by
// sampling to the next decision; simultaneous states are evaluated from
// every player's view (evaluateSim).
func (ev *NetEvaluator) Evaluate(c *search.EvalContext, s games.State, value []float64, priors []float32) bool {
	for s.CurrentPlayer() == games.ChancePlayer {
		s.Apply(s.(games.ChanceState).SampleChance(c.Rng))
	}
	if s.IsTerminal() {
		c.Terminal(s, value)
		return false
	}
	p := s.CurrentPlayer()
	if p == games.SimultaneousPlayer {
		return ev.evaluateSim(s, value, priors)
	}
	decision := p >= 0
	if !decision {
		p = 0
	}
	sc := ev.bufs.Get().(*evalScratch)
	defer ev.bufs.Put(sc)
	var v float32
	var err error
	vec := ev.e.vsize > 1 && !ev.paranoid
	if vec {
		err = ev.e.EvaluateValues(context.Background(), s, p, sc.logits, sc.vals)
	} else {
		v, err = ev.e.Evaluate(context.Background(), s, p, sc.logits)
	}
	if err != nil {
		// The engine is closed or failed: no information; a neutral value
		// keeps the search consistent (the agent's owner sees the error
		// elsewhere, or in Err).
		ev.failed.CompareAndSwap(nil, &err)
		clear(value)
		return false
	}
	if vec {
		fillValues(value, p, sc.vals) // MaxN: every player its own value
	} else {
		fillValue(value, p, v)
	}
	if priors == nil || !decision {
		return false
	}
	s.Legal(sc.mask)
	return maskedSoftmax(sc.logits, sc.mask, priors)
}

// evaluateSim evaluates simultaneous state s from every player's view, as
// the batched jobs do: player q's policy over LegalFor(q) goes to block q
// of priors (search.Walker.Priors), the values combine as simValues says.
func (ev *NetEvaluator) evaluateSim(s games.State, value []float64, priors []float32) bool {
	g := ev.e.game
	n, na, vs := g.NumPlayers(), g.NumActions(), ev.e.vsize
	sc := ev.bufs.Get().(*evalScratch)
	defer ev.bufs.Put(sc)
	if len(sc.own) < n {
		sc.own, sc.simVals = make([]float32, n), make([]float32, n*max(vs, 1))
	}
	ok := priors != nil
	for q := range n {
		var err error
		if vs > 1 {
			err = ev.e.EvaluateValues(context.Background(), s, q, sc.logits, sc.simVals[q*vs:(q+1)*vs])
			sc.own[q] = sc.simVals[q*vs]
		} else {
			sc.own[q], err = ev.e.Evaluate(context.Background(), s, q, sc.logits)
		}
		if err != nil {
			ev.failed.CompareAndSwap(nil, &err)
			clear(value)
			return false
		}
		if priors != nil {
			games.LegalOf(s, q, sc.mask)
			if !maskedSoftmax(sc.logits, sc.mask, priors[q*na:(q+1)*na]) {
				clear(priors[q*na : (q+1)*na])
			}
		}
	}
	simValues(value, sc.own, sc.simVals, vs, ev.paranoid)
	return ok
}

// SetBackup implements search.BackupSetter: BackupParanoid values the
// tree from the mover's value alone even when the network gives every
// player's. Call it before the evaluator is used.
func (ev *NetEvaluator) SetBackup(kind string) { ev.paranoid = kind == BackupParanoid }

// OpenEvaluator implements search.EvaluatorOpener: eval=NAME for search
// names a network when it is a shipped network's name, "default" (the
// game's shipped network), "init" (the built-in random network) or an
// existing weights file; the evaluator runs on the pool's engine for it,
// with the pool's backend, and its Close releases that engine.
func (p *Pool) OpenEvaluator(g games.Game, name string) (search.Evaluator, bool, error) {
	isNet := name == "init" || name == "default"
	for _, s := range nets.Shipped() {
		isNet = isNet || s.Name == name
	}
	if _, err := os.Stat(name); err == nil {
		isNet = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	if !isNet {
		return nil, false, nil
	}
	ev, err := NewNetEvaluator(p, g, name, "auto")
	if err != nil {
		return nil, true, err
	}
	return ev, true, nil
}
