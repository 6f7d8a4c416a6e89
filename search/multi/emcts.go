package multi

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
)

// EMCTS chooses turns by Evolutionary MCTS (study 004, section III-D and
// Algorithm 4, after Baier and Cowling): the nodes of its tree are whole
// action sequences L (genomes) played from the turn's first state, and
// its edges are mutations: one action L[i] replaced by another action
// legal at that point, plus a special mutation that keeps the sequence.
// Not safe for concurrent use.
//
// The genome spans Horizon turns: Horizon 1 is EMCTS (H = d), Horizon > 1
// is Flexible-Horizon EMCTS (FH-EMCTS, H > d), whose genome contains the
// opponent's replies; the study's tournament uses H = 3d (Horizon 3).
//
// One EMCTS-SEARCH simulation (Algorithm 4) descends from the root by a
// PUCT rule over the mutations (Q initialised to 0, priors below; the
// study's exploration constant is 8 times smaller than MCTS's), creating
// the child of the mutation taken when it is new, until it reaches a node
// not yet expanded; it then plays that node's sequence from the turn's
// first state and evaluates the resulting state with the evaluator (a
// terminal state scores its returns). The value is backed up along the
// path, each mutation scoring the value of the player who plays the
// mutated action (the opponent's actions score minus the mover's value),
// and the node is expanded: one edge per mutation.
//
// Priors: the root sequence L0 is drawn action by action from the
// evaluator's policy, sharpened by InitTemp (p^(1/InitTemp); 0 is
// greedy), as the study does; those per-position policies are computed
// once, at the root, and are the priors of every mutation (position i,
// action a) and the choice of the repair of any later action made illegal
// by a mutation (the legal action of highest prior, ties at random). An
// evaluator without a policy (rollouts) gives uniform priors, so L0 is a
// uniformly random legal sequence and repairs are uniform. A sequence
// whose actions stay legal is kept; a mutation that ends the game early
// shortens it; where the turn structure changes (in Strands the first
// stone fixes how many follow) the old actions are reused in order while
// legal and the sequence is repaired or extended up to the horizon.
//
// Phases: the number of selection phases of a tree of sequences is not
// bounded, so the study uses a fixed number, Phases. EMCTS-V (BB false)
// spends the whole budget from the root, then walks Phases steps down the
// most visited mutations; EMCTS-BB (BB true, section III-E) splits the
// budget evenly over the Phases and after each phase moves the root to
// its most visited child, keeping its subtree. The turn played is the
// first turn of the final node's sequence (Algorithm 4, phase 3).
//
// Phases 0 (the default; the study gives no number) walks the most
// visited mutations to the end of that path instead: EMCTS-V from the
// root, EMCTS-BB from its last root after len(L0) phases. This deviates
// from a fixed count because, with the study's Q = 0 for unvisited
// mutations and small C, the tree is nearly a single chain about as deep
// as the budget: once a mutation has scored above the tiny exploration
// term C*P*sqrt(N) it is taken again, so every simulation adds one node
// at the bottom; a fresh node first tries the keep mutation (the largest
// prior), so a sequence is re-evaluated while it scores well and a
// winning sequence is kept for the rest of the search (each keep scores
// exactly +1). On the Connect4d test position (multi_test.go, random
// rollouts) the chain first reaches the winning turn far below the root
// and its winning edges have Q = 1, but a walk of 5 steps returns a
// sequence near L0 that does not win. Seeds 1-20 finding the whole-turn
// win at 250, 500, 1,000 and 2,000 simulations: EMCTS-V and EMCTS-BB
// with Phases 0 13, 18, 20 and 20 each; with Phases 5 0 at every budget.
// TestEMCTSChain pins this.
//
// FH-EMCTS (Horizon 3) plays that immediate win in only 3, 5, 5 and 5 of
// 20 seeds at the same budgets. This was checked against Algorithm 4
// step by step (the sequence initialised from the policy, PUCT over the
// mutations with Q = 0 for unvisited ones, the sequence played from the
// root and evaluated, each mutation scored for the player of its action,
// expansion, the turn read off the sequence) and against the study's
// published code (github.com/Hadrien-Cr/MegaZero, EMCTS.pyx); no step
// differs in a way that explains it. Neither helps: priors per position
// not renormalised over the mutation set (the published code's choice)
// nor dropping the keep mutation (measured with the earlier selection
// code, whose random stream gave this variant 7/20 at 500 and 2,000
// simulations: 3 and 4 of 20 without renormalising; 0 of 20 for every
// variant without the keep mutation, whose chain then never stays on a
// good sequence).
// It is the search's limitation: the chain is absorbed by the first
// sequence it meets in which x wins at all, which with three turns is
// mostly a win on x's next turn after an o reply that does not block.
// Such a sequence scores exactly +1, as an immediate win does, its keep
// mutation (x's) is then taken at every visit, and o's mutations, which
// start at Q = 0 with a prior of about 1/100, are rarely tried (8-456 of
// the 1,999 edges first taken in a turn), so the reply that would refute
// it is not found. On seeds 1-20 at 2,000 simulations, in 14 of the 15
// misses no sequence of the tree wins at once, and in 13 of them 998-2,000
// of the 2,000 sequences are such later wins (TestFHEMCTSAbsorbed pins
// seed 4: 0 and 1,913; seed 16 met no win at all, seed 12 met the
// immediate win in 6 sequences and did not settle on it); in the 5 hits the
// immediate win appears at node 104-283 and then fills the chain
// (1,717-1,896 sequences). A horizon of 2 turns (x's turn and o's
// reply), where a later win lies beyond the horizon, finds it in 12, 16,
// 18 and 19 of 20.
//
// Budget: every evaluator call counts as one simulation, the policy calls
// that build L0 included, so Budget.Sims bounds the evaluator calls of a
// turn exactly.
type EMCTS struct {
	Horizon  int     // turns spanned by a genome (1: EMCTS; >1: FH-EMCTS)
	Phases   int     // selection phases (0: walk the most visited path to its end; BB: len(L0) phases first)
	BB       bool    // EMCTS-BB: split the budget over the phases
	C        float64 // PUCT exploration constant
	InitTemp float64 // temperature of the root sequence's draw
	// History says how PolicyHistory counts (see there); the zero value
	// is the study's Eq. 2.
	History HistoryCount
	// StepTemp > 0 draws each step down the tree (EMCTS-BB's root moves
	// and the final walk) from the visited mutations with probability
	// proportional to visits^(1/StepTemp), the keep mutation included,
	// as the study's published code draws its phase steps in self-play
	// (EMCTS.pyx, update_turn); 0 takes the most visited.
	StepTemp float64

	g      games.Game
	eval   search.Evaluator
	policy bool // the evaluator may return a policy
	budget Budget
	rng    *rand.Rand
	ctx    *search.EvalContext
	value  []float64
	pri    []float32
	ret    []float64

	root0, work, leaf games.State
	mask              games.Mask
	turn              int

	nodes   []emNode
	edges   []emEdge
	genes   []games.Action // the genomes of all nodes, back to back
	prior   [][]float32    // per root-sequence position: policy by action id
	visits  []emVisit      // the statistics of every visited edge
	path    []int32        // the current simulation's path: emVisit indices
	sqrtTab []float64      // sqrt(n+1) by n, for selection
	// noChainPath makes every step of a descent go through selectEdge
	// (tests: the inlined common case must decide the same).
	noChainPath bool
	// extra holds the counts of every History but HistoryPaper beyond
	// the mutations' visits, by position and action (positions of L0
	// only): L0's actions, repairs, the keep mutations' shares and the
	// evaluated sequences.
	extra []float32
	last  []games.Action // the last turn planned

	// Sims is the number of evaluator calls and terminal evaluations of
	// the last turn.
	Sims int
}

