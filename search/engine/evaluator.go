package engine

import (
	"context"
	"errors"
	"os"
	"sync"

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
	lease *Lease
	bufs  sync.Pool // *evalScratch
}

type evalScratch struct {
	logits []float32
	mask   games.Mask
}

// NewNetEvaluator returns an evaluator for g on network netRef (see
// nets.OpenNet) and backend.
func NewNetEvaluator(g games.Game, netRef, backend string) (*NetEvaluator, error) {
	l, err := Shared.Acquire(g, netRef, backend)
	if err != nil {
		return nil, err
	}
	n := g.NumActions()
	ev := &NetEvaluator{lease: l}
	ev.bufs.New = func() any { return &evalScratch{logits: make([]float32, n), mask: games.NewMask(n)} }
	return ev, nil
}

// Close releases the evaluator's engine.
func (ev *NetEvaluator) Close() error { ev.lease.Release(); return nil }

// Evaluate implements search.Evaluator. Chance states are advanced by
// sampling to the next decision; simultaneous states are valued from
// player 0's view without priors.
func (ev *NetEvaluator) Evaluate(c *search.EvalContext, s games.State, value []float64, priors []float32) bool {
	for s.CurrentPlayer() == games.ChancePlayer {
		s.Apply(s.(games.ChanceState).SampleChance(c.Rng))
	}
	if s.IsTerminal() {
		c.Terminal(s, value)
		return false
	}
	p := s.CurrentPlayer()
	decision := p >= 0
	if !decision {
		p = 0
	}
	sc := ev.bufs.Get().(*evalScratch)
	defer ev.bufs.Put(sc)
	v, err := ev.lease.Evaluate(context.Background(), s, p, sc.logits)
	if err != nil {
		// The engine is closed or failed: no information; a neutral value
		// keeps the search consistent (the agent's owner sees the error
		// elsewhere).
		clear(value)
		return false
	}
	fillValue(value, p, v)
	if priors == nil || !decision {
		return false
	}
	s.Legal(sc.mask)
	return maskedSoftmax(sc.logits, sc.mask, priors)
}

// resolveEvaluator resolves eval=NAME for search: a shipped network name,
// "default" (the game's shipped network), "init" (the built-in random
// network) or an existing weights file.
func resolveEvaluator(g games.Game, name string) (search.Evaluator, bool, error) {
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
	ev, err := NewNetEvaluator(g, name, "auto")
	if err != nil {
		return nil, true, err
	}
	return ev, true, nil
}
