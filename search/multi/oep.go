package multi

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
)

// OEP chooses turns by online evolutionary planning (Justesen, Mahlmann,
// Risi and Togelius, "Playing Multi-Action Adversarial Games: Online
// Evolutionary Planning versus Tree Search", IEEE TCIAIG 2017; first as
// "Online Evolution for Multi-Action Adversarial Games", EvoApplications
// 2016), the tree-less baseline that study 004 cites. Not safe for
// concurrent use.
//
// A genome is one whole turn: the atomic actions from the turn's first
// state to the end of the turn (or of the game). PlanTurn keeps a
// population of Population genomes, at first uniformly random legal
// turns, and repeats one generation until the budget is spent:
//
//  1. evaluate: play each genome not yet evaluated (with Reeval, every
//     genome) from the turn's first state and evaluate the resulting
//     state with the evaluator, from the mover's view (a finished game
//     scores its returns); a genome's fitness is the mean of its
//     evaluations;
//  2. select: sort by fitness and keep the best ceil(Survival *
//     Population) (elitism: the survivors stay unchanged);
//  3. procreate: refill the population with children of two survivors
//     drawn uniformly: uniform crossover, each position taking one
//     parent's action (drawn at random) or, when that one is illegal at
//     that point, the other parent's, or, when both are, a uniformly
//     random legal action (the repair of the paper); then, with
//     probability Mutation, one position drawn uniformly set to another
//     legal action drawn uniformly, the later actions kept while legal
//     and repaired where not.
//
// Every genome a generation plays is a legal turn by construction; where
// the turn's length depends on its actions (in Strands the first stone
// fixes how many follow) the child is played to the end of its own turn,
// so it may be longer or shorter than its parents.
//
// Budget: one evaluation (one evaluator call, or the returns of a
// finished game) counts one simulation, so Budget.Sims bounds a turn's
// evaluator calls exactly; the budget may end inside a generation. The
// turn played is the genome of highest fitness among those evaluated
// (ties: more evaluations, then the older genome).
//
// Defaults (NewOEP): Population 20, Survival 0.5, Mutation 0.5, Reeval
// true. The paper evolves larger populations under budgets of seconds per
// turn; with the study's 250-1,250 evaluations per turn a population of
// 20 still runs 12-60 generations. Reeval suits noisy evaluators (random
// rollouts): a survivor is evaluated again each generation, so a lucky
// evaluation does not keep it forever; with a deterministic evaluator (a
// network) Reeval false spends the budget on new genomes only. Measured
// on the Connect4d test position of multi_test.go (random rollouts,
// seeds 1-20, whole-turn win found): Mutation 0.1 in 10, 13 and 15 of 20
// at 250, 1,000 and 2,000 evaluations, Mutation 0.5 in 10, 19 and 20;
// population 50 with Mutation 0.1 in 4, 20 and 20; Reeval false in 2 of
// 20 at every budget (genomes with one lucky rollout of +1 tie with the
// win and stay).
type OEP struct {
	Population int     // genomes per generation (>= 2)
	Survival   float64 // fraction of the population kept each generation, in (0, 1]
	Mutation   float64 // probability that a child is mutated, in [0, 1]
	Reeval     bool    // evaluate survivors again (mean fitness)

	g      games.Game
	eval   search.Evaluator
	budget Budget
	rng    *rand.Rand
	ctx    *search.EvalContext
	value  []float64

	root, work, leaf games.State
	mask             games.Mask
	turn, mover      int

	pop  []*genome
	free []*genome      // recycled genomes
	old  []games.Action // mutate's copy of the parent

	// Sims is the number of evaluations of the last turn; Generations
	// the number of generations started.
	Sims, Generations int
}

// The defaults of NewOEP and of the `oep` agent.
const (
	oepPopulation = 20
	oepSurvival   = 0.5
	oepMutation   = 0.5
)

// genome is one turn and its fitness statistics.
type genome struct {
	acts []games.Action
	sum  float64 // sum of the mover's values over n evaluations
	n    int
	born int // order of creation in this turn (older first on ties)
}

func (x *genome) fitness() float64 {
	if x.n == 0 {
		return 0
	}
	return x.sum / float64(x.n)
}