// emNode is one sequence: genes[off:off+n] (nodes made by the keep
// mutation share their parent's genes).
//
// Selection only ever compares the visited edges and the unvisited ones
// of largest prior (all unvisited edges have Q = 0 and the same visit
// term), so a node lists the statistics of its visited edges (visited,
// into EMCTS.visits, linked by emVisit.next) and keeps the largest prior
// among its unvisited edges (maxUnv) and how many unvisited edges have it
// (nMaxUnv). Selection then costs O(visited edges), not O(edges), and
// reads memory laid out in the order of the first visits: EMCTS's tree is
// nearly one chain as deep as the budget, and every simulation descends
// all of it.
type emNode struct {
	off, n     int32
	first, cnt int32 // edges; cnt 0 until expanded
	// The node's visits are own + the n of its incoming edge's emVisit
	// (in; -1 for the first root): own counts the simulations that
	// started at it as the root, so that a backup writes only the path's
	// emVisits.
	own, in  int32
	visited  int32 // first of the visited edges' emVisit, -1 none
	nMaxUnv  int32 // unvisited edges whose prior is maxUnv
	maxUnv   float32
	expanded bool
}

// emVisit holds the statistics of a visited edge (created when the edge
// is first taken).
type emVisit struct {
	edge, child int32
	next        int32 // the parent's next visited edge, -1 none
	n           int32
	prior       float32
	player      int8
	keep        bool    // the keep mutation
	w           float64 // sum of values for player
}

