package search

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/canopy-go/canopy/games"
)

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
	plainUCT  bool        // Rule is UCT without progressive bias (selectUCTPlain when unshared)

	full    atomic.Bool  // an allocation failed since the last Prepare
	claimed atomic.Int64 // simulations started in the current Search
	sims    int64        // simulations backed up since the tree was made (atomic when shared)
	rng     *rand.Rand   // root noise and final-move sampling

	walkers []*Walker // walkers[i] is used by Search's goroutine i
	seed    uint64

	reuse reuseState // tree-reuse bookkeeping (reuse.go)

	// SO-ISMCTS (ismcts.go): every simulation starts from a fresh
	// determinization of obsRoot for observer.
	ismcts   bool
	observer int
	obsRoot  games.State
	tt       *transTable
}

// New returns a tree for g with options o (see DefaultOptions) and a seed
// from which every random choice derives.
func New(g games.Game, o Options, seed uint64) (*Tree, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	maxNodes := o.MaxNodes
	if maxNodes <= 0 {
		maxNodes = 1 << 20
		if o.Sims > 0 && o.Time == 0 {
			maxNodes = min(maxNodes, o.Sims+16)
		}
	}
	maxEdges := o.MaxEdges
	if maxEdges <= 0 {
		// Room for every node to be expanded with up to 128 actions; the
		// memory is virtual until touched.
		maxEdges = min(maxNodes*min(g.NumActions()+g.NumPlayers(), 128), 1<<24)
	}
	t := &Tree{
		game: g, opt: o, players: g.NumPlayers(),
		a:         newArena(maxNodes, maxEdges),
		rootState: g.NewInitialState(),
		rng:       games.NewRand(seed),
		seed:      seed,
		root:      NilNode,
		plainUCT:  o.Rule == UCT && o.Bias == 0,
	}
	if o.TT {
		t.tt = newTransTable(maxNodes)
	}
	return t, nil
}

// Options returns the tree's options (defaults filled in).
func (t *Tree) Options() Options { return t.opt }

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
	// Priors receives an evaluator's policy, indexed by action id.
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
	perm     []int32        // expansion scratch: edge order (drawSwaps)
	acts     []games.Action // expansion scratch: shuffled actions
	amaf     []games.Mask   // AMAF: actions each player played below a node
	order    []int32        // scratch for PoolRAVE
	simX     []float64      // simsel=exp3/rm scratch: a segment's sums
	simRho   []float64      // simsel=exp3/rm scratch: a segment's strategy
}

// NewWalker returns a walker with its own random stream.
func (t *Tree) NewWalker(seed uint64) *Walker {
	g := t.game
	n := g.NumActions()
	w := &Walker{
		t: t, State: g.NewInitialState(),
		Value:  make([]float64, t.players),
		Priors: make([]float32, n),
		Ctx:    newEvalContext(g, games.NewRand(seed)),
		path:   make([]step, 0, g.MaxGameLength()*t.players+8),
		legal:  games.NewMask(n),
		hprior: make([]float32, n),
		perm:   make([]int32, n+t.players),
		acts:   make([]games.Action, n),
		order:  make([]int32, 0, 64),
		simX:   make([]float64, n),
		simRho: make([]float64, n),
	}
	w.Ctx.PoolP = t.opt.PoolP
	for range t.players {
		w.simLegal = append(w.simLegal, games.NewMask(n))
		w.amaf = append(w.amaf, games.NewMask(n))
	}
	return w
}

// Leaf returns the leaf node of the walker's last SelectLeaf (NilNode when
// the arena was full) and whether it is terminal.
func (w *Walker) Leaf() (node int32, terminal bool) { return w.leaf, w.terminal }

// ---- statistics helpers (atomic only when shared) ----

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

