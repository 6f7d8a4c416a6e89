package search

import (
	"sync/atomic"

	"github.com/canopy-go/canopy/games"
)

// Descent, pipeline step (1): from the root to a leaf by the selection
// rule (select.go), expanding (expand.go) and creating nodes on the way.

// SelectLeaf is pipeline step (1): it copies the root state into
// w.State, descends by the selection rule (expanding nodes that have
// reached ExpandVisits), adds one virtual loss to every edge taken and
// stops at a new node, an unexpanded node or a terminal state. It returns
// true when the leaf needs an evaluation; otherwise (terminal leaf)
// w.Value already holds the returns and Backup can follow at once.
func (t *Tree) SelectLeaf(w *Walker) (needsEval bool) {
	t.beginLeaf(w)
	return t.descend(w, t.root)
}

// beginLeaf resets w for a new simulation and writes the root state (a
// fresh determinization under SO-ISMCTS) into w.State.
func (t *Tree) beginLeaf(w *Walker) {
	w.path = w.path[:0]
	w.Ctx.Trace = w.Ctx.Trace[:0]
	w.Ctx.Pool = w.Ctx.Pool[:0]
	w.terminal, w.expandAt = false, false
	record := t.opt.Rule.usesAMAF()
	w.Ctx.Record = record
	if t.ismcts {
		t.obsRoot.(games.Resampler).Resample(t.observer, w.Ctx.Rng, w.State)
	} else {
		t.rootState.CloneInto(w.State)
	}
}

// descend is SelectLeaf's loop from node cur, whose state is w.State,
// after the walker's reset (SelectLeafForced enters it below the root).
func (t *Tree) descend(w *Walker, cur int32) (needsEval bool) {
	record := w.Ctx.Record
	s := w.State
	// fast: plain UCT on an unshared tree without ISMCTS (no AMAF trace):
	// descendPlain takes the expanded decision nodes.
	fast := t.plainUCT && !t.shared && !t.ismcts
	for {
		if fast {
			if cur = t.descendPlain(w, cur); cur == NilNode {
				// Arena full: evaluate this state without a node.
				if s.IsTerminal() {
					return t.terminalLeaf(w, NilNode)
				}
				return t.evalLeaf(w, NilNode)
			}
		}
		nd := &t.a.nodes[cur]
		if nd.player == games.TerminalPlayer || (t.ismcts && s.IsTerminal()) {
			return t.terminalLeaf(w, cur)
		}
		if state := atomic.LoadUint32(&nd.state); state != expanded {
			expandNow := state == deferred || t.opt.ExpandVisits > 0 &&
				atomic.LoadInt32(&nd.n) >= int32(t.opt.ExpandVisits) && state == unexpanded
			if !expandNow {
				return t.evalLeaf(w, cur)
			}
			t.legalOf(w, s)
			if !t.expand(w, cur, nil) {
				return t.evalLeaf(w, cur)
			}
		}
		var childp *int32
		switch {
		case t.ismcts && nd.player != games.SimultaneousPlayer:
			ei := t.ismctsStep(w, cur, s)
			if ei == NilEdge {
				return t.evalLeaf(w, cur)
			}
			e := &t.a.edges[ei]
			pl := int32(nd.player)
			if pl < 0 {
				pl = -1
			}
			w.path = append(w.path, step{node: cur, edge: ei, player: pl, first: true})
			t.addVloss(ei, 1)
			if record && pl >= 0 {
				w.Ctx.Trace = append(w.Ctx.Trace, Traced{pl, e.action})
			}
			s.Apply(e.action)
			childp = &e.child
		case nd.player == games.ChancePlayer:
			a := s.(games.ChanceState).SampleChance(w.Ctx.Rng)
			ei := nd.firstEdge
			for end := ei + nd.numEdges; ei < end && t.a.edges[ei].action != a; ei++ {
			}
			if ei == nd.firstEdge+nd.numEdges {
				// An outcome not seen at expansion: evaluate from here.
				return t.evalLeaf(w, cur)
			}
			w.path = append(w.path, step{node: cur, edge: ei, player: -1, first: true})
			t.addVloss(ei, 1)
			s.Apply(a)
			childp = &t.a.edges[ei].child
		case nd.player == games.SimultaneousPlayer:
			// The node's edges were made from the state of its first
			// visit; the open-loop child is reached by every joint action
			// above it, so a player's choice may not be legal in this
			// simulation's state (Sushi Go: the card a neighbour took was
			// its last of that kind). Such a joint action is never
			// applied: the choices made here are taken back and the
			// state is evaluated as a leaf, as an unseen chance outcome
			// is.
			joint := w.Ctx.Joint
			ss := s.(games.SimultaneousState)
			pathLen, traceLen := len(w.path), len(w.Ctx.Trace)
			for q := range t.players {
				first, cnt := simSegment(t.a, nd, q, t.players)
				st := step{node: cur, player: int32(q), first: q == 0}
				if t.opt.SimSel == SimUCB {
					st.edge = t.selectTree(w, nd, first, cnt)
				} else {
					st.edge, st.prob = t.selectSim(w, first, cnt)
					st.bandit = true
				}
				ei := st.edge
				w.path = append(w.path, st)
				t.addVloss(ei, 1)
				joint[q] = t.a.edges[ei].action
				if record {
					w.Ctx.Trace = append(w.Ctx.Trace, Traced{int32(q), joint[q]})
				}
				if ss.LegalFor(q, w.simLegal[q]); !w.simLegal[q].Has(joint[q]) {
					for _, st := range w.path[pathLen:] {
						t.addVloss(st.edge, -1)
					}
					w.path, w.Ctx.Trace = w.path[:pathLen], w.Ctx.Trace[:traceLen]
					return t.evalLeaf(w, cur)
				}
			}
			ss.ApplyJoint(joint)
			childp = &t.a.edges[nd.firstEdge].child // the open-loop child
		default:
			// Load the node's first action now, so that the cache line of
			// its action records arrives while selection scans the
			// statistics (a separate array) instead of after it: the
			// chosen edge's record then mostly hits. (Only the action:
			// child is written concurrently in shared trees, and actions
			// are written before the node is published.)
			firstAction := t.a.edges[nd.firstEdge].action
			var ei int32
			if t.plainUCT && !t.shared {
				ei = t.selectUCTPlain(nd)
			} else {
				ei = t.selectTree(w, nd, nd.firstEdge, nd.numEdges)
			}
			e := &t.a.edges[ei]
			act := e.action
			if ei == nd.firstEdge {
				act = firstAction
			}
			w.path = append(w.path, step{node: cur, edge: ei, player: int32(nd.player), first: true})
			t.addVloss(ei, 1)
			if record {
				w.Ctx.Trace = append(w.Ctx.Trace, Traced{int32(nd.player), act})
			}
			s.Apply(act)
			childp = &e.child
		}
		child := atomic.LoadInt32(childp)
		if child == NilNode {
			child = t.newChild(childp, s)
			if child == NilNode {
				// Arena full: evaluate this state without a node.
				if s.IsTerminal() {
					return t.terminalLeaf(w, NilNode)
				}
				return t.evalLeaf(w, NilNode)
			}
			cur = child
			continue // a new node: terminal or evaluated at the top of the loop
		}
		cur = child
	}
}