// emEdge is one mutation: position pos of the parent's sequence set to
// act (pos -1: keep the sequence).
type emEdge struct {
	pos    int32
	act    games.Action
	child  int32 // -1 until first taken
	visit  int32 // its emVisit once taken, -1 before
	prior  float32
	player int8
}

// NewEMCTS returns an EMCTS planner for the sequential game g with
// evaluator eval (nil: random rollouts) and a budget per turn.
func NewEMCTS(g games.Game, eval search.Evaluator, b Budget, seed uint64) (*EMCTS, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	if g.Type().Dynamics != games.Sequential || g.Type().Chance != games.Deterministic {
		return nil, fmt.Errorf("multi: emcts needs a sequential deterministic game, not %s", g.Type().Name)
	}
	if eval == nil {
		eval = &search.Rollout{}
	}
	ctx, err := evalContext(g, eval, seed)
	if err != nil {
		return nil, err
	}
	_, rollout := eval.(*search.Rollout)
	n := g.NumActions()
	return &EMCTS{
		Horizon: 1, C: 1.5 / 8, InitTemp: 0.5,
		g: g, eval: eval, policy: !rollout, budget: b,
		rng: games.NewRand(seed ^ 0xe3c75), ctx: ctx,
		value: make([]float64, g.NumPlayers()), pri: make([]float32, n), ret: make([]float64, g.NumPlayers()),
		root0: g.NewInitialState(), work: g.NewInitialState(), leaf: g.NewInitialState(),
		mask: games.NewMask(n),
	}, nil
}

// done reports whether a sequence played to s is complete: the game is
// over or Horizon turns have begun since the root's.
func (e *EMCTS) done(s games.State) bool {
	return s.IsTerminal() || turnOf(s)-e.turn >= e.Horizon
}

// PlanTurn implements Planner (Algorithm 4, TURN-SELECTION).
func (e *EMCTS) PlanTurn(ctx context.Context, s games.State, dst []games.Action) ([]games.Action, error) {
	if s.IsTerminal() {
		return dst, fmt.Errorf("multi: the game is over")
	}
	if e.Horizon < 1 {
		return dst, fmt.Errorf("multi: emcts horizon %d < 1", e.Horizon)
	}
	s.CloneInto(e.root0)
	e.turn = turnOf(s)
	e.nodes, e.edges, e.visits, e.genes, e.prior = e.nodes[:0], e.edges[:0], e.visits[:0], e.genes[:0], e.prior[:0]
	e.Sims = 0
	deadline := e.budget.start()

	// Phase 1: the root sequence L0.
	off := len(e.genes)
	e.genes = e.initSequence(ctx, e.genes)
	root := e.newNode(off, len(e.genes)-off)
	if e.History != HistoryPaper {
		n := e.g.NumActions()
		e.extra = slices.Grow(e.extra[:0], n*(len(e.genes)-off))[:n*(len(e.genes)-off)]
		clear(e.extra)
		for i, a := range e.genes[off:] {
			e.extra[i*n+int(a)]++ // L0's actions count once
		}
	}

	// Phase 2: EMCTS-SEARCH, in phases.
	left := e.budget.Sims - e.Sims
	if e.BB {
		phases := e.Phases
		if phases <= 0 {
			phases = max(1, int(e.nodes[root].n))
		}
		for p := range phases {
			left -= e.run(root, split(ctx, e.budget, max(left, 0), phases-p, deadline))
			if c := e.stepChild(root); c >= 0 {
				root = c
			}
		}
		if e.Phases <= 0 {
			root = e.walk(root, -1)
		}
	} else {
		e.run(root, split(ctx, e.budget, max(left, 0), 1, deadline))
		root = e.walk(root, e.Phases)
	}

	// Phase 3: the turn is the first turn of the sequence.
	start := len(dst)
	e.root0.CloneInto(e.work)
	for _, a := range e.genome(root) {
		if !inTurn(e.work, e.turn) {
			break
		}
		dst = append(dst, a)
		e.work.Apply(a)
	}
	for inTurn(e.work, e.turn) { // cannot happen for a complete genome
		e.work.Legal(e.mask)
		a := e.mask.Random(e.rng)
		dst = append(dst, a)
		e.work.Apply(a)
	}
	e.last = append(e.last[:0], dst[start:]...)
	return dst, nil
}

