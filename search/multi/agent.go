package multi

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/spec"
)

// Agent plays the turns of a Planner one atomic action per Act: the first
// Act of a turn plans the whole turn, the following ones return its
// actions while the game follows the plan (same hash and move number as
// expected); any other position is planned afresh. Not safe for
// concurrent use.
type Agent struct {
	p    Planner
	plan []games.Action
	next int
	want games.State // the state the next planned action is for
	mask games.Mask
}

// NewAgent returns an agent that plays p's turns in g.
func NewAgent(g games.Game, p Planner) *Agent {
	return &Agent{p: p, want: g.NewInitialState(), mask: games.NewMask(g.NumActions())}
}

// Planner returns the agent's planner.
func (a *Agent) Planner() Planner { return a.p }

// Act implements agent.Agent.
func (a *Agent) Act(ctx context.Context, s games.State, player int) (games.Action, error) {
	if s.IsTerminal() || s.CurrentPlayer() != player {
		return games.NoAction, fmt.Errorf("multi: player %d is not to move", player)
	}
	if a.next >= len(a.plan) || s.Hash() != a.want.Hash() || s.MoveNumber() != a.want.MoveNumber() {
		var err error
		if a.plan, err = a.p.PlanTurn(ctx, s, a.plan[:0]); err != nil {
			return games.NoAction, err
		}
		a.next = 0
		s.CloneInto(a.want)
	}
	if len(a.plan) == 0 {
		return games.NoAction, fmt.Errorf("multi: empty plan")
	}
	act := a.plan[a.next]
	s.Legal(a.mask)
	if !a.mask.Has(act) {
		return games.NoAction, fmt.Errorf("multi: planned action %s is not legal", s.ActionString(act))
	}
	a.next++
	a.want.Apply(act)
	return act, nil
}

// Explainer is implemented by planners that report the statistics of
// the turn they planned last; every planner of this package does.
type Explainer interface {
	// Explain appends one row per atomic action of the last turn planned,
	// in the order they are played (the meaning of Visits, Q, Prior and
	// Score is the planner's: see its Explain).
	Explain(dst []agent.Analysis) []agent.Analysis
}

// Analyze implements agent.Analyzer: it plans the turn from s and returns
// one row per atomic action of the turn, in playing order, with the
// planner's statistics (Explainer). An Act on s right after it plays the
// analysed turn.
func (a *Agent) Analyze(ctx context.Context, s games.State, player int) ([]agent.Analysis, error) {
	ex, ok := a.p.(Explainer)
	if !ok {
		return nil, fmt.Errorf("multi: planner %T cannot explain its turns", a.p)
	}
	if s.IsTerminal() || s.CurrentPlayer() != player {
		return nil, fmt.Errorf("multi: player %d is not to move", player)
	}
	var err error
	if a.plan, err = a.p.PlanTurn(ctx, s, a.plan[:0]); err != nil {
		return nil, err
	}
	a.next = 0
	s.CloneInto(a.want)
	return ex.Explain(nil), nil
}

