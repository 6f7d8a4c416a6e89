package search

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"sync"
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
// atomic store (expanded); see Tree.expand. A PUCT leaf evaluated with
// priors may instead go unexpanded -> expanding -> deferred: its priors
// are kept (arena.pri) and its edges made only at its next visit,
// deferred -> expanding -> expanded (see Tree.deferEdges).
const (
	unexpanded uint32 = iota
	expanding
	expanded
	deferred
)

// valueScale is the fixed-point scale of the value sums: a value v in
// [-1, 1] is added as round(v*valueScale). With 2^24 units a sum of 2^31
// visits cannot overflow int64 and the rounding error per add is 3e-8.
// Integer sums make lock-free updates a single atomic add and keep results
// independent of the order of concurrent backups.
const valueScale = 1 << 24

// node is one state of the tree (20 bytes).
//
// Invariants: firstEdge/numEdges are written before state becomes
// expanded and never change afterwards (until the arena is reset); readers
// load state (atomic, acquire) before reading them. While state is
// deferred they locate the node's stored priors in arena.pri instead
// (rewritten when the node is expanded). n counts the
// simulations whose path went through this node (the root included). The
// children of a simultaneous node, one per joint action taken, are a list
// of arena.links whose head is its first header edge's child field
// (simSegment, jointChild), so that no node carries a field only
// simultaneous nodes use.
type node struct {
	firstEdge int32  // index of the first edge in Tree.edges
	numEdges  int32  // number of edges; at simultaneous nodes see simSegment
	n         int32  // visits (atomic when the tree is shared)
	state     uint32 // unexpanded, expanding or expanded (atomic)
	player    int8   // mover: >= 0, or games.ChancePlayer / SimultaneousPlayer / TerminalPlayer
}

// An edge (one action of a node) is split over parallel arrays with the
// same index: edgeStats holds what every selection step reads (16 bytes,
// the PUCT prior included, so that four children share a cache line and
// selection reads one edge record only), edge the action and child the
// descent follows (8 bytes), edgeExt the statistics only some rules keep
// (24 bytes, allocated only for trees that use them: see needsExt), and
// arena.vl the virtual losses, allocated only for trees with more than one
// simulation in flight (see Tree.virtual). 24 bytes per edge for UCT and
// PUCT trees with one walker, 28 with several, 48 or 52 for the others.
//
// w, w2 and amafW are fixed-point sums (valueScale) of the value of the
// player who chooses this edge (the node's mover; at simultaneous nodes the
// player owning the edge's segment). n and the virtual losses count
// completed and in-flight visits. All counters are updated with atomic
// adds when the tree is searched by several goroutines, with plain adds
// otherwise.
type edgeStats struct {
	w int64 // sum of values
	n int32 // completed visits
	// prior is the PUCT prior, or the heuristic value H(s,a) min-max
	// scaled to [0, 1] among the node's (or the player's segment's)
	// actions for progressive bias (written at expansion, before the node is
	// published; root noise rewrites it between searches).
	prior float32
}

type edge struct {
	action games.Action // the action
	child  int32        // child node or NilNode (CAS from NilNode when created)
}

// edgeExt holds the per-edge statistics of the rules that need more than
// edgeStats (needsExt).
type edgeExt struct {
	w2    int64 // sum of squared values (kept when Tree.squares only); simsel=exp3/rm's bandit sum
	amafW int64 // AMAF (all-moves-as-first) value sum (RAVE family); simsel=exp3/rm's cumulative strategy
	amafN int32 // AMAF visit count
	// avail is the availability count of SO-ISMCTS trees: how many times
	// the edge was legal when its node was visited (ismcts.go); 0 in
	// other trees.
	avail int32
}

// jointLink is one child of a simultaneous node: the node reached by the
// joint action whose key (jointKey) is key, and the next link of the same
// node's list (NilEdge at its end). Links are written before they are
// published (CAS into the list's head) and never change afterwards.
type jointLink struct {
	key   uint64
	child int32
	next  int32
}