// initSequence appends L0 to dst: each action drawn from the policy at
// its state (uniform without one) sharpened by InitTemp; the policies are
// kept in e.prior for the mutations and repairs.
func (e *EMCTS) initSequence(ctx context.Context, dst []games.Action) []games.Action {
	e.root0.CloneInto(e.work)
	usePolicy := e.policy
	for !e.done(e.work) {
		e.work.Legal(e.mask)
		row := make([]float32, e.g.NumActions())
		got := false
		if usePolicy && ctx.Err() == nil && (e.budget.Sims == 0 || e.Sims < e.budget.Sims) {
			e.work.CloneInto(e.leaf)
			clear(e.pri)
			got = e.eval.Evaluate(e.ctx, e.leaf, e.value, e.pri)
			e.Sims++
			usePolicy = got
		}
		var sum float32
		for a := range e.mask.All() {
			p := float32(1)
			if got {
				p = max(e.pri[a], 0)
			}
			row[a] = p
			sum += p
		}
		for a := range e.mask.All() {
			if sum > 0 {
				row[a] /= sum
			} else {
				row[a] = 1 / float32(e.mask.Count())
			}
		}
		e.prior = append(e.prior, row)
		a := e.draw(row)
		dst = append(dst, a)
		e.work.Apply(a)
	}
	return dst
}

// draw picks an action of e.mask with probability row^(1/InitTemp)
// (InitTemp 0: the most probable, ties at random).
func (e *EMCTS) draw(row []float32) games.Action {
	if e.InitTemp <= 0 {
		return e.argmax(row)
	}
	var sum float64
	for a := range e.mask.All() {
		sum += math.Pow(float64(row[a]), 1/e.InitTemp)
	}
	if sum <= 0 {
		return e.mask.Random(e.rng)
	}
	r := e.rng.Float64() * sum
	last := games.NoAction
	for a := range e.mask.All() {
		last = a
		if r -= math.Pow(float64(row[a]), 1/e.InitTemp); r < 0 {
			return a
		}
	}
	return last
}

// argmax returns the action of e.mask with the largest row value, ties
// broken uniformly at random.
func (e *EMCTS) argmax(row []float32) games.Action {
	best, ties := games.NoAction, 0
	var bv float32
	for a := range e.mask.All() {
		switch v := row[a]; {
		case best == games.NoAction || v > bv:
			best, bv, ties = a, v, 1
		case v == bv:
			ties++
			if e.rng.IntN(ties) == 0 {
				best = a
			}
		}
	}
	return best
}

func (e *EMCTS) newNode(off, n int) int32 {
	e.nodes = append(e.nodes, emNode{off: int32(off), n: int32(n), in: -1, visited: -1})
	return int32(len(e.nodes) - 1)
}

func (e *EMCTS) genome(ni int32) []games.Action {
	nd := &e.nodes[ni]
	return e.genes[nd.off : nd.off+nd.n]
}

// run is EMCTS-SEARCH (Algorithm 4) from root until st says stop; it
// returns the number of simulations.
func (e *EMCTS) run(root int32, st stopper) int {
	i := 0
	for ; !st.done(i); i++ {
		e.simulate(root)
	}
	return i
}