// Close releases what the planner's evaluator holds (a network
// evaluator's shared engine); the agent must not be used afterwards.
func (a *Agent) Close() error {
	if c, ok := a.p.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// The registered agents. MCTS-V as the study defines it (Algorithm 2: one
// search per turn) is mcts-v; the `mcts` agent of package search is the
// per-action variant (a full search before every atomic action).

// defaultSims is the study's self-play budget for Connect4d (250
// evaluations per turn; Strands used 500, tournaments 5x those).
const defaultSims = 250

// mctsOptions returns the `mcts` agent's options (mcts-v and mcts-bb take
// the same keys), with sims and time per turn.
func mctsOptions() []agent.Option {
	out := search.AgentOptions()
	for i := range out {
		switch out[i].Key {
		case "sims":
			out[i].Default = fmt.Sprint(defaultSims)
			out[i].Help = "simulations (evaluations) per turn (0 = time only)"
		case "time":
			out[i].Help = "time per turn, e.g. 1s (0 = sims only)"
		}
	}
	return out
}

func newBBAgent(vanilla bool) func(games.Game, *spec.Spec, agent.Env) (agent.Agent, error) {
	return func(g games.Game, s *spec.Spec, env agent.Env) (agent.Agent, error) {
		o, err := bbOptions(g, s, env)
		if err != nil {
			return nil, err
		}
		p, err := NewBB(g, o, vanilla, env.Seed)
		if err != nil {
			return nil, err
		}
		return NewAgent(g, p), nil
	}
}

// bbOptions reads the options of an mcts-v or mcts-bb spec (the `mcts`
// options, sims per turn defaulting to the study's); env's services open
// a network named by eval=.
func bbOptions(g games.Game, s *spec.Spec, env agent.Env) (search.Options, error) {
	if !s.Has("sims") && !s.Has("time") {
		s.Set("sims", fmt.Sprint(defaultSims))
	}
	o, err := search.ParseOptions(g, s, env)
	if err != nil {
		return o, renamed(s.Name, err)
	}
	return o, nil
}

// emctsSpec holds the `emcts` options.
type emctsSpec struct {
	Sims, Horizon, Phases int
	Time                  time.Duration
	C, ITemp, StepTemp    float64
	BB                    bool
	Hist                  string
}

// evalKeys are the `mcts` keys that choose the evaluator; emcts takes
// them with their mcts meaning.
var evalKeys = []string{"eval", "rollout", "eps", "depth", "blend", "static"}

func (m *emctsSpec) table() spec.Table {
	return spec.Table{
		spec.Int("sims", &m.Sims, defaultSims, 0, 1<<30, "evaluations per turn, L0's policy calls included (0 = time only)"),
		spec.Duration("time", &m.Time, 0, 24*time.Hour, "time per turn, e.g. 1s (0 = sims only)"),
		spec.Float("c", &m.C, 1.5/8, 0, 1e6, "PUCT exploration constant over mutations (the study: 8x smaller than MCTS's)"),
		spec.Int("horizon", &m.Horizon, 1, 1, 64, "turns in a sequence: 1 = EMCTS, >1 = flexible horizon FH-EMCTS (the study's tournament: 3)"),
		spec.Int("phases", &m.Phases, 0, 0, 1<<10, "selection phases, steps down the most visited mutations (0 = to the end of that path; bb: the root sequence's length, then to the end)"),
		spec.Bool("bb", &m.BB, false, "EMCTS-BB: split the budget over the phases, moving the root after each"),
		spec.Float("itemp", &m.ITemp, 0.5, 0, 100, "temperature of the root sequence's draw from the policy (0 = greedy)"),
		spec.Float("steptemp", &m.StepTemp, 0, 0, 100, "temperature of each step down the tree (bb's root moves, the final walk): 0 = the most visited mutation, >0 = drawn from visits^(1/steptemp), as the study's published code does in self-play"),
		spec.Choice("hist", &m.Hist, "paper", historyNames, "self-play policy targets: paper = the study's Eq. 2 (visits of the mutations), code = its published code (also L0's actions, repairs and keep mutations, a keep crediting the root's sequence), node = code with a keep crediting the sequence it keeps, evals = L0, the mutations and every evaluated sequence once (node and evals: Canopy's)"),
	}
}

// withEvalOptions returns the options of table t followed by the
// evaluator options of `mcts` (evalKeys).
func withEvalOptions(t spec.Table) []agent.Option {
	out := agent.OptionsOf(t)
	for _, o := range mctsOptions() {
		for _, k := range evalKeys {
			if o.Key == k {
				out = append(out, o)
			}
		}
	}
	return out
}

// parseEval returns the evaluator that the evalKeys of s choose, with
// their mcts meaning (a network for eval=NET, opened by env's
// search.EvaluatorOpener).
func parseEval(g games.Game, s *spec.Spec, env agent.Env) (search.Evaluator, error) {
	sub, _ := spec.Parse(s.Name)
	for _, k := range evalKeys {
		if s.Has(k) {
			sub.Set(k, s.String(k, ""))
		}
	}
	o, err := search.ParseOptions(g, sub, env)
	if err != nil {
		return nil, renamed(s.Name, err)
	}
	if err := sub.Err(evalKeys...); err != nil {
		closeEval(o.Eval)
		return nil, err
	}
	return o.Eval, nil
}

// renamed returns err, an error of search.ParseOptions, as one of agent
// name: the options that this package's agents share with `mcts` are
// parsed by it, and its messages begin "mcts: ", which would misname the
// agent. Other errors are returned unchanged.
func renamed(name string, err error) error {
	msg, ok := strings.CutPrefix(err.Error(), "mcts: ")
	if !ok {
		return err
	}
	return &agentError{name: name, msg: msg, err: err}
}

// agentError is an error of search.ParseOptions under the name of the
// agent whose options it parsed; it unwraps to the original.
type agentError struct {
	name, msg string
	err       error
}

func (e *agentError) Error() string { return e.name + ": " + e.msg }
func (e *agentError) Unwrap() error { return e.err }

// closeEval releases what an evaluator holds (a network evaluator's
// shared engine).
func closeEval(ev search.Evaluator) error {
	if c, ok := ev.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func newEMCTSAgent(g games.Game, s *spec.Spec, env agent.Env) (agent.Agent, error) {
	seed := env.Seed
	var m emctsSpec
	if err := m.parse(s); err != nil {
		return nil, err
	}
	ev, err := parseEval(g, s, env)
	if err != nil {
		return nil, err
	}
	p, err := m.planner(g, ev, seed)
	if err != nil {
		closeEval(ev)
		return nil, err
	}
	return NewAgent(g, p), nil
}

// parse reads the `emcts` options of s (time alone means no simulation
// limit).
func (m *emctsSpec) parse(s *spec.Spec) error {
	if err := m.table().Parse(s); err != nil {
		return err
	}
	if s.Has("time") && !s.Has("sims") {
		m.Sims = 0
	}
	return nil
}

// planner returns the EMCTS planner m describes, on evaluator ev.
func (m *emctsSpec) planner(g games.Game, ev search.Evaluator, seed uint64) (*EMCTS, error) {
	p, err := NewEMCTS(g, ev, Budget{Sims: m.Sims, Time: m.Time}, seed)
	if err != nil {
		return nil, err
	}
	p.Horizon, p.Phases, p.BB, p.C, p.InitTemp, p.StepTemp = m.Horizon, m.Phases, m.BB, m.C, m.ITemp, m.StepTemp
	p.History = HistoryCount(slices.Index(historyNames, m.Hist)) // spec.Choice admits only historyNames
	return p, nil
}

// optionKeys returns the keys of opts, in order.
func optionKeys(opts []agent.Option) []string {
	keys := make([]string, len(opts))
	for i, o := range opts {
		keys[i] = o.Key
	}
	return keys
}

// NewTurnSearcher returns the TurnSearcher that the agent spec s names
// for g (mcts-v, mcts-bb or emcts, with the agent's options and
// defaults), its leaves evaluated by ev instead of by what the evaluator
// options would choose: the hook by which self-play searches whole turns
// with its run's network (package selfplay). The evaluator options (eval,
// rollout, eps, depth, blend, static) must not be set, and oep, which
// keeps no statistics per action, is refused. The caller keeps ev (the
// searcher does not close it); nil means random rollouts.
func NewTurnSearcher(g games.Game, s *spec.Spec, ev search.Evaluator, seed uint64) (TurnSearcher, error) {
	for _, k := range evalKeys {
		if s.Has(k) {
			return nil, fmt.Errorf("%s: %s= has no meaning here: the run's network evaluates the leaves (drop it)", s.Name, k)
		}
	}
	switch s.Name {
	case "mcts-v", "mcts-bb":
		o, err := bbOptions(g, s, agent.Env{}) // no evaluator options: none opens
		if err != nil {
			return nil, err
		}
		if err := s.Err(optionKeys(mctsOptions())...); err != nil {
			return nil, err
		}
		o.Eval = ev
		return NewBB(g, o, s.Name == "mcts-v", seed)
	case "emcts":
		var m emctsSpec
		if err := m.parse(s); err != nil {
			return nil, err
		}
		if err := s.Err(m.table().Keys()...); err != nil {
			return nil, err
		}
		return m.planner(g, ev, seed)
	case "oep":
		return nil, fmt.Errorf("oep keeps no statistics per action, so it gives no policy targets (it is not a TurnSearcher): use mcts-v, mcts-bb or emcts")
	}
	return nil, fmt.Errorf("%q is not a turn searcher: use mcts-v, mcts-bb or emcts (study 004's whole-turn searches; see canopy agents)", s.Name)
}

// oepSpec holds the `oep` options.
type oepSpec struct {
	Sims, Pop          int
	Time               time.Duration
	Survival, Mutation float64
	Reeval             bool
}

func (m *oepSpec) table() spec.Table {
	return spec.Table{
		spec.Int("sims", &m.Sims, defaultSims, 0, 1<<30, "evaluations per turn (0 = time only)"),
		spec.Duration("time", &m.Time, 0, 24*time.Hour, "time per turn, e.g. 1s (0 = sims only)"),
		spec.Int("pop", &m.Pop, oepPopulation, 2, 1<<16, "population: whole turns per generation"),
		spec.Float("survival", &m.Survival, oepSurvival, 0.001, 1, "fraction of the population kept (unchanged) each generation"),
		spec.Float("mutation", &m.Mutation, oepMutation, 0, 1, "probability that a child is mutated (one action changed, the rest repaired)"),
		spec.Bool("reeval", &m.Reeval, true, "evaluate survivors again each generation, fitness = mean (for noisy evaluators such as rollouts; false for a network)"),
	}
}

func newOEPAgent(g games.Game, s *spec.Spec, env agent.Env) (agent.Agent, error) {
	seed := env.Seed
	var m oepSpec
	if err := m.table().Parse(s); err != nil {
		return nil, err
	}
	if s.Has("time") && !s.Has("sims") {
		m.Sims = 0
	}
	ev, err := parseEval(g, s, env)
	if err != nil {
		return nil, err
	}
	p, err := NewOEP(g, ev, Budget{Sims: m.Sims, Time: m.Time}, seed)
	if err != nil {
		closeEval(ev)
		return nil, err
	}
	p.Population, p.Survival, p.Mutation, p.Reeval = m.Pop, m.Survival, m.Mutation, m.Reeval
	return NewAgent(g, p), nil
}

func init() {
	agent.Register(agent.Registration{
		Name:    "mcts-v",
		Summary: "vanilla turn MCTS (study 004, Algorithm 2): one search per multi-action turn, the turn read off the tree by visits; mcts options, budget per turn",
		Options: mctsOptions(),
		New:     newBBAgent(true),
	})
	agent.Register(agent.Registration{
		Name:    "mcts-bb",
		Summary: "bridge-burning MCTS (study 004, Algorithm 3): the turn budget split over its atomic actions, committing one per phase; mcts options, budget per turn",
		Options: mctsOptions(),
		New:     newBBAgent(false),
	})
	agent.Register(agent.Registration{
		Name:    "emcts",
		Summary: "evolutionary MCTS over whole-turn action sequences (study 004, Algorithm 4): bb=true for EMCTS-BB, horizon=3 for flexible horizon",
		Options: withEvalOptions(new(emctsSpec).table()),
		New:     newEMCTSAgent,
	})
	agent.Register(agent.Registration{
		Name:    "oep",
		Summary: "online evolutionary planning (Justesen et al. 2016/2017): a population of whole turns, uniform crossover and mutation with repair, no tree; the study 004 baseline for multi-action turns",
		Options: withEvalOptions(new(oepSpec).table()),
		New:     newOEPAgent,
	})
}