// Sizes of the arena records, for documentation and benchmarks: a node,
// an edge of any tree, the extension of an edge in trees whose rule
// keeps one (needsExt), and a joint-action link (trees of games with
// simultaneous moves: one per child of a simultaneous node).
const (
	NodeBytes      = int(unsafe.Sizeof(node{}))
	EdgeBytes      = int(unsafe.Sizeof(edge{}) + unsafe.Sizeof(edgeStats{}))
	EdgeExtBytes   = int(unsafe.Sizeof(edgeExt{}))
	JointLinkBytes = int(unsafe.Sizeof(jointLink{}))
)

// arena is the preallocated storage of a tree. Nodes and edges are handed
// out by atomic bump allocation and only reclaimed all at once (reset) or
// by compaction into another arena (tree reuse).
type arena struct {
	nodes []node
	edges []edge
	hot   []edgeStats // parallel to edges
	ext   []edgeExt   // parallel to edges, or empty when the tree keeps no extension
	// vl counts each edge's virtual losses (visits selected but not yet
	// backed up), parallel to edges, or is empty while the tree has one
	// walker: a lone simulation never selects among edges it has itself
	// taken, so it needs none (Tree.virtual).
	vl []int32
	// pri holds the priors of deferred nodes (Tree.deferEdges), each
	// node's in the order of its legal actions; empty in trees that do
	// not defer.
	pri []float32
	// links holds the children of simultaneous nodes, one per joint
	// action taken (jointChild); as many as nodes in trees of games with
	// simultaneous moves, empty in the others.
	links    []jointLink
	numNodes int32 // allocated nodes (atomic)
	numEdges int32 // allocated edges (atomic)
	numPri   int32 // allocated pri entries (atomic)
	numLinks int32 // allocated links (atomic)
}

// newArena returns an arena of maxNodes nodes and maxEdges edges, with
// edge extensions when ext is set, virtual-loss counts when vl is, room
// for deferred priors when pri is and maxNodes joint-action links when
// links is.
func newArena(maxNodes, maxEdges int, ext, vl, pri, links bool) *arena {
	a := &arena{nodes: make([]node, maxNodes), edges: make([]edge, maxEdges), hot: make([]edgeStats, maxEdges)}
	if links {
		a.links = make([]jointLink, maxNodes)
	}
	if ext {
		a.ext = make([]edgeExt, maxEdges)
	}
	if vl {
		a.vl = make([]int32, maxEdges)
	}
	if pri {
		a.pri = make([]float32, maxEdges)
	}
	return a
}

// arenaShape is what newArena's arguments make of an arena, virtual
// losses aside (a tree adds them when it needs them: keepVirtualLosses).
type arenaShape struct {
	nodes, edges    int
	ext, pri, links bool
}

func (a *arena) shape() arenaShape {
	return arenaShape{len(a.nodes), len(a.edges), len(a.ext) > 0, len(a.pri) > 0, len(a.links) > 0}
}

// spareArenas holds the arenas of released trees (Tree.Release), a
// sync.Pool per shape, for the next tree of the same shape. The Go runtime
// zeroes all of a new slice's memory, and reused heap memory is touched
// to do it: a tree of 66,000 simulations in four-player Tetris Link (128
// edges a node reserved) took about 0.2 s to make, 11% of an arena's CPU
// against three such UCT agents, which are made anew for every game. A
// tree needs none of it zeroed: every record is initialised when it is
// handed out (newNode, newEdges and their callers), as after reset.
var spareArenas sync.Map // arenaShape -> *sync.Pool of *arena

// takeArena returns a released arena of shape s, reset, or a new one.
func takeArena(s arenaShape) *arena {
	if p, ok := spareArenas.Load(s); ok {
		if a, ok := p.(*sync.Pool).Get().(*arena); ok {
			a.reset()
			return a
		}
	}
	return newArena(s.nodes, s.edges, s.ext, false, s.pri, s.links)
}