// simulate is one EMCTS-SEARCH simulation: select mutations down to a
// node that is not expanded, play its sequence and evaluate, back up,
// expand.
func (e *EMCTS) simulate(root int32) {
	e.path = e.path[:0]
	cur := root
	visits := e.nodes[root].own
	if in := e.nodes[root].in; in >= 0 {
		visits += e.visits[in].n
	}
	for {
		nd := &e.nodes[cur]
		if !nd.expanded {
			break
		}
		// The common case on a chain, inlined: one visited edge scoring
		// above every unvisited one (selectEdge decides the rest).
		if v := nd.visited; v >= 0 && !e.noChainPath {
			x := &e.visits[v]
			if x.next < 0 {
				sq := e.sqrt1(visits)
				if nd.nMaxUnv == 0 || e.score(x, sq) > e.C*float64(nd.maxUnv)*sq {
					e.path = append(e.path, v)
					cur, visits = x.child, x.n
					continue
				}
			}
		}
		ei, v := e.selectEdge(cur, visits)
		if v < 0 {
			e.edges[ei].child = e.mutate(cur, ei)
			v = e.addVisit(cur, ei)
		}
		e.path = append(e.path, v)
		cur, visits = e.visits[v].child, e.visits[v].n
	}
	// Expand the node, playing its sequence from the turn's first state
	// into e.work, and evaluate the state reached.
	e.expand(cur)
	if e.History == HistoryEvals {
		for i, a := range e.genome(cur) {
			e.noteExtra(i, a, 1)
		}
	}
	if e.work.IsTerminal() {
		e.ctx.Terminal(e.work, e.value)
	} else {
		e.eval.Evaluate(e.ctx, e.work, e.value, nil)
	}
	e.Sims++
	// Back up. A keep mutation on the path counts 1/H for each action of
	// the root's sequence (HistoryCode: the published code's backup) or of
	// the sequence it keeps (HistoryNode).
	e.nodes[root].own++
	keeps := 0
	for _, v := range e.path {
		x := &e.visits[v]
		x.n++
		x.w += e.value[x.player]
		if x.keep {
			keeps++
			if e.History == HistoryNode {
				e.noteSequence(e.genome(x.child), 1) // a keep child shares its parent's sequence
			}
		}
	}
	if e.History == HistoryCode && keeps > 0 {
		e.noteSequence(e.genome(root), float32(keeps))
	}
}

// noteSequence adds w/H to the extra count of every action of g (H its
// length).
func (e *EMCTS) noteSequence(g []games.Action, w float32) {
	for i, a := range g {
		e.noteExtra(i, a, w/float32(len(g)))
	}
}

// noteExtra adds w to the extra count of action a at position i (none
// under HistoryPaper; positions beyond L0's length are not kept: no row of
// the played turn reads them).
func (e *EMCTS) noteExtra(i int, a games.Action, w float32) {
	n := e.g.NumActions()
	if e.History != HistoryPaper && (i+1)*n <= len(e.extra) {
		e.extra[i*n+int(a)] += w
	}
}

// addVisit creates the statistics of edge ei of node ni, taken for the
// first time, links them into ni's visited list and updates ni's largest
// unvisited prior; it returns their index.
func (e *EMCTS) addVisit(ni, ei int32) int32 {
	nd, ed := &e.nodes[ni], &e.edges[ei]
	ed.visit = int32(len(e.visits))
	e.visits = append(e.visits, emVisit{edge: ei, child: ed.child, next: nd.visited, prior: ed.prior, player: ed.player, keep: ed.pos < 0})
	nd.visited = ed.visit
	e.nodes[ed.child].in = ed.visit
	if ed.prior != nd.maxUnv {
		return ed.visit
	}
	if nd.nMaxUnv--; nd.nMaxUnv > 0 {
		return ed.visit
	}
	// That was the last unvisited edge of largest prior: find the next.
	nd.maxUnv, nd.nMaxUnv = 0, 0
	for i := nd.first; i < nd.first+nd.cnt; i++ {
		if x := &e.edges[i]; x.visit < 0 {
			nd.noteUnvisited(x.prior)
		}
	}
	return ed.visit
}

// noteUnvisited counts an unvisited edge of prior p into maxUnv/nMaxUnv.
func (nd *emNode) noteUnvisited(p float32) {
	switch {
	case nd.nMaxUnv == 0 || p > nd.maxUnv:
		nd.maxUnv, nd.nMaxUnv = p, 1
	case p == nd.maxUnv:
		nd.nMaxUnv++
	}
}