// Prepare makes s the root: it reuses the previous tree when Options.Reuse
// is set and s descends from the previous root, else clears the arena. The
// root is expanded (with the evaluator's priors when ExpandVisits is 0) and
// root noise is applied.
func (t *Tree) Prepare(s games.State) {
	if len(t.walkers) == 0 {
		t.walkers = append(t.walkers, t.NewWalker(t.seed^0x9e3779b97f4a7c15))
	}
	t.full.Store(false)
	t.claimed.Store(0)
	if !(t.opt.Reuse && t.tryReuse(s)) {
		t.a.reset()
		if t.tt != nil {
			t.tt.clear()
		}
		s.CloneInto(t.rootState)
		t.root = t.a.newNode(playerOf(s))
	}
	t.reuse.remember(t, s)
	w := t.walkers[0]
	rn := &t.a.nodes[t.root]
	if rn.state != expanded && rn.player != games.TerminalPlayer {
		t.rootState.CloneInto(w.State)
		var pri []float32
		if t.opt.ExpandVisits == 0 {
			clear(w.Priors)
			if t.opt.Eval.Evaluate(w.Ctx, w.State, w.Value, w.Priors) {
				pri = w.Priors
			}
			t.rootState.CloneInto(w.State)
		}
		t.legalOf(w, w.State)
		t.expand(w, t.root, pri)
	}
	if t.opt.DirichletA > 0 && rn.state == expanded && rn.player >= 0 {
		t.addNoise(rn)
	}
}

func playerOf(s games.State) int {
	if s.IsTerminal() {
		return games.TerminalPlayer
	}
	return s.CurrentPlayer()
}

// legalOf fills w.legal (or w.simLegal) with s's legal actions, and the
// heuristic priors when progressive bias is on.
func (t *Tree) legalOf(w *Walker, s games.State) {
	switch p := s.CurrentPlayer(); p {
	case games.SimultaneousPlayer:
		ss := s.(games.SimultaneousState)
		for q := range t.players {
			ss.LegalFor(q, w.simLegal[q])
		}
	default:
		s.Legal(w.legal)
		if t.opt.Bias != 0 && p >= 0 {
			for a := range w.legal.All() {
				w.hprior[a] = float32(t.opt.Heuristic.Score(s, p, a))
			}
		}
	}
}