// releaseArena makes a available to takeArena; its virtual losses are
// dropped (a tree that needs them allocates them zeroed).
func releaseArena(a *arena) {
	a.vl = nil
	p, _ := spareArenas.LoadOrStore(a.shape(), new(sync.Pool))
	p.(*sync.Pool).Put(a)
}

// needsExt reports whether trees with options o keep edge extensions:
// squared sums (UCB1-Tuned, amafexplore=ucb1tuned), AMAF statistics (the
// RAVE family), bandit sums (simsel=exp3/rm) or availability counts
// (SO-ISMCTS).
func needsExt(o *Options) bool {
	return o.Rule.keepsSquares() || o.Rule.usesAMAF() || o.SimSel != SimUCB || o.ISMCTS
}

func (a *arena) reset() {
	atomic.StoreInt32(&a.numNodes, 0)
	atomic.StoreInt32(&a.numEdges, 0)
	atomic.StoreInt32(&a.numPri, 0)
	atomic.StoreInt32(&a.numLinks, 0)
}

// newLink reserves one joint-action link; it returns NilEdge when full.
func (a *arena) newLink() int32 {
	i := atomic.AddInt32(&a.numLinks, 1) - 1
	if int(i) >= len(a.links) {
		atomic.AddInt32(&a.numLinks, -1)
		return NilEdge
	}
	return i
}

// newPri reserves k consecutive prior entries; it returns NilEdge when
// full.
func (a *arena) newPri(k int) int32 {
	i := atomic.AddInt32(&a.numPri, int32(k)) - int32(k)
	if int(i)+k > len(a.pri) {
		atomic.AddInt32(&a.numPri, -int32(k))
		return NilEdge
	}
	return i
}

// newNode allocates and initialises a node; it returns NilNode when the
// arena is full. The caller publishes the index (CAS into edge.child).
func (a *arena) newNode(player int) int32 {
	i := atomic.AddInt32(&a.numNodes, 1) - 1
	if int(i) >= len(a.nodes) {
		atomic.AddInt32(&a.numNodes, -1)
		return NilNode
	}
	a.nodes[i] = node{firstEdge: NilEdge, player: int8(player)}
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
	if len(a.ext) > 0 {
		clear(a.ext[i : int(i)+k])
	}
	if len(a.vl) > 0 {
		clear(a.vl[i : int(i)+k])
	}
	return i
}

// Stats reports the size of a tree.
type Stats struct {
	Nodes, Edges int // allocated records
	// Priors counts the priors stored for deferred leaves (4 bytes each).
	Priors int
	// Links counts the joint-action links of simultaneous nodes
	// (JointLinkBytes each).
	Links int
	Bytes int // bytes in use: Nodes*NodeBytes + Edges*EdgeBytes + 4*Priors + Links*JointLinkBytes (+ Edges*EdgeExtBytes with extensions, + 4*Edges with virtual losses)
	// ExpandedNodes is the number of nodes with edges.
	ExpandedNodes int
}

