package multi

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

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
// rollouts, 2,000 simulations) the chain first reaches the winning turn
// at depth 21-114 (seeds 1-6) and its winning edges have Q = 1, but a
// walk of 5 steps returned a sequence near L0 that does not win: 0/20
// seeds for EMCTS-V and EMCTS-BB with Phases 5, against 20/20 for both
// with Phases 0 (seeds 1-20; at 1,000 simulations 20/20 and 18/20, at
// 500 18/20, at 250 13/20 and 14/20, nearly always exactly the runs whose
// chain had reached the win). TestEMCTSChain pins this.
//
// FH-EMCTS (Horizon 3) finds the immediate win on that position in only
// 7/20 seeds at 500-2,000 simulations, a limitation, not a readout
// error: its chain is absorbed by the first sequence it meets in which x
// wins at all, mostly on turn 3 after a reply of o's that does not block
// (the keep mutation scores for the root's mover, a later win counts as
// much as an immediate one, and the refuting mutations of o's actions
// are never tried once the keep scores +1).
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

	nodes []emNode
	edges []emEdge
	genes []games.Action // the genomes of all nodes, back to back
	prior [][]float32    // per root-sequence position: policy by action id
	path  []int32        // edges of the current simulation

	// Sims is the number of evaluator calls and terminal evaluations of
	// the last turn.
	Sims int
}

// emNode is one sequence: genes[off:off+n] (nodes made by the keep
// mutation share their parent's genes).
type emNode struct {
	off, n     int32
	first, cnt int32 // edges; cnt 0 until expanded
	visits     int32
	expanded   bool
}

// emEdge is one mutation: position pos of the parent's sequence set to
// act (pos -1: keep the sequence).
type emEdge struct {
	pos    int32
	act    games.Action
	child  int32 // -1 until first taken
	n      int32
	w      float64 // sum of values for player
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
	// An evaluation context with the game's return scaling comes from a
	// walker; a one-node tree provides it.
	o := search.DefaultOptions()
	o.Sims, o.MaxNodes, o.Eval = 1, 1, eval
	t, err := search.New(g, o, seed)
	if err != nil {
		return nil, err
	}
	_, rollout := eval.(*search.Rollout)
	n := g.NumActions()
	return &EMCTS{
		Horizon: 1, C: 1.5 / 8, InitTemp: 0.5,
		g: g, eval: eval, policy: !rollout, budget: b,
		rng: games.NewRand(seed ^ 0xe3c75), ctx: t.NewWalker(seed ^ 0x5eed).Ctx,
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
	e.nodes, e.edges, e.genes, e.prior = e.nodes[:0], e.edges[:0], e.genes[:0], e.prior[:0]
	e.Sims = 0
	deadline := e.budget.start()

	// Phase 1: the root sequence L0.
	off := len(e.genes)
	e.genes = e.initSequence(ctx, e.genes)
	root := e.newNode(off, len(e.genes)-off)

	// Phase 2: EMCTS-SEARCH, in phases.
	left := e.budget.Sims - e.Sims
	if e.BB {
		phases := e.Phases
		if phases <= 0 {
			phases = max(1, int(e.nodes[root].n))
		}
		for p := range phases {
			left -= e.run(root, split(ctx, e.budget, max(left, 0), phases-p, deadline))
			if c := e.bestChild(root); c >= 0 {
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
	e.nodes = append(e.nodes, emNode{off: int32(off), n: int32(n)})
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
	for e.nodes[cur].expanded {
		ei := e.selectEdge(cur)
		if e.edges[ei].child < 0 {
			c := e.mutate(cur, ei)
			e.edges[ei].child = c
		}
		e.path = append(e.path, ei)
		cur = e.edges[ei].child
	}
	// Play the sequence from the turn's first state and evaluate.
	e.root0.CloneInto(e.leaf)
	for _, a := range e.genome(cur) {
		if e.leaf.IsTerminal() {
			break
		}
		e.leaf.Apply(a)
	}
	if e.leaf.IsTerminal() {
		e.ctx.Terminal(e.leaf, e.value)
	} else {
		e.eval.Evaluate(e.ctx, e.leaf, e.value, nil)
	}
	e.Sims++
	// Back up.
	e.nodes[root].visits++
	for _, ei := range e.path {
		ed := &e.edges[ei]
		ed.n++
		ed.w += e.value[ed.player]
		e.nodes[ed.child].visits++
	}
	e.expand(cur)
}

// selectEdge is UCB-SELECT-BEST with priors (PUCT): Q + C*P*sqrt(N+1)/(1+n),
// Q = 0 for unvisited mutations, exact ties at random.
func (e *EMCTS) selectEdge(ni int32) int32 {
	nd := &e.nodes[ni]
	sq := math.Sqrt(float64(nd.visits) + 1)
	best, ties := int32(-1), 0
	var bv float64
	for i := nd.first; i < nd.first+nd.cnt; i++ {
		ed := &e.edges[i]
		q := 0.0
		if ed.n > 0 {
			q = ed.w / float64(ed.n)
		}
		v := q + e.C*float64(ed.prior)*sq/float64(1+ed.n)
		switch {
		case best < 0 || v > bv:
			best, bv, ties = i, v, 1
		case v == bv:
			ties++
			if e.rng.IntN(ties) == 0 {
				best = i
			}
		}
	}
	return best
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
// the keep mutation weighing as much as one position.
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
			e.edges = append(e.edges, emEdge{pos: int32(i), act: a, child: -1, prior: pr, player: p})
		}
		e.work.Apply(cur)
	}
	e.root0.CloneInto(e.work)
	keep := float32(1)
	sum += keep
	e.edges = append(e.edges, emEdge{pos: -1, act: games.NoAction, child: -1, prior: keep, player: int8(e.work.CurrentPlayer())})
	for i := first; i < int32(len(e.edges)); i++ {
		e.edges[i].prior /= sum
	}
	nd := &e.nodes[ni]
	nd.first, nd.cnt, nd.expanded = first, int32(len(e.edges))-first, true
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
		c := e.bestChild(ni)
		if c < 0 {
			break
		}
		ni = c
	}
	return ni
}

// bestChild returns the most visited child of ni (ties: higher Q, then
// first), or -1 when none was visited.
func (e *EMCTS) bestChild(ni int32) int32 {
	nd := &e.nodes[ni]
	best := int32(-1)
	for i := nd.first; i < nd.first+nd.cnt; i++ {
		ed := &e.edges[i]
		if ed.n == 0 || ed.child < 0 {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := &e.edges[best]
		if ed.n > b.n || (ed.n == b.n && ed.w/float64(ed.n) > b.w/float64(b.n)) {
			best = i
		}
	}
	if best < 0 {
		return -1
	}
	return e.edges[best].child
}