// descendPlain is SelectLeaf's default case in a loop of its own, for
// plain UCT on an unshared tree without ISMCTS: from node cur it descends
// through expanded decision nodes, appending to w.path, adding virtual
// losses and applying the actions to w.State, and returns the first node
// that is not an expanded decision node (a new child included), or
// NilNode when the arena had no room for a new child (w.State is then the
// child's state).
func (t *Tree) descendPlain(w *Walker, cur int32) int32 {
	nodes, edges := t.a.nodes, t.a.edges
	s := w.State
	for {
		nd := &nodes[cur]
		if nd.player < 0 || nd.state != expanded {
			return cur
		}
		ei := t.selectUCTPlain(nd)
		w.path = append(w.path, step{node: cur, edge: ei, player: int32(nd.player), first: true})
		if t.virtual {
			t.a.vl[ei]++
		}
		e := &edges[ei]
		s.Apply(e.action)
		if e.child == NilNode {
			return t.newChild(&e.child, s)
		}
		cur = e.child
	}
}

// newChild creates the node for state s and publishes it in *slot; when
// another goroutine published first, that node is returned (the new one is
// wasted). With a transposition table an existing node of s is linked.
func (t *Tree) newChild(slot *int32, s games.State) int32 {
	if t.tt != nil {
		if ni := t.tt.lookup(t, s); ni != NilNode {
			if atomic.CompareAndSwapInt32(slot, NilNode, ni) {
				return ni
			}
			return atomic.LoadInt32(slot)
		}
	}
	ni := t.a.newNode(playerOf(s))
	if ni == NilNode {
		t.full.Store(true)
		return NilNode
	}
	if !atomic.CompareAndSwapInt32(slot, NilNode, ni) {
		return atomic.LoadInt32(slot)
	}
	if t.tt != nil {
		t.tt.insert(t, s, ni)
	}
	return ni
}

