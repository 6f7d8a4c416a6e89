package search

import (
	"sync/atomic"
	"unsafe"

	"github.com/canopy-go/canopy/games"
)

// Sentinels for arena indices.
const (
	// NilNode marks "no node": an edge whose child has not been created.
	NilNode int32 = -1
	// NilEdge marks "no edge".
	NilEdge int32 = -1
)

// Node expansion states (node.state). Transitions are
// unexpanded -> expanding -> expanded, by CAS (expanding) and then an
// atomic store (expanded); see Tree.expand.
const (
	unexpanded uint32 = iota
	expanding
	expanded
)

// valueScale is the fixed-point scale of the value sums: a value v in
// [-1, 1] is added as round(v*valueScale). With 2^24 units a sum of 2^31
// visits cannot overflow int64 and the rounding error per add is 3e-8.
// Integer sums make lock-free updates a single atomic add and keep results
// independent of the order of concurrent backups.
const valueScale = 1 << 24

// node is one state of the tree (24 bytes).
//
// Invariants: firstEdge/numEdges are written before state becomes
// expanded and never change afterwards (until the arena is reset); readers
// load state (atomic, acquire) before reading them. n counts the
// simulations whose path went through this node (the root included).
type node struct {
	firstEdge int32  // index of the first edge in Tree.edges
	numEdges  int32  // number of edges; at simultaneous nodes see simHeader
	n         int32  // visits (atomic when the tree is shared)
	state     uint32 // unexpanded, expanding or expanded (atomic)
	next      int32  // simultaneous nodes: the shared (open-loop) child, else NilNode
	player    int8   // mover: >= 0, or games.ChancePlayer / SimultaneousPlayer / TerminalPlayer
	_         [3]byte
}

// An edge (one action of a node) is split over two parallel arrays with
// the same index: edgeStats holds what every selection step reads (24
// bytes, the PUCT prior included, so a node's children share few cache
// lines and selection reads one edge record only), edge the rest (32
// bytes). 56 bytes per edge in all.
//
// w, w2 and amafW are fixed-point sums (valueScale) of the value of the
// player who chooses this edge (the node's mover; at simultaneous nodes the
// player owning the edge's segment). n and vloss count completed and
// in-flight visits. All counters are updated with atomic adds when the tree
// is searched by several goroutines, with plain adds otherwise.
type edgeStats struct {
	w     int64 // sum of values
	n     int32 // completed visits
	vloss int32 // virtual losses: visits selected but not yet backed up
	// prior is the PUCT prior, or the heuristic value H(s,a) for
	// progressive bias (written at expansion, before the node is
	// published; root noise rewrites it between searches).
	prior float32
	_     int32
}

type edge struct {
	w2     int64        // sum of squared values (kept for UCB1-Tuned only; ISMCTS: availability count)
	amafW  int64        // AMAF (all-moves-as-first) value sum (RAVE family)
	action games.Action // the action
	child  int32        // child node or NilNode (CAS from NilNode when created)
	amafN  int32        // AMAF visit count
}

// Sizes of the arena records, for documentation and benchmarks.
const (
	NodeBytes = int(unsafe.Sizeof(node{}))
	EdgeBytes = int(unsafe.Sizeof(edge{}) + unsafe.Sizeof(edgeStats{}))
)

// arena is the preallocated storage of a tree. Nodes and edges are handed
// out by atomic bump allocation and only reclaimed all at once (reset) or
// by compaction into another arena (tree reuse).
type arena struct {
	nodes    []node
	edges    []edge
	hot      []edgeStats // parallel to edges
	numNodes int32       // allocated nodes (atomic)
	numEdges int32       // allocated edges (atomic)
}

func newArena(maxNodes, maxEdges int) *arena {
	return &arena{nodes: make([]node, maxNodes), edges: make([]edge, maxEdges), hot: make([]edgeStats, maxEdges)}
}

func (a *arena) reset() {
	atomic.StoreInt32(&a.numNodes, 0)
	atomic.StoreInt32(&a.numEdges, 0)
}

// newNode allocates and initialises a node; it returns NilNode when the
// arena is full. The caller publishes the index (CAS into edge.child).
func (a *arena) newNode(player int) int32 {
	i := atomic.AddInt32(&a.numNodes, 1) - 1
	if int(i) >= len(a.nodes) {
		atomic.AddInt32(&a.numNodes, -1)
		return NilNode
	}
	a.nodes[i] = node{firstEdge: NilEdge, next: NilNode, player: int8(player)}
	return i
}

// newEdges reserves k consecutive edges; it returns NilEdge when full.
func (a *arena) newEdges(k int) int32 {
	i := atomic.AddInt32(&a.numEdges, int32(k)) - int32(k)
	if int(i)+k > len(a.edges) {
		atomic.AddInt32(&a.numEdges, -int32(k))
		return NilEdge
	}
	clear(a.hot[i : int(i)+k])
	return i
}

// Stats reports the size of a tree.
type Stats struct {
	Nodes, Edges int // allocated records
	Bytes        int // bytes in use: Nodes*NodeBytes + Edges*EdgeBytes
	// ExpandedNodes is the number of nodes with edges.
	ExpandedNodes int
}

func (a *arena) stats() Stats {
	nn := int(atomic.LoadInt32(&a.numNodes))
	ne := int(atomic.LoadInt32(&a.numEdges))
	st := Stats{Nodes: nn, Edges: ne, Bytes: nn*NodeBytes + ne*EdgeBytes}
	for i := range nn {
		if a.nodes[i].state == expanded {
			st.ExpandedNodes++
		}
	}
	return st
}

// Simultaneous nodes (decoupled selection) store one segment of edges per
// player. The node's first NumPlayers edges are headers whose action field
// holds the length of player p's segment; the segments follow in player
// order. Header edges carry no statistics.
func simSegment(a *arena, nd *node, p, players int) (first, count int32) {
	first = nd.firstEdge + int32(players)
	for q := 0; q < p; q++ {
		first += int32(a.edges[nd.firstEdge+int32(q)].action)
	}
	return first, int32(a.edges[nd.firstEdge+int32(p)].action)
}
