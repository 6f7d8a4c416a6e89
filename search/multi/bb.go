package multi

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
)

// BB chooses turns with one search tree whose edges are atomic actions:
// MCTS-V (Algorithm 2 of study 004) when Vanilla is set, MCTS-BB
// (bridge-burning, Algorithm 3) otherwise. Not safe for concurrent use.
//
// MCTS-V runs the whole turn budget from the turn's first state, then
// walks down the tree: at each step of the turn it takes an action from
// the visit counts of the current node (Eq. 1) and moves to its child,
// searching no further (an unvisited child's action is drawn uniformly).
//
// MCTS-BB splits the budget evenly over the turn's phases, one per
// atomic action still to play: phase p searches from the state after the
// p-1 committed actions with (remaining budget)/(phases left)
// simulations, then commits an action from the root's visit counts and
// burns the other branches: the next phase's root is the chosen child,
// whose subtree is kept (search.Options.Reuse). Where the turn's length
// depends on its first action (Strands), the first phase counts the
// longest possible turn and later phases share what is left, so the
// whole budget is spent whenever the turn is played to its end.
//
// In both, the action is the most visited one (ties: higher Q, then
// lower id), or drawn proportionally to visits^(1/Temp) while the move
// number is below Options.TempPlies, which is Algorithms 2-3's "draw an
// action from pi-hat" (Temp 1) used for self-play.
type BB struct {
	// Vanilla selects MCTS-V (the whole budget in the first phase).
	Vanilla bool

	g      games.Game
	tree   *search.Tree
	eval   *countingEval // the tree's evaluator
	budget Budget
	expand bool // pass priors to Backup (ExpandVisits 0)
	rng    *rand.Rand

	cur, scratch games.State
	mask         games.Mask
	stats        []search.ActionStat
	rows         []agent.Analysis // the last turn's, for Explain
	hist         []float32        // the last turn's policy history, NumActions per action
	values       []float32        // the last turn's value history, one per action

	// Sims is the number of simulations run for the last turn.
	Sims int
}

// NewBB returns an MCTS-V (vanilla) or MCTS-BB planner for g. o configures
// the tree (selection rule, evaluator, ...); o.Sims and o.Time are the
// budget per turn. Tree reuse is always on (the bridge-burning step keeps
// the chosen subtree). Threads, root parallelism and determinization are
// not supported.
func NewBB(g games.Game, o search.Options, vanilla bool, seed uint64) (*BB, error) {
	if o.Threads > 1 || o.Root > 1 || o.Determinize > 0 || o.ISMCTS {
		return nil, fmt.Errorf("multi: mcts-bb/mcts-v run one single-threaded tree (threads, root, det, ismcts unsupported)")
	}
	if g.Type().Dynamics != games.Sequential {
		return nil, fmt.Errorf("multi: %s is not a sequential game", g.Type().Name)
	}
	b := Budget{Sims: o.Sims, Time: o.Time}
	if err := b.check(); err != nil {
		return nil, err
	}
	o.Reuse = true
	ev := &countingEval{Evaluator: o.Eval}
	if ev.Evaluator == nil {
		ev.Evaluator = &search.Rollout{}
	}
	o.Eval = ev
	if o.MaxNodes == 0 && o.Time == 0 {
		o.MaxNodes = min(2*o.Sims+16, 1<<20) // this turn's simulations plus a reused subtree
	}
	t, err := search.New(g, o, seed)
	if err != nil {
		return nil, err
	}
	o = t.Options()
	return &BB{
		Vanilla: vanilla, g: g, tree: t, eval: ev, budget: b,
		expand: o.ExpandVisits == 0, rng: games.NewRand(seed ^ 0xbb),
		cur: g.NewInitialState(), scratch: g.NewInitialState(),
		mask: games.NewMask(g.NumActions()),
	}, nil
}

// Tree returns the planner's search tree (for inspection).
func (b *BB) Tree() *search.Tree { return b.tree }