// selectEdge is UCB-SELECT-BEST with priors (PUCT) at node ni, visited
// N times: Q + C*P*sqrt(N+1)/(1+n), Q = 0 for unvisited mutations, exact
// ties uniformly at random. It
// scores the visited edges and, for all unvisited ones, the largest
// prior (see emNode). It returns the edge and its emVisit (-1 when the
// edge was never taken).
func (e *EMCTS) selectEdge(ni, visits int32) (edge, visit int32) {
	nd := &e.nodes[ni]
	sq := e.sqrt1(visits)
	best, ties := int32(-1), 0
	var bv float64
	for v := nd.visited; v >= 0; v = e.visits[v].next {
		x := &e.visits[v]
		s := e.score(x, sq)
		switch {
		case ties == 0 || s > bv:
			best, bv, ties = v, s, 1
		case s == bv:
			ties++
		}
	}
	unv := 0
	if nd.nMaxUnv > 0 {
		switch s := e.C * float64(nd.maxUnv) * sq; {
		case ties == 0 || s > bv:
			bv, ties, unv = s, 0, int(nd.nMaxUnv)
		case s == bv:
			unv = int(nd.nMaxUnv)
		}
	}
	if ties == 1 && unv == 0 {
		return e.visits[best].edge, best // the common case on a chain: one edge ahead
	}
	r := 0
	if ties+unv > 1 {
		r = e.rng.IntN(ties + unv)
	}
	if r < ties { // the r-th visited edge scoring bv, in list order
		for v := nd.visited; v >= 0; v = e.visits[v].next {
			x := &e.visits[v]
			if e.score(x, sq) == bv {
				if r == 0 {
					return x.edge, v
				}
				r--
			}
		}
	}
	r -= ties
	for i := nd.first; i < nd.first+nd.cnt; i++ { // the r-th unvisited edge of prior maxUnv
		if ed := &e.edges[i]; ed.visit < 0 && ed.prior == nd.maxUnv {
			if r == 0 {
				return i, -1
			}
			r--
		}
	}
	panic("multi: emcts selection found no edge") // unreachable: a node has its keep edge
}

// score is the PUCT score of visited edge x at a node where
// sq = sqrt(N+1).
func (e *EMCTS) score(x *emVisit, sq float64) float64 {
	return x.w/float64(x.n) + e.C*float64(x.prior)*sq/float64(1+x.n)
}

// sqrtTabMax bounds the sqrt table (512 KiB); nodes visited more often
// (long time budgets) compute the root.
const sqrtTabMax = 1 << 16

// sqrt1 returns sqrt(n+1) from a table grown on demand up to sqrtTabMax
// entries (the same correctly rounded values as math.Sqrt).
func (e *EMCTS) sqrt1(n int32) float64 {
	if n >= sqrtTabMax {
		return math.Sqrt(float64(n) + 1)
	}
	for int(n) >= len(e.sqrtTab) {
		e.sqrtTab = append(e.sqrtTab, math.Sqrt(float64(len(e.sqrtTab))+1))
	}
	return e.sqrtTab[n]
}

// priorOf returns the root policy of action a at sequence position i
// (uniform over legal where i is beyond L0).
func (e *EMCTS) priorOf(i int, a games.Action, legal int) float32 {
	if i < len(e.prior) {
		return e.prior[i][a]
	}
	return 1 / float32(legal)
}

// expand creates node ni's edges: every legal replacement of every
// position, then the keep mutation; priors are normalised to sum to 1,
// the keep mutation weighing as much as one position. It plays the
// node's sequence from the turn's first state into e.work on the way and
// leaves e.work at the state reached (where the game ended, if earlier).
func (e *EMCTS) expand(ni int32) {
	g := e.genome(ni)
	first := int32(len(e.edges))
	e.root0.CloneInto(e.work)
	var sum float32
	for i, cur := range g {
		if e.work.IsTerminal() {
			break
		}
		p := int8(e.work.CurrentPlayer())
		e.work.Legal(e.mask)
		k := e.mask.Count()
		for a := range e.mask.All() {
			if a == cur {
				continue
			}
			pr := e.priorOf(i, a, k)
			sum += pr
			e.edges = append(e.edges, emEdge{pos: int32(i), act: a, child: -1, visit: -1, prior: pr, player: p})
		}
		e.work.Apply(cur)
	}
	keep := float32(1)
	sum += keep
	e.edges = append(e.edges, emEdge{pos: -1, act: games.NoAction, child: -1, visit: -1, prior: keep, player: int8(e.root0.CurrentPlayer())})
	nd := &e.nodes[ni]
	nd.first, nd.cnt, nd.expanded = first, int32(len(e.edges))-first, true
	for i := first; i < int32(len(e.edges)); i++ {
		e.edges[i].prior /= sum
		nd.noteUnvisited(e.edges[i].prior)
	}
}