// NewOEP returns an OEP planner for the sequential deterministic game g
// with evaluator eval (nil: random rollouts) and a budget per turn.
func NewOEP(g games.Game, eval search.Evaluator, b Budget, seed uint64) (*OEP, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	if g.Type().Dynamics != games.Sequential || g.Type().Chance != games.Deterministic {
		return nil, fmt.Errorf("multi: oep needs a sequential deterministic game, not %s", g.Type().Name)
	}
	if eval == nil {
		eval = &search.Rollout{}
	}
	ctx, err := evalContext(g, eval, seed)
	if err != nil {
		return nil, err
	}
	n := g.NumActions()
	return &OEP{
		Population: oepPopulation, Survival: oepSurvival, Mutation: oepMutation, Reeval: true,
		g: g, eval: eval, budget: b, rng: games.NewRand(seed ^ 0x0e9), ctx: ctx,
		value: make([]float64, g.NumPlayers()),
		root:  g.NewInitialState(), work: g.NewInitialState(), leaf: g.NewInitialState(),
		mask: games.NewMask(n),
	}, nil
}

// evalContext returns an evaluation context with g's return scaling (it
// comes from a walker; a one-node tree provides one).
func evalContext(g games.Game, eval search.Evaluator, seed uint64) (*search.EvalContext, error) {
	o := search.DefaultOptions()
	o.Sims, o.MaxNodes, o.Eval = 1, 1, eval
	t, err := search.New(g, o, seed)
	if err != nil {
		return nil, err
	}
	return t.NewWalker(seed ^ 0x5eed).Ctx, nil
}

func (o *OEP) check() error {
	switch {
	case o.Population < 2:
		return fmt.Errorf("multi: oep population %d < 2", o.Population)
	case !(o.Survival > 0 && o.Survival <= 1):
		return fmt.Errorf("multi: oep survival %v outside (0, 1]", o.Survival)
	case !(o.Mutation >= 0 && o.Mutation <= 1):
		return fmt.Errorf("multi: oep mutation %v outside [0, 1]", o.Mutation)
	}
	return nil
}

// PlanTurn implements Planner.
func (o *OEP) PlanTurn(ctx context.Context, s games.State, dst []games.Action) ([]games.Action, error) {
	if s.IsTerminal() {
		return dst, fmt.Errorf("multi: the game is over")
	}
	if err := o.check(); err != nil {
		return dst, err
	}
	s.CloneInto(o.root)
	o.turn, o.mover = turnOf(s), s.CurrentPlayer()
	o.free = append(o.free, o.pop...)
	o.pop = o.pop[:0]
	o.Sims, o.Generations = 0, 0
	born := 0
	for range o.Population {
		x := o.newGenome(&born)
		o.randomTurn(x)
		o.pop = append(o.pop, x)
	}
	st := split(ctx, o.budget, o.budget.Sims, 1, o.budget.start())
	keep := max(1, min(o.Population, int(math.Ceil(o.Survival*float64(o.Population)-1e-9))))
	for !st.done(o.Sims) {
		o.Generations++
		// 1. Evaluate.
		before := o.Sims
		for _, x := range o.pop {
			if (x.n == 0 || o.Reeval) && !st.done(o.Sims) {
				o.evaluate(x)
			}
		}
		if st.done(o.Sims) || o.Sims == before {
			break // budget spent, or nothing left to evaluate (Survival 1 without Reeval)
		}
		// 2. Select.
		o.sort()
		o.free = append(o.free, o.pop[keep:]...)
		o.pop = o.pop[:keep]
		// 3. Procreate.
		for len(o.pop) < o.Population {
			a, b := o.pop[o.rng.IntN(keep)], o.pop[o.rng.IntN(keep)]
			x := o.newGenome(&born)
			o.crossover(x, a, b)
			if o.rng.Float64() < o.Mutation {
				o.mutate(x)
			}
			o.pop = append(o.pop, x)
		}
	}
	o.sort()
	return append(dst, o.pop[0].acts...), nil
}