// PlanTurn implements Planner (Algorithm 2 or 3, TURN-SELECTION).
func (b *BB) PlanTurn(ctx context.Context, s games.State, dst []games.Action) ([]games.Action, error) {
	if s.IsTerminal() {
		return dst, fmt.Errorf("multi: the game is over")
	}
	s.CloneInto(b.cur)
	turn, player := turnOf(s), s.CurrentPlayer()
	deadline := b.budget.start()
	left := b.budget.Sims
	b.Sims = 0
	b.rows, b.hist, b.values = b.rows[:0], b.hist[:0], b.values[:0]
	var value float32 // the last searched node's value (ValueHistory)
	for phase := 0; inTurn(b.cur, turn); phase++ {
		phases := actionsLeft(b.cur, b.scratch, b.mask)
		// Prepare reuses the subtree below the committed actions; a new
		// root is expanded there, with a call of the evaluator when the
		// rule takes priors from it (PUCT), which the budget counts. When
		// the phase will not search (MCTS-V's walk, no simulation left,
		// cancelled) it gets uniform priors instead: it is only walked,
		// and an unvisited root's action is drawn uniformly anyway.
		if (b.Vanilla && phase > 0) || (b.budget.Sims > 0 && left <= 0) || ctx.Err() != nil {
			b.tree.PrepareWith(b.cur, nil)
		} else {
			calls := b.eval.calls
			b.tree.Prepare(b.cur)
			b.Sims += b.eval.calls - calls
			left -= b.eval.calls - calls
		}
		var st stopper
		switch {
		case !b.Vanilla:
			st = split(ctx, b.budget, left, phases, deadline)
		case phase == 0:
			st = split(ctx, b.budget, left, 1, deadline)
		default:
			st = stopper{ctx: ctx} // sims 0: walk the tree
		}
		n := b.run(st)
		b.Sims += n
		left -= n
		b.stats = b.tree.RootStats(player, b.stats[:0])
		if q, ok := search.MeanQ(b.stats); ok {
			value = float32(q)
		}
		b.values = append(b.values, value)
		a := b.choose(b.cur)
		if a == games.NoAction {
			return dst, fmt.Errorf("multi: no legal action")
		}
		b.rows = append(b.rows, b.row(a))
		b.visitRow(b.cur)
		dst = append(dst, a)
		b.cur.Apply(a)
	}
	return dst, nil
}

// row returns a's statistics among b.stats for Explain.
func (b *BB) row(a games.Action) agent.Analysis {
	r := agent.Analysis{Action: a}
	total := 0
	for _, st := range b.stats {
		total += st.Visits
		if st.Action == a {
			r.Visits, r.Q, r.Prior = st.Visits, st.Q, float64(st.Prior)
		}
	}
	if total > 0 {
		r.Score = float64(r.Visits) / float64(total)
	}
	return r
}

// Explain implements Explainer: per action of the last turn, the
// statistics of its edge at the node it was chosen from (Visits, Q from
// the mover's view, Prior) and its share of that node's visits, the
// improved policy of Eq. 1 (Score).
func (b *BB) Explain(dst []agent.Analysis) []agent.Analysis { return append(dst, b.rows...) }

// Close releases what the evaluator holds (a network's shared engine).
func (b *BB) Close() error { return closeEval(b.eval.Evaluator) }

// countingEval counts the calls of the evaluator it wraps (one
// goroutine: BB's tree is single-threaded).
type countingEval struct {
	search.Evaluator
	calls int
}

// Evaluate implements search.Evaluator.
func (c *countingEval) Evaluate(ctx *search.EvalContext, s games.State, value []float64, priors []float32) bool {
	c.calls++
	return c.Evaluator.Evaluate(ctx, s, value, priors)
}

// run is MCTS-SEARCH of Algorithms 2-3: simulations through the search
// pipeline (select a leaf, evaluate it, back it up) until st says stop.
// It steps the tree's walker 0, so it builds the tree a single-threaded
// search.Tree.Search would; it returns the number of simulations.
func (b *BB) run(st stopper) int {
	t := b.tree
	w := t.Walkers(1)[0]
	i := 0
	for ; !st.done(i); i++ {
		if t.SelectLeaf(w) {
			var pri []float32
			if b.expand {
				pri = w.Priors
				clear(pri)
			}
			if !b.eval.Evaluate(w.Ctx, w.State, w.Value, pri) {
				pri = nil
			}
			t.Backup(w, w.Value, pri)
			continue
		}
		t.Backup(w, w.Value, nil)
	}
	return i
}

// choose picks the action of the phase from b.stats: search.Tree.Choose
// (most visits, or sampled while MoveNumber < TempPlies), or a uniform
// legal action when nothing was visited.
func (b *BB) choose(s games.State) games.Action {
	for _, st := range b.stats {
		if st.Visits > 0 {
			return b.tree.Choose(b.stats, s.MoveNumber())
		}
	}
	s.Legal(b.mask)
	if b.mask.Count() == 0 {
		return games.NoAction
	}
	return b.mask.Random(b.rng)
}
