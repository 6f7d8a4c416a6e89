package search

import "github.com/canopy-go/canopy/games"

// PrepareWith is Prepare with the root's policy handed in: when the root
// is expanded at evaluation (ExpandVisits 0) its edges take priors
// (weights by action id, normalised over the legal actions) instead of
// calling Options.Eval (at a simultaneous root one block of NumActions
// weights per player, as Walker.Priors). A nil priors expands with
// uniform priors. A root
// kept by tree reuse keeps its edges. Batched drivers call it with the
// network's root policy, evaluated through their batch stream.
func (t *Tree) PrepareWith(s games.State, priors []float32) {
	if priors == nil {
		priors = t.uniformPriors()
	}
	t.given = priors
	t.Prepare(s)
	t.given = nil
}

// uniformPriors returns a reusable slice of equal weights, one per action.
func (t *Tree) uniformPriors() []float32 {
	if len(t.ones) == 0 {
		t.ones = make([]float32, priorsLen(t.game))
		for i := range t.ones {
			t.ones[i] = 1
		}
	}
	return t.ones
}

// Walkers returns the tree's own walkers 0..n-1, creating the missing
// ones with the seeds Search gives its goroutines: a driver that steps
// walker 0 through SelectLeaf and Backup one simulation at a time builds
// exactly the tree a single-threaded Search would. Walker 0 also expands
// the root in Prepare, so a driver must not hold it in flight across a
// Prepare.
func (t *Tree) Walkers(n int) []*Walker {
	if len(t.walkers) == 0 {
		t.walkers = append(t.walkers, t.NewWalker(t.seed^0x9e3779b97f4a7c15))
	}
	for len(t.walkers) < n {
		t.walkers = append(t.walkers, t.NewWalker(t.seed+uint64(len(t.walkers))*0x9e3779b97f4a7c15))
	}
	return t.walkers[:n]
}