// mutate creates the child of node ni by edge ei: the sequence with
// position pos set to act, the actions after it kept while legal and
// repaired (highest root prior, ties at random) where not, up to the
// horizon.
func (e *EMCTS) mutate(ni, ei int32) int32 {
	ed := e.edges[ei]
	nd := e.nodes[ni]
	if ed.pos < 0 {
		return e.newNode(int(nd.off), int(nd.n))
	}
	old := e.genome(ni) // stays valid: appends never write inside it
	off := len(e.genes)
	e.root0.CloneInto(e.work)
	for _, a := range old[:ed.pos] {
		e.genes = append(e.genes, a)
		e.work.Apply(a)
	}
	e.genes = append(e.genes, ed.act)
	e.work.Apply(ed.act)
	for k := int(ed.pos) + 1; !e.done(e.work); k++ {
		e.work.Legal(e.mask)
		var a games.Action
		if k < len(old) && e.mask.Has(old[k]) {
			a = old[k]
		} else {
			a = e.repair(len(e.genes) - off)
			e.noteExtra(len(e.genes)-off, a, 1)
		}
		e.genes = append(e.genes, a)
		e.work.Apply(a)
	}
	return e.newNode(off, len(e.genes)-off)
}

// repair picks the replacement of position i among e.mask: the legal
// action of highest root prior at i, ties at random (uniform beyond L0).
func (e *EMCTS) repair(i int) games.Action {
	if i < len(e.prior) {
		return e.argmax(e.prior[i])
	}
	return e.mask.Random(e.rng)
}

// walk returns the node reached from ni by following the most visited
// mutation steps times (steps <= 0: until a node none of whose mutations
// was visited, the end of the principal path).
func (e *EMCTS) walk(ni int32, steps int) int32 {
	for i := 0; steps <= 0 || i < steps; i++ {
		c := e.stepChild(ni)
		if c < 0 {
			break
		}
		ni = c
	}
	return ni
}

// stepChild returns the child of ni that a step down the tree takes:
// bestChild, or with StepTemp > 0 a draw from the visits (-1 when none
// was visited).
func (e *EMCTS) stepChild(ni int32) int32 {
	if e.StepTemp <= 0 {
		return e.bestChild(ni)
	}
	var sum float64
	for v := e.nodes[ni].visited; v >= 0; v = e.visits[v].next {
		sum += math.Pow(float64(e.visits[v].n), 1/e.StepTemp)
	}
	if sum <= 0 {
		return e.bestChild(ni)
	}
	r := e.rng.Float64() * sum
	last := int32(-1)
	for v := e.nodes[ni].visited; v >= 0; v = e.visits[v].next {
		x := &e.visits[v]
		last = x.child
		if r -= math.Pow(float64(x.n), 1/e.StepTemp); r < 0 {
			return x.child
		}
	}
	return last
}

// bestChild returns the most visited child of ni (ties: higher Q, then
// lower edge index), or -1 when none was visited.
func (e *EMCTS) bestChild(ni int32) int32 {
	var b *emVisit
	for v := e.nodes[ni].visited; v >= 0; v = e.visits[v].next {
		x := &e.visits[v]
		if b == nil {
			b = x
			continue
		}
		qx, qb := x.w/float64(x.n), b.w/float64(b.n)
		if x.n > b.n || (x.n == b.n && (qx > qb || (qx == qb && x.edge < b.edge))) {
			b = x
		}
	}
	if b == nil {
		return -1
	}
	return b.child
}

// Explain implements Explainer with the improved policy history of the
// study's Eq. 2: for the action a at position i of the last turn, Visits
// is the number of times a mutation (i, a) was taken in the tree, Q their
// mean value for the mover, Prior the root policy at i (uniform without
// a policy) and Score the share of a among all mutations taken at i (0
// when position i was never mutated: a kept from L0).
func (e *EMCTS) Explain(dst []agent.Analysis) []agent.Analysis {
	for i, a := range e.last {
		r := agent.Analysis{Action: a}
		if i < len(e.prior) {
			r.Prior = float64(e.prior[i][a])
		}
		var w float64
		total := 0
		for k := range e.visits {
			x := &e.visits[k]
			if ed := &e.edges[x.edge]; int(ed.pos) == i {
				total += int(x.n)
				if ed.act == a {
					r.Visits += int(x.n)
					w += x.w
				}
			}
		}
		if r.Visits > 0 {
			r.Q = w / float64(r.Visits)
			r.Score = float64(r.Visits) / float64(total)
		}
		dst = append(dst, r)
	}
	return dst
}

// Close releases what the evaluator holds (a network's shared engine).
func (e *EMCTS) Close() error { return closeEval(e.eval) }