// expand creates the edges of node ni from the walker's legal masks (see
// legalOf). priors, when non-nil, are the evaluator's weights by action.
// It returns false when another goroutine is expanding the node or the
// edge arena is full.
//
// Protocol: CAS state unexpanded->expanding gives one goroutine the right
// to write firstEdge/numEdges and the edges; it then stores expanded
// (atomic store, which orders the plain writes before it for any reader
// that loads expanded). Readers never touch edges of a node they have not
// seen expanded.
func (t *Tree) expand(w *Walker, ni int32, priors []float32) bool {
	nd := &t.a.nodes[ni]
	if !atomic.CompareAndSwapUint32(&nd.state, unexpanded, expanding) {
		return false
	}
	rng := w.Ctx.Rng
	if nd.player == games.SimultaneousPlayer {
		k := t.players
		for q := range t.players {
			k += w.simLegal[q].Count()
		}
		first := t.a.newEdges(k)
		if first == NilEdge {
			t.full.Store(true)
			atomic.StoreUint32(&nd.state, unexpanded)
			return false
		}
		i := first + int32(t.players)
		for q := range t.players {
			c := w.simLegal[q].Count()
			t.a.edges[first+int32(q)] = edge{action: games.Action(c), child: NilNode}
			perm := w.perm[:c]
			drawSwaps(perm, rng)
			seg := i
			for a := range w.simLegal[q].All() {
				placeEdge(t.a, seg, i-seg, perm, a, 1/float32(c))
				i++
			}
		}
		nd.firstEdge, nd.numEdges = first, int32(k)
		atomic.StoreUint32(&nd.state, expanded)
		return true
	}
	k := w.legal.Count()
	first := t.a.newEdges(k)
	if first == NilEdge {
		t.full.Store(true)
		atomic.StoreUint32(&nd.state, unexpanded)
		return false
	}
	if priors == nil && t.opt.Bias == 0 && nd.player >= 0 {
		// Uniform priors at a decision node: the general loop below
		// without its prior cases (same edges, same random draws).
		// The inside-out shuffle runs on the walker's action scratch and
		// each edge is written once.
		perm, acts := w.perm[:k], w.acts[:k]
		drawSwaps(perm, rng)
		i := 0
		for wi, word := range w.legal {
			for ; word != 0; word &= word - 1 {
				j := perm[i]
				acts[i] = acts[j]
				acts[j] = games.Action(wi<<6 + bits.TrailingZeros64(word))
				i++
			}
		}
		uniform := 1 / float32(k)
		edges, hot := t.a.edges[first:first+int32(k)], t.a.hot[first:first+int32(k)]
		for i, a := range acts {
			edges[i] = edge{action: a, child: NilNode}
			hot[i].prior = uniform
		}
		nd.firstEdge, nd.numEdges = first, int32(k)
		atomic.StoreUint32(&nd.state, expanded)
		return true
	}
	var sum float32
	if priors != nil {
		for a := range w.legal.All() {
			sum += max(priors[a], 0)
		}
	}
	// Edges of a decision node are written in uniformly random order
	// (inside-out Fisher-Yates, perm from drawSwaps), so that "first
	// unvisited edge" and first-maximum tie-breaks are uniform choices.
	// Chance nodes keep action order.
	perm := w.perm[:k]
	if nd.player >= 0 {
		drawSwaps(perm, rng)
	} else {
		for i := range perm {
			perm[i] = int32(i)
		}
	}
	uniform := 1 / float32(k)
	i := int32(0)
	for a := range w.legal.All() {
		p := uniform
		switch {
		case priors != nil && sum > 0:
			p = max(priors[a], 0) / sum
		case t.opt.Bias != 0:
			p = w.hprior[a]
		}
		placeEdge(t.a, first, i, perm, a, p)
		i++
	}
	nd.firstEdge, nd.numEdges = first, int32(k)
	atomic.StoreUint32(&nd.state, expanded)
	return true
}

// factTab[k] holds k! and 2^64 mod k! (Lemire's rejection threshold) for
// the permutations drawn in one batch by drawSwaps (20! < 2^64).
var factTab = func() (t [21]struct{ fact, thresh uint64 }) {
	f := uint64(1)
	for k := range t {
		if k > 1 {
			f *= uint64(k)
		}
		t[k].fact, t[k].thresh = f, -f%f
	}
	return t
}()

// placeEdge is one step of an inside-out Fisher-Yates shuffle of the k
// edges from first: edge i (action a, prior p) goes to slot perm[i] <= i,
// and the edge that held that slot moves to slot i. After the last step
// the edges are in uniformly random order when perm comes from drawSwaps
// (the identity perm keeps them in order).
func placeEdge(ar *arena, first, i int32, perm []int32, a games.Action, p float32) {
	j := perm[i]
	if j != i {
		ar.edges[first+i] = ar.edges[first+j]
		ar.hot[first+i].prior = ar.hot[first+j].prior
	}
	ar.edges[first+j] = edge{action: a, child: NilNode}
	ar.hot[first+j].prior = p
}

