package search

import (
	"github.com/canopy-go/canopy/games"
)

// reuseState remembers the previous root for tree reuse.
type reuseState struct {
	prev    games.State // previous root state (nil before the first search)
	scratch []games.State
	remap   []int32 // old node index -> new index during compaction
}

// maxReuseDepth bounds how many plies below the previous root a new root
// is looked for (our move plus up to 3 opponents, or a multi-action turn).
const maxReuseDepth = 8

func (r *reuseState) remember(t *Tree, s games.State) {
	if !t.opt.Reuse {
		return
	}
	if r.prev == nil {
		r.prev = t.game.NewInitialState()
	}
	s.CloneInto(r.prev)
}

// tryReuse looks for a node of the current tree whose state equals s, at
// depth s.MoveNumber()-prev.MoveNumber() below the root, following closed-
// loop edges (open-loop simultaneous children are not followed). States are
// compared by Zobrist hash, then by full notation. On success the subtree
// is compacted into the spare arena (the arenas swap roles) and becomes the
// tree; the transposition table, if any, is cleared (entries of the
// subtree are re-inserted lazily as new nodes; old ones are simply lost).
func (t *Tree) tryReuse(s games.State) bool {
	r := &t.reuse
	if r.prev == nil || t.root == NilNode {
		return false
	}
	d := s.MoveNumber() - r.prev.MoveNumber()
	if d < 0 || d > maxReuseDepth {
		return false
	}
	for len(r.scratch) <= d {
		r.scratch = append(r.scratch, t.game.NewInitialState())
	}
	r.prev.CloneInto(r.scratch[0])
	found := t.findState(t.root, 0, d, s)
	if found == NilNode {
		return false
	}
	if t.spare == nil {
		t.spare = takeArena(t.a.shape())
		if t.virtual {
			t.keepVirtualLosses()
		}
	}
	if len(r.remap) < len(t.a.nodes) {
		r.remap = make([]int32, len(t.a.nodes))
	}
	n := int(t.a.numNodes)
	for i := range n {
		r.remap[i] = NilNode
	}
	t.spare.reset()
	root := t.copyNode(found, t.spare)
	t.a, t.spare = t.spare, t.a
	t.root = root
	s.CloneInto(t.rootState)
	if t.tt != nil {
		t.tt.clear()
	}
	return true
}

func (t *Tree) findState(ni int32, depth, target int, s games.State) int32 {
	cur := t.reuse.scratch[depth]
	if depth == target {
		if cur.Hash() == s.Hash() && cur.String() == s.String() {
			return ni
		}
		return NilNode
	}
	nd := &t.a.nodes[ni]
	if nd.state != expanded || nd.player == games.SimultaneousPlayer {
		return NilNode
	}
	for i := nd.firstEdge; i < nd.firstEdge+nd.numEdges; i++ {
		e := &t.a.edges[i]
		if e.child == NilNode {
			continue
		}
		cur.CloneInto(t.reuse.scratch[depth+1])
		t.reuse.scratch[depth+1].Apply(e.action)
		if f := t.findState(e.child, depth+1, target, s); f != NilNode {
			return f
		}
	}
	return NilNode
}

// copyNode copies the subtree of node ni into dst and returns its new
// index (shared nodes of a DAG are copied once, via remap).
func (t *Tree) copyNode(ni int32, dst *arena) int32 {
	if m := t.reuse.remap[ni]; m != NilNode {
		return m
	}
	src := &t.a.nodes[ni]
	nj := dst.numNodes
	dst.numNodes++
	t.reuse.remap[ni] = nj
	dst.nodes[nj] = *src
	if src.state == deferred {
		fp := dst.numPri
		dst.numPri += src.numEdges
		copy(dst.pri[fp:fp+src.numEdges], t.a.pri[src.firstEdge:src.firstEdge+src.numEdges])
		dst.nodes[nj].firstEdge = fp
		return nj
	}
	if src.state != expanded {
		dst.nodes[nj].state = unexpanded
		dst.nodes[nj].firstEdge, dst.nodes[nj].numEdges = NilEdge, 0
		return nj
	}
	fe := dst.numEdges
	dst.numEdges += src.numEdges
	copy(dst.edges[fe:fe+src.numEdges], t.a.edges[src.firstEdge:src.firstEdge+src.numEdges])
	copy(dst.hot[fe:fe+src.numEdges], t.a.hot[src.firstEdge:src.firstEdge+src.numEdges])
	if len(dst.ext) > 0 {
		copy(dst.ext[fe:fe+src.numEdges], t.a.ext[src.firstEdge:src.firstEdge+src.numEdges])
	}
	if t.virtual {
		copy(dst.vl[fe:fe+src.numEdges], t.a.vl[src.firstEdge:src.firstEdge+src.numEdges])
	}
	dst.nodes[nj].firstEdge = fe
	if src.player == games.SimultaneousPlayer {
		// The children of the joint actions: a list of links (the first
		// header edge's child field holds its head), copied in reverse.
		head := NilEdge
		for li := t.a.edges[src.firstEdge].child; li != NilEdge; li = t.a.links[li].next {
			l := t.a.links[li]
			nl := dst.numLinks
			dst.numLinks++
			dst.links[nl] = jointLink{key: l.key, child: t.copyNode(l.child, dst), next: head}
			head = nl
		}
		dst.edges[fe].child = head
		return nj
	}
	for i := range src.numEdges {
		if c := t.a.edges[src.firstEdge+i].child; c != NilNode {
			dst.edges[fe+i].child = t.copyNode(c, dst)
		}
	}
	return nj
}