// sort orders the population: evaluated genomes first by decreasing
// fitness, then more evaluations, then older; unevaluated ones last.
func (o *OEP) sort() {
	slices.SortStableFunc(o.pop, func(x, y *genome) int {
		if (x.n == 0) != (y.n == 0) {
			if x.n == 0 {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(y.fitness(), x.fitness()); c != 0 {
			return c
		}
		if c := cmp.Compare(y.n, x.n); c != 0 {
			return c
		}
		return cmp.Compare(x.born, y.born)
	})
}

func (o *OEP) newGenome(born *int) *genome {
	var x *genome
	if n := len(o.free); n > 0 {
		x, o.free = o.free[n-1], o.free[:n-1]
		*x = genome{acts: x.acts[:0]}
	} else {
		x = &genome{}
	}
	x.born = *born
	*born++
	return x
}

// evaluate plays x from the turn's first state and adds the evaluation
// of the state reached, from the mover's view, to x's fitness.
func (o *OEP) evaluate(x *genome) {
	o.root.CloneInto(o.leaf)
	for _, a := range x.acts {
		o.leaf.Apply(a)
	}
	if o.leaf.IsTerminal() {
		o.ctx.Terminal(o.leaf, o.value)
	} else {
		o.eval.Evaluate(o.ctx, o.leaf, o.value, nil)
	}
	x.sum += o.value[o.mover]
	x.n++
	o.Sims++
}

// randomTurn sets x to a uniformly random legal turn (each action
// uniform among the legal ones).
func (o *OEP) randomTurn(x *genome) {
	o.root.CloneInto(o.work)
	x.acts = x.acts[:0]
	o.complete(x, nil, 0)
}

// complete extends x, whose actions have been played to o.work, to the
// end of the turn: at position i it keeps old[i] while legal, otherwise
// a uniformly random legal action (the repair).
func (o *OEP) complete(x *genome, old []games.Action, i int) {
	for ; inTurn(o.work, o.turn); i++ {
		o.work.Legal(o.mask)
		var a games.Action
		if i < len(old) && o.mask.Has(old[i]) {
			a = old[i]
		} else {
			a = o.mask.Random(o.rng)
		}
		x.acts = append(x.acts, a)
		o.work.Apply(a)
	}
}

// crossover sets x to the uniform crossover of a and b with repair.
func (o *OEP) crossover(x, a, b *genome) {
	o.root.CloneInto(o.work)
	x.acts = x.acts[:0]
	for i := 0; inTurn(o.work, o.turn); i++ {
		o.work.Legal(o.mask)
		first, second := a, b
		if o.rng.IntN(2) == 1 {
			first, second = b, a
		}
		var act games.Action
		switch {
		case i < len(first.acts) && o.mask.Has(first.acts[i]):
			act = first.acts[i]
		case i < len(second.acts) && o.mask.Has(second.acts[i]):
			act = second.acts[i]
		default:
			act = o.mask.Random(o.rng)
		}
		x.acts = append(x.acts, act)
		o.work.Apply(act)
	}
}

// mutate sets one uniformly drawn position of x to another legal action
// (uniform; the same one when it is the only legal action) and repairs
// the rest of the turn.
func (o *OEP) mutate(x *genome) {
	if len(x.acts) == 0 {
		return
	}
	p := o.rng.IntN(len(x.acts))
	o.root.CloneInto(o.work)
	for _, a := range x.acts[:p] {
		o.work.Apply(a)
	}
	o.work.Legal(o.mask)
	if o.mask.Count() > 1 {
		o.mask.Unset(x.acts[p])
	}
	o.old = append(o.old[:0], x.acts...)
	x.acts = x.acts[:p]
	a := o.mask.Random(o.rng)
	x.acts = append(x.acts, a)
	o.work.Apply(a)
	o.complete(x, o.old, p+1)
}

// Explain implements Explainer: for every action of the last turn (the
// best genome), Visits is the genome's number of evaluations, Q its
// fitness (mean value for the mover), Prior 0, and Score the share of the
// final population holding the same action at the same position.
func (o *OEP) Explain(dst []agent.Analysis) []agent.Analysis {
	if len(o.pop) == 0 {
		return dst
	}
	best := o.pop[0]
	for i, a := range best.acts {
		same := 0
		for _, x := range o.pop {
			if i < len(x.acts) && x.acts[i] == a {
				same++
			}
		}
		dst = append(dst, agent.Analysis{Action: a, Visits: best.n, Q: best.fitness(),
			Score: float64(same) / float64(len(o.pop))})
	}
	return dst
}

// Close releases what the evaluator holds (a network's shared engine).
func (o *OEP) Close() error { return closeEval(o.eval) }