// drawSwaps sets perm[i] to an independent uniform integer in [0, i] for
// every i (perm[0] = 0): the swap targets of a Fisher-Yates shuffle.
//
// It draws one 64-bit number for as many consecutive indices as fit
// (bounds whose product B is at most 2^64: 19 indices from the start, 7
// in a 7-action game) and splits it by chained multiplications (the
// high words of x*b are the mixed-radix digits of floor(x*B/2^64)); the
// final low word is Lemire's rejection test for B, so the digits are
// exactly uniform (Brackett-Rozinsky and Lemire 2024, batched ranged
// random integers). One Uint64 per expansion instead of k-1 IntN calls.
func drawSwaps(perm []int32, rng *rand.Rand) {
	if len(perm) == 0 {
		return
	}
	perm[0] = 0
	if k := len(perm); k < len(factTab) {
		// One batch: B = k!, rejection threshold 2^64 mod k! from tables.
		for {
			x := rng.Uint64()
			for b := 1; b < k; b++ {
				hi, lo := bits.Mul64(x, uint64(b+1))
				perm[b], x = int32(hi), lo
			}
			if x >= factTab[k].thresh {
				return
			}
		}
	}
	for i := 1; i < len(perm); {
		prod, e := uint64(i+1), i+1
		for e < len(perm) {
			hi, lo := bits.Mul64(prod, uint64(e+1))
			if hi != 0 {
				break
			}
			prod, e = lo, e+1
		}
		for {
			x := rng.Uint64()
			for b := i; b < e; b++ {
				hi, lo := bits.Mul64(x, uint64(b+1))
				perm[b], x = int32(hi), lo
			}
			if x >= prod || x >= -prod%prod {
				break
			}
		}
		i = e
	}
}

