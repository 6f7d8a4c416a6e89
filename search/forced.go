package search

import (
	"fmt"
	"sync/atomic"

	"github.com/canopy-go/canopy/games"
)

// Forced root actions. Gumbel root search (Danihelka, Guez, Schrittwieser
// and Silver, "Policy improvement by planning with Gumbel", ICLR 2022)
// chooses the root action of every simulation itself, by sequential
// halving over a sampled set of actions, and leaves the selection below
// the root to the tree's rule. A driver does so with SelectLeafForced in
// place of SelectLeaf; Backup is unchanged.

// SelectLeafForced is SelectLeaf with the root's action forced to a: the
// first step takes the root edge of a (adding its virtual loss like any
// other step) and the descent continues below it by the tree's selection
// rule, expanding and creating nodes as SelectLeaf does. The walker's
// path, leaf and values are then exactly what SelectLeaf would leave had
// the rule chosen a at the root, so Backup follows as usual.
//
// The root must be an expanded decision node (a player to move: not a
// chance, simultaneous or terminal root) of a tree searched without
// SO-ISMCTS, and a one of its actions (RootStats lists them); otherwise
// SelectLeafForced panics, as these are errors of the driver.
// It is safe for concurrent use under the same conditions as SelectLeaf.
func (t *Tree) SelectLeafForced(w *Walker, a games.Action) (needsEval bool) {
	ei := t.rootEdge(a)
	t.beginLeaf(w)
	root := t.root
	pl := int32(t.a.nodes[root].player)
	w.path = append(w.path, step{node: root, edge: ei, player: pl, first: true})
	t.addVloss(ei, 1)
	if w.Ctx.Record {
		w.Ctx.Trace = append(w.Ctx.Trace, Traced{pl, a})
	}
	s := w.State
	s.Apply(a)
	childp := &t.a.edges[ei].child
	child := atomic.LoadInt32(childp)
	if child == NilNode {
		if child = t.newChild(childp, s); child == NilNode {
			// Arena full: evaluate this state without a node.
			if s.IsTerminal() {
				return t.terminalLeaf(w, NilNode)
			}
			return t.evalLeaf(w, NilNode)
		}
	}
	return t.descend(w, child)
}

// rootEdge returns the index of the root edge of action a, checking
// SelectLeafForced's preconditions.
func (t *Tree) rootEdge(a games.Action) int32 {
	if t.ismcts {
		panic("search: SelectLeafForced on an SO-ISMCTS tree (the root is resampled every simulation)")
	}
	if t.root == NilNode {
		panic("search: SelectLeafForced before Prepare")
	}
	nd := &t.a.nodes[t.root]
	if nd.player < 0 || atomic.LoadUint32(&nd.state) != expanded {
		panic(fmt.Sprintf("search: SelectLeafForced needs an expanded root with a player to move (root player %d)", nd.player))
	}
	for ei := nd.firstEdge; ei < nd.firstEdge+nd.numEdges; ei++ {
		if t.a.edges[ei].action == a {
			return ei
		}
	}
	panic(fmt.Sprintf("search: SelectLeafForced: action %d is not a root action", a))
}
