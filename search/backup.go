package search

import (
	"math"

	"github.com/canopy-go/canopy/games"
)

// Backup, pipeline step (3): the leaf's values added along the path, and
// the AMAF statistics of the RAVE family.

// Backup is pipeline step (3): it expands the leaf when the search
// expands at evaluation (with priors, which may be nil), adds value (one
// entry per player) to every edge of the walker's path for the player who
// chose it, removes the virtual losses and counts the visits. For the RAVE
// family it also updates the AMAF statistics of the path's siblings.
func (t *Tree) Backup(w *Walker, value []float64, priors []float32) {
	if w.expandAt {
		t.expand(w, w.leaf, priors)
	}
	if w.leaf != NilNode {
		t.add32(&t.a.nodes[w.leaf].n, 1)
	}
	if !t.shared && !t.squares {
		t.backupPlain(w, value)
	} else {
		t.backupAtomic(w, value)
	}
	if t.opt.Rule.usesAMAF() {
		t.backupAMAF(w, value)
	}
	if t.opt.SimSel != SimUCB {
		t.backupSim(w, value)
	}
	t.add64(&t.sims, 1)
}

// backupPlain is Backup's path loop for an unshared tree without squared
// sums (plain adds, no per-step branches on the options).
func (t *Tree) backupPlain(w *Walker, value []float64) {
	nodes, hot, path := t.a.nodes, t.a.hot, w.path // locals: the adds below cannot alias them
	vl, virtual := t.a.vl, t.virtual
	for i := len(path) - 1; i >= 0; i-- {
		st := &path[i]
		h := &hot[st.edge]
		if virtual {
			vl[st.edge]--
		}
		h.n++
		if st.player >= 0 {
			h.w += int64(value[st.player] * valueScale) // truncation: error < 2^-24
		}
		if st.first {
			nodes[st.node].n++
		}
	}
}

// backupAtomic is Backup's general path loop (shared trees, squared sums).
func (t *Tree) backupAtomic(w *Walker, value []float64) {
	for i := len(w.path) - 1; i >= 0; i-- {
		st := &w.path[i]
		h := &t.a.hot[st.edge]
		t.addVloss(st.edge, -1)
		t.add32(&h.n, 1)
		if st.player >= 0 {
			v := value[st.player]
			t.add64(&h.w, int64(v*valueScale)) // truncation: error < 2^-24
			if t.squares && !st.bandit {       // bandit edges keep their sums in w2
				t.add64(&t.a.ext[st.edge].w2, int64(v*v*valueScale))
			}
		}
		if st.first {
			t.add32(&t.a.nodes[st.node].n, 1)
		}
	}
}

// backupAMAF updates, for every node of the path and its mover p, the
// AMAF statistics of each edge whose action p played at or below that node
// in this simulation (first-occurrence sets, so once per simulation).
func (t *Tree) backupAMAF(w *Walker, value []float64) {
	for _, m := range w.amaf {
		m.Clear()
	}
	tr := w.Ctx.Trace
	// Trace holds the tree moves (one per non-chance step, in path order)
	// followed by the rollout moves.
	nTree := 0
	for _, st := range w.path {
		if st.player >= 0 {
			nTree++
		}
	}
	for _, m := range tr[min(nTree, len(tr)):] {
		w.amaf[m.Player].Set(m.Action)
	}
	for i := len(w.path) - 1; i >= 0; i-- {
		st := &w.path[i]
		if st.player < 0 {
			continue
		}
		p := st.player
		mask := w.amaf[p]
		mask.Set(t.a.edges[st.edge].action)
		if st.bandit {
			continue // exp3/rm keep their own statistics in the AMAF fields
		}
		nd := &t.a.nodes[st.node]
		first, cnt := nd.firstEdge, nd.numEdges
		if nd.player == games.SimultaneousPlayer {
			first, cnt = simSegment(t.a, nd, int(p), t.players)
		}
		v := int64(math.Round(value[p] * valueScale))
		for j := first; j < first+cnt; j++ {
			if mask.Has(t.a.edges[j].action) {
				x := &t.a.ext[j]
				t.add32(&x.amafN, 1)
				t.add64(&x.amafW, v)
			}
		}
	}
}
