package search

import (
	"math"
	"sync"

	"github.com/canopy-go/canopy/games"
)

// transTable maps states to nodes so that transpositions share one node
// (the tree becomes a DAG; backups follow the simulation's path, so each
// parent keeps its own edge statistics while the shared node's children
// pool their statistics).
//
// Keys: the state's 64-bit Zobrist Hash selects the slot. Collision safety:
// an entry matches only when the Zobrist hash, the move number, the player
// to move and a second, independent 64-bit FNV-1a hash of every player's
// observation tensor all agree. (The notation cannot serve: in games such
// as connect4 it is the move list, which differs between transpositions.)
// The observations determine the position in perfect-information games;
// hidden-information games should not use tt=true, as states with the same
// observations but different hidden parts would merge. Access is
// serialised by a mutex (the table is optional and off by default); it
// does not allocate.
type transTable struct {
	mu      sync.Mutex
	entries []ttEntry
	mask    uint64
	obs     []float32 // observation scratch (under mu)
}

type ttEntry struct {
	hash, check uint64
	move        int32
	player      int32
	node        int32 // NilNode = empty
}

// ttSize is the number of entries of the table of a tree of maxNodes
// nodes: a power of two, at least twice the nodes.
func ttSize(maxNodes int) int {
	n := 1
	for n < 2*maxNodes {
		n <<= 1
	}
	return n
}

func newTransTable(maxNodes int) *transTable {
	n := ttSize(maxNodes)
	tt := &transTable{entries: make([]ttEntry, n), mask: uint64(n - 1)}
	tt.clear()
	return tt
}

func (tt *transTable) clear() {
	for i := range tt.entries {
		tt.entries[i] = ttEntry{node: NilNode}
	}
}

// checkHash is FNV-1a over the float bits of all players' observations.
// Called with mu held.
func (tt *transTable) checkHash(s games.State) uint64 {
	g := s.Game()
	if tt.obs == nil {
		tt.obs = make([]float32, games.ObservationSize(g))
	}
	h := uint64(14695981039346656037)
	for p := range g.NumPlayers() {
		s.Observation(p, tt.obs)
		for _, f := range tt.obs {
			h ^= uint64(math.Float32bits(f))
			h *= 1099511628211
		}
	}
	return h | 1 // never 0 (0 means "not computed")
}

// lookup returns the node stored for s, or NilNode.
func (tt *transTable) lookup(t *Tree, s games.State) int32 {
	h := s.Hash()
	var check uint64
	tt.mu.Lock()
	defer tt.mu.Unlock()
	for i := h & tt.mask; ; i = (i + 1) & tt.mask {
		e := &tt.entries[i]
		if e.node == NilNode {
			return NilNode
		}
		if e.hash == h && e.move == int32(s.MoveNumber()) && e.player == int32(playerOf(s)) {
			if check == 0 {
				check = tt.checkHash(s)
			}
			if e.check == check {
				return e.node
			}
		}
	}
}

// insert records node ni for s (a full table drops the entry).
func (tt *transTable) insert(t *Tree, s games.State, ni int32) {
	h := s.Hash()
	tt.mu.Lock()
	defer tt.mu.Unlock()
	e := ttEntry{hash: h, check: tt.checkHash(s), move: int32(s.MoveNumber()), player: int32(playerOf(s)), node: ni}
	for i, probes := h&tt.mask, 0; probes < len(tt.entries)/2; i, probes = (i+1)&tt.mask, probes+1 {
		if tt.entries[i].node == NilNode {
			tt.entries[i] = e
			return
		}
	}
}
