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
			// Decoupled selection: each player picks an edge of its own
			// segment; the joint action leads to its own child
			// (jointChild), so every node stands for one state and its
			// edges, made from that state, are legal whenever it is
			// reached.
			joint := w.Ctx.Joint
			var key uint64
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
				key = jointKey(key, ei-first, cnt)
			}
			s.(games.SimultaneousState).ApplyJoint(joint)
			if cur = t.jointChild(nd, key, s); cur == NilNode {
				// Arena full: evaluate this state without a node.
				if s.IsTerminal() {
					return t.terminalLeaf(w, NilNode)
				}
				return t.evalLeaf(w, NilNode)
			}
			continue
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

// Children of simultaneous nodes. Simultaneous-move MCTS as Lanctot,
// Lisý and Winands (2013, "Monte Carlo tree search in simultaneous move
// games with applications to Goofspiel") and Tak, Lanctot and Winands
// (2014, "Monte Carlo tree search variants for simultaneous move games")
// define it keeps a child per joint action: the state after (a_1, ..., a_n)
// is a function of the node's state and all the choices, and each
// player's decoupled bandit at the node chooses from its statistics over
// its own actions (the edge segments, unchanged). A single open-loop child
// shared by every joint action (as this package had until 2026-11) mixes
// the states that different joint actions lead to: in Sushi Go the hand a
// player receives depends on what its neighbour took, so 30% of the joint
// actions simulations chose below the first joint node named a card no
// longer in the hand. Information-set MCTS (Cowling, Powley and
// Whitehouse 2012) would instead keep the open-loop child and add edges as
// each state shows them, selecting among the legal ones with availability
// counts (ismcts.go); that is the right treatment where the state at a
// node is uncertain (a resampled deal every simulation), but here the
// tree's root is one fixed state (each determinization its own tree, or
// perfect information), so the state at every node is known exactly and
// the closed-loop child is exact: no statistic mixes different states, no
// choice is ever stale, and nothing is added to the selection loops. The
// cost is width: a joint node has up to prod |A_p| children instead of one.
//
// A node's children are a list of arena.links (key, child, next), its
// head in the first header edge's child field; a joint node has few
// distinct children visited (the bandits concentrate), and the lookup
// walks the list. Links are created lock-free (jointChild).

// jointKey extends key (the joint action's first players' choices) by the
// next player's: its edge at offset off in a segment of cnt edges
// (mixed radix, so a key names one joint action of the node; New checks
// that the product of the players' action counts fits in 64 bits).
func jointKey(key uint64, off, cnt int32) uint64 {
	return key*uint64(cnt) + uint64(off)
}

// jointChild returns the child of simultaneous node nd for the joint
// action key, creating it for s (the state after the joint action) when
// the node has none yet; NilNode when the arena is full. Safe for
// concurrent use: a new link is published by CAS on the list's head; when
// another goroutine published first, the links it added are searched
// before retrying, so a key is linked once (the losing node is wasted, as
// in newChild).
func (t *Tree) jointChild(nd *node, key uint64, s games.State) int32 {
	headp := &t.a.edges[nd.firstEdge].child
	head := atomic.LoadInt32(headp)
	if c := t.findJoint(head, NilEdge, key); c != NilNode {
		return c
	}
	li := t.a.newLink()
	if li == NilEdge {
		t.full.Store(true)
		return NilNode
	}
	ni, fresh := NilNode, false
	if t.tt != nil {
		ni = t.tt.lookup(t, s)
	}
	if ni == NilNode {
		if ni = t.a.newNode(playerOf(s)); ni == NilNode {
			t.full.Store(true)
			return NilNode
		}
		fresh = true
	}
	for {
		t.a.links[li] = jointLink{key: key, child: ni, next: head}
		if atomic.CompareAndSwapInt32(headp, head, li) {
			if fresh && t.tt != nil {
				t.tt.insert(t, s, ni)
			}
			return ni
		}
		h := atomic.LoadInt32(headp)
		if c := t.findJoint(h, head, key); c != NilNode {
			return c
		}
		head = h
	}
}

// findJoint returns the child linked for key in the list from link li up
// to (not including) link stop, or NilNode.
func (t *Tree) findJoint(li, stop int32, key uint64) int32 {
	for ; li != stop; li = t.a.links[li].next {
		if l := &t.a.links[li]; l.key == key {
			return l.child
		}
	}
	return NilNode
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
