package search

import (
	"fmt"
	"math"

	"github.com/canopy-go/canopy/games"
)

// Single-observer information-set MCTS (Cowling, Powley & Whitehouse
// 2012). Every simulation starts from a fresh determinization of the
// observer's root (games.Resampler). Nodes are keyed by the sequence of
// actions from the root, as seen by the observer; since the legal actions
// of a node differ between determinizations, a node's edge block is
// extended when a determinization shows actions it lacks (the block is
// copied to a larger one; the old block is abandoned), and selection
// considers only the edges legal in the current determinization.
//
// Availability counts: in ISMCTS trees edge.w2 counts how many times the
// edge was legal when its node was visited, and UCT uses
// c*sqrt(ln(avail)/n) instead of c*sqrt(ln(N)/n). (UCB1-Tuned's squared
// sums are therefore not available with ISMCTS.) ISMCTS runs single-threaded.
//
// Rules: ismctsStep scores UCT (with availability counts) and PUCT only;
// the other rules, progressive bias, rewards=01 and pbform=study003 are
// refused with an error (ismctsSupported) rather than silently replaced.

// ismctsSupported returns an error naming what ISMCTS does not support
// in o, or nil.
func (o *Options) ismctsSupported() error {
	if o.Rule != UCT && o.Rule != PUCT {
		return fmt.Errorf("mcts: ismcts supports sel=uct and sel=puct only, not sel=%v (UCB1-Tuned's squared sums hold the availability counts; the RAVE family's AMAF statistics are not kept per determinization)", o.Rule)
	}
	if o.Bias != 0 || o.PBForm == "study003" || o.Rewards01 {
		return fmt.Errorf("mcts: ismcts does not support bias, pbform=study003 or rewards=01 (its selection step scores plain UCT and PUCT)")
	}
	return nil
}

// ismctsStep selects the edge to follow at node cur for state s (which is
// a determinization). It returns NilEdge when the edge arena is full.
func (t *Tree) ismctsStep(w *Walker, cur int32, s games.State) int32 {
	nd := &t.a.nodes[cur]
	s.Legal(w.legal)
	if !t.ismctsCover(nd, w.legal) && !t.ismctsExtend(w, nd) {
		return NilEdge
	}
	edges := t.a.edges[nd.firstEdge : nd.firstEdge+nd.numEdges]
	if nd.player == games.ChancePlayer {
		a := s.(games.ChanceState).SampleChance(w.Ctx.Rng)
		for i := range edges {
			if edges[i].action == a {
				return nd.firstEdge + int32(i)
			}
		}
		return NilEdge
	}
	for i := range edges {
		if w.legal.Has(edges[i].action) {
			edges[i].w2++
		}
	}
	best, bestScore := NilEdge, math.Inf(-1)
	for i := range edges {
		e, h := &edges[i], &t.a.hot[nd.firstEdge+int32(i)]
		if !w.legal.Has(e.action) {
			continue
		}
		n := int(h.n + h.vloss)
		var score float64
		switch {
		case t.opt.Rule == PUCT:
			q := t.opt.FPU
			if n > 0 {
				q = (float64(h.w)/valueScale - float64(h.vloss)) / float64(n)
			}
			score = q + t.opt.C*float64(h.prior)*math.Sqrt(float64(e.w2))/(1+float64(n))
		case n == 0:
			return nd.firstEdge + int32(i)
		default:
			q := (float64(h.w)/valueScale - float64(h.vloss)) / float64(n)
			score = q + t.opt.C*math.Sqrt(math.Log(float64(e.w2))/float64(n))
		}
		if score > bestScore {
			best, bestScore = nd.firstEdge+int32(i), score
		}
	}
	return best
}

// ismctsCover reports whether every action of legal has an edge at nd.
func (t *Tree) ismctsCover(nd *node, legal games.Mask) bool {
	return t.countCovered(nd, legal) == legal.Count()
}

// countCovered counts nd's edges whose action is in legal.
func (t *Tree) countCovered(nd *node, legal games.Mask) int {
	c := 0
	for _, e := range t.a.edges[nd.firstEdge : nd.firstEdge+nd.numEdges] {
		if legal.Has(e.action) {
			c++
		}
	}
	return c
}

// ismctsExtend copies nd's edges into a block that also holds the legal
// actions it lacked.
func (t *Tree) ismctsExtend(w *Walker, nd *node) bool {
	extra := w.legal.Count() - t.countCovered(nd, w.legal)
	old := nd.numEdges
	first := t.a.newEdges(int(old) + extra)
	if first == NilEdge {
		t.full.Store(true)
		return false
	}
	copy(t.a.edges[first:first+old], t.a.edges[nd.firstEdge:nd.firstEdge+old])
	copy(t.a.hot[first:first+old], t.a.hot[nd.firstEdge:nd.firstEdge+old])
	have := w.Ctx.Mask
	have.Clear()
	for _, e := range t.a.edges[nd.firstEdge : nd.firstEdge+old] {
		have.Set(e.action)
	}
	i := first + old
	for a := range w.legal.All() {
		if !have.Has(a) {
			t.a.edges[i] = edge{action: a, child: NilNode}
			t.a.hot[i].prior = 1 / float32(w.legal.Count())
			i++
		}
	}
	nd.firstEdge, nd.numEdges = first, old+int32(extra)
	return true
}