// SelectLeaf is pipeline step (1): it copies the root state into
// w.State, descends by the selection rule (expanding nodes that have
// reached ExpandVisits), adds one virtual loss to every edge taken and
// stops at a new node, an unexpanded node or a terminal state. It returns
// true when the leaf needs an evaluation; otherwise (terminal leaf)
// w.Value already holds the returns and Backup can follow at once.
func (t *Tree) SelectLeaf(w *Walker) (needsEval bool) {
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
	s := w.State
	cur := t.root
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
		if atomic.LoadUint32(&nd.state) != expanded {
			expandNow := t.opt.ExpandVisits > 0 && atomic.LoadInt32(&nd.n) >= int32(t.opt.ExpandVisits) &&
				atomic.LoadUint32(&nd.state) == unexpanded
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
			t.a.hot[ei].vloss++
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
			t.add32(&t.a.hot[ei].vloss, 1)
			s.Apply(a)
			childp = &t.a.edges[ei].child
		case nd.player == games.SimultaneousPlayer:
			joint := w.Ctx.Joint
			for q := range t.players {
				first, cnt := simSegment(t.a, nd, q, t.players)
				st := step{node: cur, player: int32(q), first: q == 0}
				if t.opt.SimSel == SimUCB {
					st.edge = t.selectEdge(nd, first, cnt)
				} else {
					st.edge, st.prob = t.selectSim(w, first, cnt)
					st.bandit = true
				}
				ei := st.edge
				w.path = append(w.path, st)
				t.add32(&t.a.hot[ei].vloss, 1)
				joint[q] = t.a.edges[ei].action
				if record {
					w.Ctx.Trace = append(w.Ctx.Trace, Traced{int32(q), joint[q]})
				}
			}
			s.(games.SimultaneousState).ApplyJoint(joint)
			childp = &nd.next
		default:
			var ei int32
			if t.plainUCT && !t.shared {
				ei = t.selectUCTPlain(nd)
			} else {
				ei = t.selectEdge(nd, nd.firstEdge, nd.numEdges)
			}
			e := &t.a.edges[ei]
			w.path = append(w.path, step{node: cur, edge: ei, player: int32(nd.player), first: true})
			t.add32(&t.a.hot[ei].vloss, 1)
			if record {
				w.Ctx.Trace = append(w.Ctx.Trace, Traced{int32(nd.player), e.action})
			}
			s.Apply(e.action)
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
	nodes, edges, hot := t.a.nodes, t.a.edges, t.a.hot
	s := w.State
	for {
		nd := &nodes[cur]
		if nd.player < 0 || nd.state != expanded {
			return cur
		}
		ei := t.selectUCTPlain(nd)
		w.path = append(w.path, step{node: cur, edge: ei, player: int32(nd.player), first: true})
		hot[ei].vloss++
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
	if t.opt.Rule == PoolRAVE && len(w.path) > 0 {
		t.fillPool(w, w.path[len(w.path)-1].node)
	}
	return true
}

// selectEdge returns the edge with the best score among cnt edges from
// first, by the tree's rule. Unvisited edges (counting virtual losses as
// visits) come first under UCT/UCB1-Tuned, and under the RAVE family when
// they have no AMAF data; edges are in random order, so the first one is a
// uniform choice, except with progressive bias, where unvisited edges are
// tried in decreasing order of the heuristic.
func (t *Tree) selectEdge(nd *node, first, cnt int32) int32 {
	o := &t.opt
	parentN := max(int(atomic.LoadInt32(&nd.n)), 1)
	if o.Bias == 0 {
		switch o.Rule {
		case UCT:
			return t.selectUCT(parentN, first, cnt)
		case PUCT:
			return t.selectPUCT(parentN, first, cnt)
		}
	}
	lnN := lnOf(parentN)
	sqrtN := math.Sqrt(float64(parentN))
	best, bestScore := first, math.Inf(-1)
	for i := first; i < first+cnt; i++ {
		e, h := &t.a.edges[i], &t.a.hot[i]
		n := int(atomic.LoadInt32(&h.n)) + int(atomic.LoadInt32(&h.vloss))
		vl := float64(atomic.LoadInt32(&h.vloss))
		var q float64
		if n > 0 {
			q = (float64(atomic.LoadInt64(&h.w))/valueScale - vl) * invOf(n)
		}
		var score float64
		switch o.Rule {
		case PUCT:
			if n == 0 {
				q = o.FPU
			}
			score = q + o.C*float64(h.prior)*sqrtN/(1+float64(n))
		case UCT:
			if n == 0 {
				if o.Bias == 0 {
					return i
				}
				score = unvisitedScore
				break
			}
			score = q + o.C*math.Sqrt(lnN)*invSqrtOf(n)
		case UCB1Tuned:
			if n == 0 {
				if o.Bias == 0 {
					return i
				}
				score = unvisitedScore
				break
			}
			sq := (float64(atomic.LoadInt64(&e.w2))/valueScale + vl) * invOf(n)
			x := (q + 1) / 2
			x2 := (sq + 2*q + 1) / 4
			v := x2 - x*x + math.Sqrt(2*lnN*invOf(n))
			score = 2*(x+o.C*math.Sqrt(lnN*invOf(n)*min(0.25, v))) - 1
		default: // RAVE family
			an := int(atomic.LoadInt32(&e.amafN))
			if n == 0 && an == 0 {
				if o.Bias == 0 {
					return i
				}
				score = unvisitedScore
				break
			}
			var qa float64
			if an > 0 {
				qa = float64(atomic.LoadInt64(&e.amafW)) / valueScale * invOf(an)
			}
			var beta float64
			switch {
			case an == 0:
				beta = 0
			case n == 0:
				beta = 1
			case o.Rule == AlphaAMAF && o.RaveK > 0:
				beta = AlphaAMAFWeight(n, o.RaveK)
			case o.Rule == AlphaAMAF:
				beta = o.Alpha
			case o.RaveSchedule == "silver":
				beta = RaveBetaSilver(n, an, o.RaveB)
			default:
				beta = RaveBetaSqrt(n, o.RaveK)
			}
			score = (1-beta)*q + beta*qa + o.C*math.Sqrt(lnN)*invSqrtOf(max(n, 1))
		}
		if o.Bias != 0 {
			score += o.Bias * float64(h.prior) / (1 + float64(n))
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

// unvisitedScore ranks unvisited edges above visited ones when progressive
// bias is on, so that they are tried in decreasing heuristic order (the
// bias term is added to it).
const unvisitedScore = 1e9

// selectUCT is selectEdge's UCT loop: c*sqrt(ln N) is computed once per
// node and the per-edge factors come from one table (one cache line per
// edge); see uctKey for the score.
func (t *Tree) selectUCT(parentN int, first, cnt int32) int32 {
	k := t.opt.C * math.Sqrt(lnOf(parentN))
	best, bestKey := 0, uint64(0)
	hot := t.a.hot[first : first+cnt]
	for i := range hot {
		e := &hot[i]
		vl, done := atomic.LoadInt32(&e.vloss), atomic.LoadInt32(&e.n)
		key := uctKey(atomic.LoadInt64(&e.w)+int64(2*done+vl)*valueScale, uint32(done+vl), k)
		if key == 0 {
			return first + int32(i)
		}
		if key > bestKey {
			best, bestKey = i, key
		}
	}
	return first + int32(best)
}

// selectUCTPlain is selectUCT at decision node nd of an unshared tree:
// the same choice with plain loads (the caller checks plainUCT and
// !shared).
func (t *Tree) selectUCTPlain(nd *node) int32 {
	first := nd.firstEdge
	k := t.opt.C * math.Sqrt(lnOf(max(int(nd.n), 1)))
	best, bestKey := 0, uint64(0)
	hot := t.a.hot[first : first+nd.numEdges]
	for i := range hot {
		e := &hot[i]
		vl, done := e.vloss, e.n
		key := uctKey(e.w+int64(2*done+vl)*valueScale, uint32(done+vl), k)
		if key == 0 {
			return first + int32(i)
		}
		if key > bestKey {
			best, bestKey = i, key
		}
	}
	return first + int32(best)
}

// uctKey returns the selection key of an edge under UCT with exploration
// factor k = c*sqrt(ln N) >= 0, from n = done+vl (completed and in-flight
// visits) and num = w + (2*done+vl)*valueScale (w: the value sum, fixed
// point); it is 0 for an unvisited edge (n = 0, w = 0), which selection
// takes at once.
//
// The UCT score is q + k/sqrt(n) with q = (w/valueScale - vl)/n (virtual
// losses count as value -1). It lies in [-1, 1+k], so score+2 is a
// positive float whose IEEE bits order like the scores, and the running
// maximum is kept on those bits with integer compares, which the compiler
// turns into conditional moves (no mispredicted branch per edge); ties
// keep the first edge. score+2 = num/(n*valueScale) + k/sqrt(n): num is an
// exact integer (below 2^53), so the mean costs one conversion and one
// multiplication by a table entry.
func uctKey(num int64, n uint32, k float64) uint64 {
	var invScaled, isq float64
	if n < tabN {
		r := &uctTab[n] // uctTab[0] is zero: key 0 for an unvisited edge
		invScaled, isq = r.invScaled, r.invSqrt
	} else {
		invScaled, isq = 1/(float64(n)*valueScale), 1/math.Sqrt(float64(n))
	}
	return math.Float64bits(float64(num)*invScaled + k*isq)
}

// selectPUCT is selectEdge's PUCT loop (no progressive bias): c*sqrt(N)
// is computed once per node, 1/n and 1/(1+n) come from a table, and the
// running maximum is kept branch-free on orderKey. Ties keep the first edge.
func (t *Tree) selectPUCT(parentN int, first, cnt int32) int32 {
	cs := t.opt.C * math.Sqrt(float64(parentN))
	fpu := t.opt.FPU
	hot := t.a.hot[first : first+cnt]
	best, bestKey := 0, int64(math.MinInt64)
	for i := range hot {
		h := &hot[i]
		vl := atomic.LoadInt32(&h.vloss)
		n := uint32(atomic.LoadInt32(&h.n) + vl)
		q, inv1 := fpu, 0.0 // inv1 = 1/(1+n)
		if n < tabN-1 {
			if n > 0 {
				q = (float64(atomic.LoadInt64(&h.w))*(1.0/valueScale) - float64(vl)) * recipTab[n].inv
			}
			inv1 = recipTab[n+1].inv
		} else {
			q = (float64(atomic.LoadInt64(&h.w))*(1.0/valueScale) - float64(vl)) / float64(n)
			inv1 = 1 / (1 + float64(n))
		}
		key := orderKey(q + cs*float64(h.prior)*inv1)
		if key > bestKey {
			best, bestKey = i, key
		}
	}
	return first + int32(best)
}

// orderKey maps a float64 (not NaN) to an int64 with the same order, so
// that a running maximum can use integer conditional moves.
func orderKey(x float64) int64 {
	b := int64(math.Float64bits(x))
	return b ^ int64(uint64(b>>63)>>1)
}

// Tables of ln n, 1/n and 1/sqrt(n) for small n (32 KiB, 64 KiB, and
// 64 KiB for uctTab).
const tabN = 4096

var lnTab [tabN]float64

// recipTab[n] holds 1/n and 1/sqrt(n) side by side, so that the UCT loop
// reads one cache line per edge.
var recipTab [tabN]struct{ inv, invSqrt float64 }

// uctTab[n] holds 1/(n*valueScale) and 1/sqrt(n) for uctKey; uctTab[0] is zero.
var uctTab [tabN]struct{ invScaled, invSqrt float64 }

func init() {
	for n := 1; n < tabN; n++ {
		lnTab[n] = math.Log(float64(n))
		recipTab[n].inv = 1 / float64(n)
		recipTab[n].invSqrt = 1 / math.Sqrt(float64(n))
		uctTab[n].invScaled = 1 / float64(n) / valueScale
		uctTab[n].invSqrt = recipTab[n].invSqrt
	}
}

// lnOf returns ln n; above the table it keeps n's top 12 bits (absolute
// error < 5e-4, ample for an exploration term) to avoid math.Log.
func lnOf(n int) float64 {
	if n < tabN {
		return lnTab[n]
	}
	e := bits.Len(uint(n)) - 12
	return lnTab[n>>e] + float64(e)*math.Ln2
}

func invOf(n int) float64 {
	if uint(n) < tabN {
		return recipTab[n].inv
	}
	return 1 / float64(n)
}

func invSqrtOf(n int) float64 {
	if uint(n) < tabN {
		return recipTab[n].invSqrt
	}
	return 1 / math.Sqrt(float64(n))
}

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
	if !t.shared && t.opt.Rule != UCB1Tuned {
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
	for i := len(path) - 1; i >= 0; i-- {
		st := &path[i]
		h := &hot[st.edge]
		h.vloss--
		h.n++
		if st.player >= 0 {
			h.w += int64(value[st.player] * valueScale) // truncation: error < 2^-24
		}
		if st.first {
			nodes[st.node].n++
		}
	}
}

// backupAtomic is Backup's general path loop (shared trees, UCB1-Tuned).
func (t *Tree) backupAtomic(w *Walker, value []float64) {
	for i := len(w.path) - 1; i >= 0; i-- {
		st := &w.path[i]
		h := &t.a.hot[st.edge]
		t.add32(&h.vloss, -1)
		t.add32(&h.n, 1)
		if st.player >= 0 {
			v := value[st.player]
			t.add64(&h.w, int64(v*valueScale))         // truncation: error < 2^-24
			if t.opt.Rule == UCB1Tuned && !st.bandit { // bandit edges keep their sums in w2
				t.add64(&t.a.edges[st.edge].w2, int64(v*v*valueScale))
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
			e := &t.a.edges[j]
			if mask.Has(e.action) {
				t.add32(&e.amafN, 1)
				t.add64(&e.amafW, v)
			}
		}
	}
}

// fillPool puts the PoolK actions with the best AMAF mean at node ni
// (visited at least once in AMAF) into the walker's rollout pool.
func (t *Tree) fillPool(w *Walker, ni int32) {
	nd := &t.a.nodes[ni]
	if atomic.LoadUint32(&nd.state) != expanded || nd.player < 0 {
		return
	}
	pool := w.Ctx.Pool[:0]
	var vals [64]float64
	k := min(t.opt.PoolK, len(vals))
	for j := nd.firstEdge; j < nd.firstEdge+nd.numEdges; j++ {
		e := &t.a.edges[j]
		an := atomic.LoadInt32(&e.amafN)
		if an == 0 {
			continue
		}
		v := float64(atomic.LoadInt64(&e.amafW)) / valueScale / float64(an)
		// insertion into the sorted top-k
		pos := len(pool)
		if pos == k {
			if v <= vals[k-1] {
				continue
			}
			pos--
		} else {
			pool = append(pool, 0)
		}
		for pos > 0 && vals[pos-1] < v {
			vals[pos], pool[pos] = vals[pos-1], pool[pos-1]
			pos--
		}
		vals[pos], pool[pos] = v, e.action
	}
	w.Ctx.Pool = pool
}

// simulate runs one simulation through the pipeline:
//
//  1. SelectLeaf: descend from the root by the selection rule, applying a
//     virtual loss to each edge taken, to a new/unexpanded or terminal leaf;
//  2. evaluate the leaf with the Evaluator (skipped for terminal leaves);
//  3. Backup: expand the leaf if needed and add the values along the path.
func (t *Tree) simulate(w *Walker) {
	if t.SelectLeaf(w) { // (1)
		var pri []float32
		if w.expandAt {
			pri = w.Priors
			clear(pri)
		}
		if !t.opt.Eval.Evaluate(w.Ctx, w.State, w.Value, pri) { // (2)
			pri = nil
		}
		t.Backup(w, w.Value, pri) // (3)
		return
	}
	t.Backup(w, w.Value, nil) // (3), terminal leaf
}

// Search runs simulations from s until the simulation or time budget is
// spent, ctx is cancelled or (with StopWhenFull) the arena is full. It
// returns the number of simulations run. With Threads > 1 the tree is
// searched by that many goroutines.
func (t *Tree) Search(ctx context.Context, s games.State) int {
	t.Prepare(s)
	if t.a.nodes[t.root].player == games.TerminalPlayer {
		return 0
	}
	var deadline time.Time
	if t.opt.Time > 0 {
		deadline = time.Now().Add(t.opt.Time)
	}
	start := atomic.LoadInt64(&t.sims)
	if t.opt.Threads == 1 {
		t.shared = false
		t.run(ctx, t.walkers[0], deadline)
	} else {
		for len(t.walkers) < t.opt.Threads {
			t.walkers = append(t.walkers, t.NewWalker(t.seed+uint64(len(t.walkers))*0x9e3779b97f4a7c15))
		}
		t.shared = true
		var wg sync.WaitGroup
		for i := range t.opt.Threads {
			wg.Add(1)
			go func(w *Walker) {
				defer wg.Done()
				t.run(ctx, w, deadline)
			}(t.walkers[i])
		}
		wg.Wait()
		t.shared = false
	}
	return int(atomic.LoadInt64(&t.sims) - start)
}

// run is one goroutine's simulation loop. Budgets are claimed with an
// atomic counter, so exactly Sims simulations run in total.
func (t *Tree) run(ctx context.Context, w *Walker, deadline time.Time) {
	single := !t.shared // one goroutine: claim the budget with a plain counter
	for i := 0; ; i++ {
		if single {
			if t.opt.Sims > 0 && i >= t.opt.Sims {
				return
			}
		} else if t.opt.Sims > 0 && t.claimed.Add(1) > int64(t.opt.Sims) {
			return
		}
		if i&15 == 0 && i > 0 { // time.Now costs ~25ns; every 16 simulations
			if ctx.Err() != nil || (!deadline.IsZero() && time.Now().After(deadline)) {
				return
			}
		}
		if t.opt.StopWhenFull && t.full.Load() {
			return
		}
		t.simulate(w)
	}
}
