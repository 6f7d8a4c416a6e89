package search

import (
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
// Availability counts: edgeExt.avail counts how many times the edge was
// legal when its node was visited, and every rule uses it where it would
// use the parent's visit count N (Cowling et al. 2012, section 5.2): UCT's
// and the RAVE family's c*sqrt(ln N / n) and study 001's
// c*sqrt(2 ln N / n), UCB1-Tuned's ln N, PUCT's sqrt(N), ln(N+1) under
// pbform=study003. Everything else is as in the tree's rule (edgeScore):
// the value and squared-value sums, the AMAF statistics (updated for the
// path's edges whose action the player played below, legal in this
// determinization or not), progressive bias, rewards=01 and PoolRAVE's
// pool (pool=tree draws from the legal edges only; pool=rollout from the
// last node's best AMAF actions, skipped in a rollout when illegal there).
//
// Progressive bias under ISMCTS: an edge's prior is the heuristic of the
// determinization in which the edge was created (at expansion, or when a
// later determinization extends the node), min-max scaled over that
// determinization's legal actions; it is not recomputed per
// determinization (that would call the heuristic at every node of every
// simulation).
//
// ISMCTS runs single-threaded, without det and in games with sequential
// moves only (NewAgent refuses the other combinations: a simultaneous
// node's edge segments come from the deal that expanded it, and another
// deal's hands would make some of them illegal); every selection rule and
// option is supported.

// ismctsStep selects the edge to follow at node cur for state s (which is
// a determinization). It returns NilEdge when the edge arena is full.
func (t *Tree) ismctsStep(w *Walker, cur int32, s games.State) int32 {
	nd := &t.a.nodes[cur]
	s.Legal(w.legal)
	if !t.ismctsCover(nd, w.legal) && !t.ismctsExtend(w, nd, s) {
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
	ext := t.a.ext[nd.firstEdge : nd.firstEdge+nd.numEdges]
	for i := range edges {
		if w.legal.Has(edges[i].action) {
			ext[i].avail++
		}
	}
	if t.poolTree && w.Ctx.Rng.Float64() < t.opt.PoolP {
		if ei := t.selectPool(w, nd.firstEdge, nd.numEdges, w.legal); ei != NilEdge {
			return ei
		}
	}
	best, bestScore := NilEdge, math.Inf(-1)
	for i := range edges {
		if !w.legal.Has(edges[i].action) {
			continue
		}
		pn := t.parentOf(int(ext[i].avail))
		ei := nd.firstEdge + int32(i)
		score, now := t.edgeScore(&ext[i], &t.a.hot[ei], t.vlOf(ei, 1)[0], &pn)
		if now {
			return nd.firstEdge + int32(i)
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
// actions of s (w.legal) it lacked. The new edges get the uniform prior
// 1/|legal|, or with progressive bias the heuristic of s scaled over
// w.legal (heuristicPriors).
func (t *Tree) ismctsExtend(w *Walker, nd *node, s games.State) bool {
	extra := w.legal.Count() - t.countCovered(nd, w.legal)
	old := nd.numEdges
	first := t.a.newEdges(int(old) + extra)
	if first == NilEdge {
		t.full.Store(true)
		return false
	}
	copy(t.a.edges[first:first+old], t.a.edges[nd.firstEdge:nd.firstEdge+old])
	copy(t.a.hot[first:first+old], t.a.hot[nd.firstEdge:nd.firstEdge+old])
	copy(t.a.ext[first:first+old], t.a.ext[nd.firstEdge:nd.firstEdge+old])
	if t.virtual {
		copy(t.a.vl[first:first+old], t.a.vl[nd.firstEdge:nd.firstEdge+old])
	}
	have := w.Ctx.Mask
	have.Clear()
	for _, e := range t.a.edges[nd.firstEdge : nd.firstEdge+old] {
		have.Set(e.action)
	}
	bias := t.opt.Bias != 0 && nd.player >= 0
	if bias {
		heuristicPriors(w.hprior, w.hraw, w.legal, s, int(nd.player), t.opt.Heuristic)
	}
	i := first + old
	for a := range w.legal.All() {
		if !have.Has(a) {
			t.a.edges[i] = edge{action: a, child: NilNode}
			t.a.hot[i].prior = 1 / float32(w.legal.Count())
			if bias {
				t.a.hot[i].prior = w.hprior[a]
			}
			i++
		}
	}
	nd.firstEdge, nd.numEdges = first, old+int32(extra)
	return true
}