func (t *Tree) terminalLeaf(w *Walker, ni int32) bool {
	w.leaf, w.terminal = ni, true
	w.Ctx.Terminal(w.State, w.Value)
	return false
}

// evalLeaf finishes SelectLeaf at a leaf that needs an evaluation.
func (t *Tree) evalLeaf(w *Walker, ni int32) bool {
	w.leaf = ni
	if ni != NilNode && t.opt.ExpandVisits == 0 && atomic.LoadUint32(&t.a.nodes[ni].state) == unexpanded {
		w.expandAt = true
		t.legalOf(w, w.State)
	}
	if t.opt.Rule == PoolRAVE && !t.poolTree && len(w.path) > 0 {
		t.fillPool(w, w.path[len(w.path)-1].node)
	}
	return true
}

// selectTree is the tree policy at a decision node (or one player's
// segment of a simultaneous node): selectEdge, except that under
// pool=tree a pool move replaces it with probability PoolP (selectPool).
func (t *Tree) selectTree(w *Walker, nd *node, first, cnt int32) int32 {
	if t.poolTree && w.Ctx.Rng.Float64() < t.opt.PoolP {
		if ei := t.selectPool(w, first, cnt, nil); ei != NilEdge {
			return ei
		}
	}
	return t.selectEdge(nd, first, cnt)
}

// selectPool is PoolRAVE's pool in tree selection (pool=tree), as study
// 001 describes it (section 4.1.4): "At the beginning of the selection
// step with a fixed probability p, one of the k best moves according to
// the RAVE value is chosen for further exploitation instead of using the
// normal tree policy." Read here as: at every node of the descent (each
// step of the selection phase, where the tree policy would choose), the
// caller flips the coin with p = PoolP, and on success this returns an
// edge drawn uniformly from the pool: the PoolK edges among cnt from first
// with the highest RAVE value x_RAVE, the AMAF mean (the "percentage of
// wins established with RAVE values"), counting only edges with AMAF data
// (and, when legal is not nil, whose action is in legal: SO-ISMCTS). It
// returns NilEdge when no edge qualifies; the tree policy then chooses.
// (The thesis's program drew its pool moves in the rollouts instead, as
// pool=rollout does, there from the moves with the most AMAF visits.)
func (t *Tree) selectPool(w *Walker, first, cnt int32, legal games.Mask) int32 {
	pool := t.topAMAF(w, first, cnt, legal)
	if len(pool) == 0 {
		return NilEdge
	}
	return pool[w.Ctx.Rng.IntN(len(pool))]
}

// topAMAF returns in w.order the at most PoolK edges among cnt from first
// with the highest AMAF mean, best first (ties keep arena order, which is
// random), skipping edges without AMAF visits and, when legal is not nil,
// edges whose action is not in legal.
func (t *Tree) topAMAF(w *Walker, first, cnt int32, legal games.Mask) []int32 {
	k := t.opt.PoolK
	pool, vals := w.order[:0], w.orderV[:0]
	for j := first; j < first+cnt; j++ {
		x := &t.a.ext[j]
		an := atomic.LoadInt32(&x.amafN)
		if an == 0 || (legal != nil && !legal.Has(t.a.edges[j].action)) {
			continue
		}
		v := amafMean(atomic.LoadInt64(&x.amafW), int(an))
		// insertion into the sorted top k
		pos := len(pool)
		if pos == k {
			if v <= vals[k-1] {
				continue
			}
			pos--
		} else {
			pool, vals = append(pool, 0), append(vals, 0)
		}
		for pos > 0 && vals[pos-1] < v {
			vals[pos], pool[pos] = vals[pos-1], pool[pos-1]
			pos--
		}
		vals[pos], pool[pos] = v, j
	}
	w.order, w.orderV = pool, vals
	return pool
}

// fillPool puts the PoolK actions with the best AMAF mean at node ni
// (visited at least once in AMAF) into the walker's rollout pool
// (pool=rollout).
func (t *Tree) fillPool(w *Walker, ni int32) {
	nd := &t.a.nodes[ni]
	if atomic.LoadUint32(&nd.state) != expanded || nd.player < 0 {
		return
	}
	pool := w.Ctx.Pool[:0]
	for _, j := range t.topAMAF(w, nd.firstEdge, nd.numEdges, nil) {
		pool = append(pool, t.a.edges[j].action)
	}
	w.Ctx.Pool = pool
}