func (a *arena) stats() Stats {
	nn := int(atomic.LoadInt32(&a.numNodes))
	ne := int(atomic.LoadInt32(&a.numEdges))
	np := int(atomic.LoadInt32(&a.numPri))
	nl := int(atomic.LoadInt32(&a.numLinks))
	st := Stats{Nodes: nn, Edges: ne, Priors: np, Links: nl, Bytes: nn*NodeBytes + ne*EdgeBytes + 4*np + nl*JointLinkBytes}
	if len(a.ext) > 0 {
		st.Bytes += ne * EdgeExtBytes
	}
	if len(a.vl) > 0 {
		st.Bytes += ne * 4 // virtual losses
	}
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
// order. Header edges carry no statistics; the first one's child field
// holds the head of the node's list of children (an index into
// arena.links, NilEdge while it has none: jointChild).
func simSegment(a *arena, nd *node, p, players int) (first, count int32) {
	first = nd.firstEdge + int32(players)
	for q := 0; q < p; q++ {
		first += int32(a.edges[nd.firstEdge+int32(q)].action)
	}
	return first, int32(a.edges[nd.firstEdge+int32(p)].action)
}

// Tree is one search tree over a game. A Tree is driven either by Search
// (synchronous, Options.Threads goroutines) or by a caller that runs the
// pipeline itself through SelectLeaf and Backup, one Walker per leaf in
// flight. SelectLeaf and Backup are safe for concurrent use with distinct
// Walkers once the tree has been marked shared (SetShared(true); Search
// does it for Threads > 1); Prepare, Search and the result methods must
// not run concurrently with them.
type Tree struct {
	game    games.Game
	opt     Options
	players int
	a       *arena
	spare   *arena // compaction target for tree reuse (allocated on first use)

	root      int32
	rootState games.State // owned by the tree
	shared    bool        // atomic adds on statistics
	// virtual: the arenas keep virtual losses (arena.vl), which the tree
	// needs once it has a second walker (NewWalker sets it); until then
	// the selection loops read zeroVL in their place.
	virtual  bool
	made     int  // walkers made by NewWalker
	plainUCT bool // Rule is UCT and fastSel (selectUCTPlain when unshared)
	// fastSel: no progressive bias, rewards=01 or pbform=study003, so
	// that UCT and PUCT take their table-driven loops (selectEdge).
	fastSel bool
	// squares: backups keep the squared value sums in edgeExt.w2 (UCB1-Tuned,
	// and the RAVE family under amafexplore=ucb1tuned).
	squares bool
	// poolTree: PoolRAVE plays its pool moves in tree selection
	// (pool=tree, selectPool).
	poolTree bool
	// deferring: PUCT leaves evaluated with priors keep them and get their
	// edges at their next visit (defers, Tree.deferEdges).
	deferring bool
	form      scoreForm // the options' forms as flags (edgeScore)

	full    atomic.Bool  // an allocation failed since the last Prepare
	claimed atomic.Int64 // simulations started in the current Search
	sims    int64        // simulations backed up since the tree was made (atomic when shared)
	rng     *rand.Rand   // root noise and final-move sampling

	walkers []*Walker // walkers[i] is used by Search's goroutine i
	seed    uint64
	srcs    []*rand.PCG // Reset's sources: rng's, then walkers[i]'s (recycle.go)
	noise   []float64   // addNoise scratch

	reuse reuseState // tree-reuse bookkeeping (reuse.go)

	// SO-ISMCTS (ismcts.go): every simulation starts from a fresh
	// determinization of obsRoot for observer.
	ismcts   bool
	observer int
	obsRoot  games.State
	tt       *transTable

	// given holds the root priors handed to PrepareWith for the duration
	// of that call (nil otherwise).
	given []float32
	ones  []float32 // uniform priors for PrepareWith(s, nil)
}

// arenaSize is the capacity of the arena of a tree for g with the
// normalized options o: MaxNodes and MaxEdges, or their defaults.
func arenaSize(g games.Game, o *Options) (maxNodes, maxEdges int) {
	maxNodes = o.MaxNodes
	if maxNodes <= 0 {
		maxNodes = 1 << 20
		if o.Sims > 0 && o.Time == 0 {
			maxNodes = min(maxNodes, o.Sims+16)
		}
	}
	maxEdges = o.MaxEdges
	if maxEdges <= 0 {
		// Room for every node to be expanded with up to 128 actions; the
		// memory is virtual until touched.
		maxEdges = min(maxNodes*min(g.NumActions()+g.NumPlayers(), 128), 1<<24)
	}
	return maxNodes, maxEdges
}

// TreeBytes is the memory a tree for g with options o allocates at
// most, in bytes: its arena (nodes, edges with their statistics, the
// per-edge extensions of the rules that keep them, deferred priors, a
// joint-action link per node in games with simultaneous moves), the
// transposition table with TT, the spare arena and remap table of
// subtree reuse with Reuse (allocated at the first reuse), and, when
// walkers > 1 walk the tree at once, the virtual losses. It is what
// memory guards multiply by the number of trees; walkers, states and
// evaluator scratch are small beside it and not counted. An error is
// New's for the same options.
func (o Options) TreeBytes(g games.Game, walkers int) (int64, error) {
	if err := o.normalize(); err != nil {
		return 0, err
	}
	nodes, edges := arenaSize(g, &o)
	n, e := int64(nodes), int64(edges)
	perEdge := int64(EdgeBytes)
	if needsExt(&o) {
		perEdge += int64(EdgeExtBytes)
	}
	if defers(&o) {
		perEdge += 4 // a deferred prior per edge
	}
	if walkers > 1 || g.NumActions()*g.NumPlayers()+g.NumPlayers() > len(zeroVL) {
		perEdge += 4 // a virtual loss per edge
	}
	perNode := int64(NodeBytes)
	if simultaneous(g) {
		perNode += int64(JointLinkBytes)
	}
	arena := n*perNode + e*perEdge
	total := arena
	if o.Reuse {
		total += arena + 4*n // the spare arena and the remap table
	}
	if o.TT {
		total += int64(unsafe.Sizeof(ttEntry{})) * int64(ttSize(nodes))
	}
	return total, nil
}

// simultaneous reports whether g has simultaneous moves (its trees keep
// joint-action links).
func simultaneous(g games.Game) bool { return g.Type().Dynamics == games.Simultaneous }

// jointKeyFits reports whether every joint action of g has a distinct
// jointKey: the product of the players' action counts fits in 64 bits.
func jointKeyFits(g games.Game) bool {
	prod := uint64(1)
	for range g.NumPlayers() {
		hi, lo := bits.Mul64(prod, uint64(g.NumActions()))
		if hi != 0 {
			return false
		}
		prod = lo
	}
	return true
}

// New returns a tree for g with options o (see DefaultOptions) and a seed
// from which every random choice derives.
func New(g games.Game, o Options, seed uint64) (*Tree, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	if err := CheckObjective(g, o.Objective); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if simultaneous(g) && !jointKeyFits(g) {
		return nil, fmt.Errorf("search: %s has %d players of %d actions each: too many joint actions to key a simultaneous node's children by (at most 2^64)", g.Spec(), g.NumPlayers(), g.NumActions())
	}
	maxNodes, maxEdges := arenaSize(g, &o)
	t := &Tree{
		game: g, opt: o, players: g.NumPlayers(),
		a:         takeArena(arenaShape{maxNodes, maxEdges, needsExt(&o), defers(&o), simultaneous(g)}),
		rootState: g.NewInitialState(),
		rng:       games.NewRand(seed),
		seed:      seed,
		root:      NilNode,
	}
	t.fastSel = o.Bias == 0 && !o.Rewards01 && o.PBForm != PBUCTLn1
	t.plainUCT = o.Rule == UCT && t.fastSel
	t.squares = o.Rule.keepsSquares() || (o.Rule.usesAMAF() && o.AmafExplore == AmafUCB1Tuned)
	t.poolTree = o.Rule == PoolRAVE && o.PoolAt == PoolInTree
	t.form = formOf(&t.opt)
	t.deferring = defers(&o)
	if maxNodeEdges := g.NumActions()*t.players + t.players; maxNodeEdges > len(zeroVL) {
		t.keepVirtualLosses()
	}
	if o.TT {
		t.tt = newTransTable(maxNodes)
	}
	return t, nil
}

// Options returns the tree's options (defaults filled in).
func (t *Tree) Options() Options { return t.opt }

// Release hands the tree's arenas to trees made later for the same game
// sizes and options (New), which then skip the runtime's zeroing of a new
// arena; t must not be used afterwards. Releasing is optional: a tree that
// is dropped is collected as usual. Release twice is harmless.
func (t *Tree) Release() {
	for _, a := range []*arena{t.a, t.spare} {
		if a != nil {
			releaseArena(a)
		}
	}
	t.a, t.spare = nil, nil
}

// SetShared switches statistics updates to atomic adds (true) for
// concurrent SelectLeaf/Backup callers. Call it between searches.
func (t *Tree) SetShared(on bool) { t.shared = on }

// Stats reports the arena usage.
func (t *Tree) Stats() Stats { return t.a.stats() }

// Full reports whether an allocation failed since the last Prepare.
func (t *Tree) Full() bool { return t.full.Load() }

// step is one edge taken by a simulation.
type step struct {
	node, edge int32
	player     int32 // whose value the edge accumulates; -1 for chance edges
	first      bool  // the first step at its node (counts the node visit)
	// bandit marks a step chosen by simsel=exp3/rm at a simultaneous node;
	// prob is the probability with which the edge was sampled (the
	// importance weight of its reward in backupSim).
	bandit bool
	prob   float32
}

// Walker carries one simulation through the pipeline: the path, the leaf
// state and scratch space. A Walker is used by one goroutine at a time; a
// batching driver keeps one per leaf in flight.
type Walker struct {
	t *Tree
	// State is the leaf's state after SelectLeaf. An evaluator may modify
	// it; Backup does not read it.
	State games.State
	// Value receives the evaluation (one entry per player, in [-1, 1]).
	Value []float64
	// Priors receives an evaluator's policy, indexed by action id. In
	// simultaneous-move games it has NumPlayers blocks of NumActions:
	// at a simultaneous leaf player q's policy over its own actions
	// (LegalFor(q)) goes to Priors[q*NumActions+a] (decoupled PUCT: each
	// player's edge segment takes its own block); elsewhere only the
	// first block is read.
	Priors []float32
	// Ctx is the evaluator scratch space.
	Ctx *EvalContext

	path     []step
	leaf     int32 // leaf node, or NilNode when the arena was full
	terminal bool  // the leaf is terminal; Value holds its returns
	expandAt bool  // Backup expands the leaf (ExpandVisits == 0)

	legal    games.Mask     // leaf's legal actions (current player)
	simLegal []games.Mask   // leaf's legal actions per player (simultaneous)
	hprior   []float32      // heuristic priors of the leaf (progressive bias)
	simHP    [][]float32    // per player: heuristic priors at a simultaneous leaf (progressive bias)
	hraw     []float64      // heuristicPriors scratch: raw heuristic values by action
	perm     []int32        // expansion scratch: edge order (drawSwaps)
	acts     []games.Action // expansion scratch: shuffled actions
	amaf     []games.Mask   // AMAF: actions each player played below a node
	order    []int32        // selectPool scratch: the pool's edges
	orderV   []float64      // selectPool scratch: their AMAF means
	simX     []float64      // simsel=exp3/rm scratch: a segment's sums
	simRho   []float64      // simsel=exp3/rm scratch: a segment's strategy
}

// NewWalker returns a walker with its own random stream. It must not run
// concurrently with SelectLeaf or Backup on the tree: the tree's second
// walker makes it keep virtual losses (Tree.virtual).
func (t *Tree) NewWalker(seed uint64) *Walker {
	if t.made++; t.made == 2 {
		t.keepVirtualLosses()
	}
	g := t.game
	n := g.NumActions()
	w := &Walker{
		t: t, State: g.NewInitialState(),
		Value:  make([]float64, t.players),
		Priors: make([]float32, priorsLen(g)),
		Ctx:    newEvalContext(g, games.NewRand(seed)),
		path:   make([]step, 0, g.MaxGameLength()*t.players+8),
		legal:  games.NewMask(n),
		hprior: make([]float32, n),
		perm:   make([]int32, n+t.players),
		acts:   make([]games.Action, n),
		order:  make([]int32, 0, max(t.opt.PoolK, 1)),
		orderV: make([]float64, 0, max(t.opt.PoolK, 1)),
		simX:   make([]float64, n),
		simRho: make([]float64, n),
	}
	w.Ctx.PoolP = t.opt.PoolP
	w.Ctx.win = t.opt.Objective == ObjectiveWin
	for range t.players {
		w.simLegal = append(w.simLegal, games.NewMask(n))
		w.amaf = append(w.amaf, games.NewMask(n))
	}
	if t.opt.Bias != 0 {
		w.hraw = make([]float64, n)
		for range t.players {
			w.simHP = append(w.simHP, make([]float32, n))
		}
	}
	return w
}

// priorsLen is the length of a walker's Priors for game g: NumActions, or
// one block of NumActions per player in simultaneous-move games.
func priorsLen(g games.Game) int {
	if g.Type().Dynamics == games.Simultaneous {
		return g.NumPlayers() * g.NumActions()
	}
	return g.NumActions()
}

// Leaf returns the leaf node of the walker's last SelectLeaf (NilNode when
// the arena was full) and whether it is terminal.
func (w *Walker) Leaf() (node int32, terminal bool) { return w.leaf, w.terminal }

// PendingVisits returns, for a leaf that the next Backup would expand
// (a tree expanding at evaluation, ExpandVisits 0), the number of
// simulations that have ended at that leaf before this one; -1 for any
// other leaf (terminal, without a node, or not expanded by Backup). An
// evaluator that values such a leaf cheaply on its first visits and
// calls the network only later (engine's netvisits option) reads it before
// KeepLeaf.
func (w *Walker) PendingVisits() int {
	if !w.expandAt || w.leaf == NilNode {
		return -1
	}
	return int(atomic.LoadInt32(&w.t.a.nodes[w.leaf].n))
}

// KeepLeaf makes the next Backup leave the walker's leaf unexpanded (no
// edges, no priors): its value is backed up and the node counts the
// visit, and a later simulation that ends there evaluates it again.
func (w *Walker) KeepLeaf() { w.expandAt = false }

// ---- statistics helpers (atomic only when shared) ----

// keepVirtualLosses gives the arenas their virtual-loss counts (zero: no
// simulation is in flight when a walker is made).
func (t *Tree) keepVirtualLosses() {
	t.virtual = true
	for _, a := range []*arena{t.a, t.spare} {
		if a != nil && len(a.vl) == 0 {
			a.vl = make([]int32, len(a.edges))
		}
	}
}

// zeroVL stands for the virtual losses of a node's edges in trees that
// keep none (read only). New makes trees whose nodes can have more edges
// keep virtual losses from the start.
var zeroVL [1 << 14]int32

// vlOf returns the virtual losses of the cnt edges from first: the
// arena's counts, or zeros while the tree keeps none.
func (t *Tree) vlOf(first, cnt int32) []int32 {
	if t.virtual {
		return t.a.vl[first : first+cnt]
	}
	return zeroVL[:cnt]
}

// addVloss adds d (+1 when a simulation takes edge ei, -1 when it is
// backed up) to the edge's virtual losses, if the tree keeps them.
func (t *Tree) addVloss(ei, d int32) {
	if t.virtual {
		t.add32(&t.a.vl[ei], d)
	}
}

func (t *Tree) add32(p *int32, d int32) {
	if t.shared {
		atomic.AddInt32(p, d)
	} else {
		*p += d
	}
}

func (t *Tree) add64(p *int64, d int64) {
	if t.shared {
		atomic.AddInt64(p, d)
	} else {
		*p += d
	}
}
