package search

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

// The evaluator registry: network packages register evaluators by name
// for eval=NAME. (Game heuristics need no registry: they are the
// games.Heuristic capability of a game's states; see lookupHeuristic.)
var (
	regMu      sync.RWMutex
	evaluators = map[string]func(g games.Game) (Evaluator, error){
		"rollout": func(games.Game) (Evaluator, error) { return &Rollout{}, nil },
		"uniform": func(games.Game) (Evaluator, error) { return Uniform{}, nil },
	}
)

// RegisterEvaluator makes an evaluator available as eval=name.
func RegisterEvaluator(name string, f func(g games.Game) (Evaluator, error)) {
	regMu.Lock()
	defer regMu.Unlock()
	evaluators[name] = f
}

// lookupHeuristic returns g's heuristic (for bias=, rollout=heuristic) when
// g's states implement games.Heuristic, else nil.
func lookupHeuristic(g games.Game) Heuristic {
	if _, ok := g.NewInitialState().(games.Heuristic); !ok {
		return nil
	}
	return stateHeuristic{}
}

// stateHeuristic is the Heuristic of games whose states implement
// games.Heuristic: it asks the state being searched (an interface
// assertion, no allocation); a state without the capability scores 0.
// It holds nothing, so it is safe for concurrent use.
type stateHeuristic struct{}

func (stateHeuristic) Score(s games.State, player int, a games.Action) float64 {
	if h, ok := s.(games.Heuristic); ok {
		return h.HeuristicValue(player, a)
	}
	return 0
}

var agentOptions = []agent.Option{
	{Key: "sel", Default: "uct", Help: "selection: uct, ucb1tuned, puct, rave, poolrave, alphaamaf"},
	{Key: "c", Default: "rule's", Help: "exploration constant (uct 1.4, ucb1tuned 1, puct 1.5, rave family 0.3)"},
	{Key: "sims", Default: "1000", Help: "simulations per move (0 = time only)"},
	{Key: "time", Default: "0", Help: "time per move, e.g. 100ms (0 = sims only)"},
	{Key: "nodes", Default: "sims+16 or 1M", Help: "node budget"},
	{Key: "full", Default: "keep", Help: "when the node budget is spent: keep (simulate without new nodes) or stop"},
	{Key: "expand", Default: "1 (puct: 0)", Help: "expand a node at this many visits; 0 = at its evaluation, with priors"},
	{Key: "eval", Default: "rollout", Help: "leaf evaluator: rollout, uniform, blend, or a registered network"},
	{Key: "rollout", Default: "random", Help: "rollout policy: random or heuristic (epsilon-greedy)"},
	{Key: "eps", Default: "0.1", Help: "epsilon of heuristic rollouts"},
	{Key: "depth", Default: "0", Help: "rollout depth limit in plies (0 = to the end; value 0 at the cut)"},
	{Key: "blend", Default: "0.5", Help: "eval=blend: weight of the static value (rest: a random rollout of `turns` turns)"},
	{Key: "static", Default: "uniform", Help: "eval=blend: the static evaluator (uniform = value 0, or a registered one)"},
	{Key: "turns", Default: "0 (blend: 8)", Help: "rollout limit in player turns (0 = none; value 0 at the cut)"},
	{Key: "fpu", Default: "0", Help: "puct: value of unvisited actions"},
	{Key: "dir", Default: "0", Help: "root Dirichlet noise alpha (0 = none)"},
	{Key: "dirfrac", Default: "0.25", Help: "fraction of Dirichlet noise"},
	{Key: "ravesched", Default: "sqrt", Help: "rave beta: sqrt = sqrt(k/(3n+k)), silver = na/(n+na+4b^2 n na)"},
	{Key: "ravek", Default: "1000", Help: "k of the sqrt schedule and of alpha-AMAF"},
	{Key: "raveb", Default: "0.1", Help: "b of the silver schedule"},
	{Key: "alpha", Default: "0", Help: "alphaamaf: constant weight when ravek=0"},
	{Key: "poolk", Default: "10", Help: "poolrave: pool size"},
	{Key: "poolp", Default: "0.5", Help: "poolrave: probability of a pool move"},
	{Key: "bias", Default: "0", Help: "progressive bias weight b (needs a game heuristic)"},
	{Key: "final", Default: "visits", Help: "final move: visits or value"},
	{Key: "temp", Default: "1", Help: "temperature for sampled moves"},
	{Key: "tempplies", Default: "0", Help: "sample by visits^(1/temp) while move number < this"},
	{Key: "threads", Default: "1", Help: "goroutines sharing one tree (tree parallelism)"},
	{Key: "root", Default: "1", Help: "independent trees merged at the root (root parallelism)"},
	{Key: "reuse", Default: "false", Help: "reuse the subtree of the position reached between moves"},
	{Key: "tt", Default: "false", Help: "transposition table (Zobrist hash, verified)"},
	{Key: "det", Default: "0 (hidden info: 8)", Help: "determinizations K: K sampled deals x sims/K each"},
	{Key: "ismcts", Default: "false", Help: "single-observer ISMCTS (re-determinize every simulation)"},
	{Key: "simsel", Default: "ucb", Help: "simultaneous nodes: ucb (decoupled sel rule), exp3 or rm (regret matching), sampled per player"},
	{Key: "simgamma", Default: "0.1", Help: "simsel=exp3/rm: uniform exploration mixed into the strategy (exp3 eta = simgamma/K)"},
	{Key: "simfinal", Default: "sample", Help: "simsel=exp3/rm at a simultaneous root: sample the average strategy, or max (its most probable action)"},
}

func init() {
	agent.Register(agent.Registration{
		Name:    "mcts",
		Summary: "Monte Carlo tree search (UCT, UCB1-Tuned, PUCT, RAVE family; Exp3/regret matching at simultaneous nodes; rollouts or evaluators)",
		Options: agentOptions,
		New: func(g games.Game, s *spec.Spec, seed uint64) (agent.Agent, error) {
			o, err := ParseOptions(g, s)
			if err != nil {
				return nil, err
			}
			return NewAgent(g, o, seed)
		},
	})
}

// ParseOptions reads the `mcts` spec options for game g.
func ParseOptions(g games.Game, s *spec.Spec) (Options, error) {
	o := DefaultOptions()
	name := s.Choice("sel", "uct", "uct", "ucb1", "ucb1tuned", "puct", "rave", "poolrave", "alphaamaf")
	o.Rule = ruleNames[name]
	o.C = s.Float("c", -1)
	o.Sims = s.IntRange("sims", o.Sims, 0, 1<<30)
	o.Time = s.Duration("time", 0)
	if s.Has("time") && !s.Has("sims") {
		o.Sims = 0
	}
	o.MaxNodes = s.IntRange("nodes", 0, 0, 1<<26)
	o.StopWhenFull = s.Choice("full", "keep", "keep", "stop") == "stop"
	o.ExpandVisits = s.IntRange("expand", -1, -1, 1<<20)
	o.FPU = s.Float("fpu", 0)
	o.DirichletA = s.Float("dir", 0)
	o.DirichletEps = s.Float("dirfrac", o.DirichletEps)
	o.RaveSchedule = s.Choice("ravesched", o.RaveSchedule, "sqrt", "silver")
	o.RaveK = s.Float("ravek", o.RaveK)
	o.RaveB = s.Float("raveb", o.RaveB)
	o.Alpha = s.Float("alpha", 0)
	o.PoolK = s.IntRange("poolk", o.PoolK, 1, 64)
	o.PoolP = s.Float("poolp", o.PoolP)
	o.Bias = s.Float("bias", 0)
	o.Final = s.Choice("final", o.Final, "visits", "value")
	o.Temp = s.Float("temp", o.Temp)
	o.TempPlies = s.IntRange("tempplies", 0, 0, 1<<20)
	o.Threads = s.IntRange("threads", 1, 1, 1024)
	o.Root = s.IntRange("root", 1, 1, 1024)
	o.Reuse = s.Bool("reuse", false)
	o.TT = s.Bool("tt", false)
	o.Determinize = s.IntRange("det", -1, -1, 1<<20)
	o.ISMCTS = s.Bool("ismcts", false)
	switch s.Choice("simsel", "ucb", simRuleNames...) {
	case "exp3":
		o.SimSel = SimExp3
	case "rm":
		o.SimSel = SimRM
	}
	o.SimGamma = s.Float("simgamma", o.SimGamma)
	o.SimFinal = s.Choice("simfinal", o.SimFinal, "sample", "max")
	rollout := s.Choice("rollout", "random", "random", "heuristic")
	eps := s.Float("eps", 0.1)
	depth := s.IntRange("depth", 0, 0, 1<<20)
	blendW := s.Float("blend", 0.5)
	staticName := s.String("static", "uniform")
	turns := s.IntRange("turns", 0, 0, 1<<20)
	evalName := s.String("eval", "rollout")
	if err := s.Err(); err != nil && len(s.Unused()) == 0 {
		return o, err // malformed value; unknown keys are reported by the registry
	}
	if o.Bias != 0 || rollout == "heuristic" {
		o.Heuristic = lookupHeuristic(g)
		if o.Heuristic == nil {
			return o, fmt.Errorf("mcts: no heuristic is registered for %s (needed by bias= or rollout=heuristic)", g.Type().Name)
		}
	}
	ro := &Rollout{Depth: depth, Turns: turns}
	if rollout == "heuristic" {
		ro.Guide, ro.Epsilon = o.Heuristic, eps
	}
	lookupEval := func(name string) (Evaluator, error) {
		regMu.RLock()
		f, ok := evaluators[name]
		regMu.RUnlock()
		if !ok {
			if ev, ok, err := resolveEvaluator(g, name); ok || err != nil {
				return ev, err
			}
			var names []string
			for k := range evaluators {
				names = append(names, k)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("mcts: unknown evaluator %q (available: blend, %s, or a network: a weights file, a shipped name, init)", name, strings.Join(names, ", "))
		}
		return f(g)
	}
	switch evalName {
	case "rollout":
		o.Eval = ro
	case "blend":
		static, err := lookupEval(staticName)
		if err != nil {
			return o, err
		}
		if ro.Turns == 0 && ro.Depth == 0 {
			ro.Turns = 8
		}
		o.Eval = NewBlend(g, static, ro, blendW)
	default:
		ev, err := lookupEval(evalName)
		if err != nil {
			return o, err
		}
		o.Eval = ev
	}
	if o.Determinize < 0 {
		o.Determinize = 0
		if g.Type().Information == games.ImperfectInformation && !o.ISMCTS {
			if _, ok := g.NewInitialState().(games.Resampler); ok {
				o.Determinize = 8
			}
		}
	}
	return o, nil
}

// Agent is the `mcts` agent: Options plus the trees it searches with.
// It is not safe for concurrent use.
type Agent struct {
	g     games.Game
	opt   Options
	trees []*Tree // Root trees
	det   games.State
	acc   []ActionStat // per action id: merged root statistics
	stats []ActionStat
	seed  uint64

	// The statistics of the last Analyze, consumed by an Act on the same
	// position right after it, so that the move matches the analysis.
	analyzed []ActionStat
	anKey    [3]uint64 // hash, move number, player
}

// NewAgent returns an mcts agent for g.
func NewAgent(g games.Game, o Options, seed uint64) (*Agent, error) {
	a := &Agent{g: g, opt: o, seed: seed, acc: make([]ActionStat, g.NumActions())}
	for i := range max(o.Root, 1) {
		to := o
		if o.Root > 1 {
			to.Root = 1
			if to.Sims > 0 {
				to.Sims = max(1, o.Sims/o.Root)
			}
		}
		if o.Determinize > 0 && to.Sims > 0 {
			to.Sims = max(1, to.Sims/o.Determinize)
			if to.Time > 0 {
				to.Time /= time.Duration(o.Determinize)
			}
		}
		t, err := New(g, to, seed+uint64(i)*0x632be59bd9b4e019)
		if err != nil {
			return nil, err
		}
		a.trees = append(a.trees, t)
	}
	if o.ISMCTS || o.Determinize > 0 {
		if _, ok := g.NewInitialState().(games.Resampler); !ok {
			return nil, fmt.Errorf("mcts: det/ismcts need a game with hidden-information resampling; %s has none", g.Type().Name)
		}
		a.det = g.NewInitialState()
	}
	if o.ISMCTS {
		if o.Threads > 1 || o.Determinize > 0 {
			return nil, fmt.Errorf("mcts: ismcts runs single-threaded and without det (got threads=%d, det=%d)", o.Threads, o.Determinize)
		}
		for _, t := range a.trees {
			t.ismcts = true
		}
	}
	return a, nil
}

// Tree returns the agent's first tree (for inspection in tests).
func (a *Agent) Tree() *Tree { return a.trees[0] }

// Stats searches s for player and returns the merged root statistics,
// sorted by decreasing visits.
func (a *Agent) Stats(ctx context.Context, s games.State, player int) ([]ActionStat, error) {
	if s.IsTerminal() {
		return nil, fmt.Errorf("mcts: the game is over")
	}
	if p := s.CurrentPlayer(); p != player && p != games.SimultaneousPlayer {
		return nil, fmt.Errorf("mcts: asked for player %d but player %d is to move", player, p)
	}
	for i := range a.acc {
		a.acc[i] = ActionStat{Action: games.Action(i)}
	}
	k := max(a.opt.Determinize, 1)
	for d := range k {
		var wg sync.WaitGroup
		for _, t := range a.trees {
			root := s
			if a.opt.Determinize > 0 {
				if d == 0 && len(a.trees) > 1 {
					return nil, fmt.Errorf("mcts: det and root parallelism cannot be combined")
				}
				s.(games.Resampler).Resample(player, t.rng, a.det)
				root = a.det
			}
			if t.ismcts {
				t.observer = player
				t.obsRoot = s
			}
			if len(a.trees) == 1 {
				t.Search(ctx, root)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Search(ctx, root)
			}()
		}
		wg.Wait()
		for _, t := range a.trees {
			a.stats = t.RootStats(player, a.stats[:0])
			for _, st := range a.stats {
				m := &a.acc[st.Action]
				m.Q = (m.Q*float64(m.Visits) + st.Q*float64(st.Visits)) / float64(max(m.Visits+st.Visits, 1))
				m.Visits += st.Visits
				m.Prior = st.Prior
				m.AmafVisits += st.AmafVisits
				m.AmafQ = st.AmafQ
				m.Strategy += st.Strategy // each tree's strategy weighs the same; normalised below
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	out := make([]ActionStat, 0, 16)
	mask := games.NewMask(a.g.NumActions())
	if ss, ok := s.(games.SimultaneousState); ok && s.CurrentPlayer() == games.SimultaneousPlayer {
		ss.LegalFor(player, mask)
	} else {
		s.Legal(mask)
	}
	var strat float64
	for act := range mask.All() {
		out = append(out, a.acc[act])
		strat += a.acc[act].Strategy
	}
	if strat > 0 {
		for i := range out {
			out[i].Strategy /= strat
		}
	}
	sortStats(out)
	return out, nil
}

// Act implements agent.Agent.
func (a *Agent) Act(ctx context.Context, s games.State, player int) (games.Action, error) {
	st := a.analyzed
	a.analyzed = nil
	if st == nil || a.anKey != [3]uint64{s.Hash(), uint64(s.MoveNumber()), uint64(player)} {
		var err error
		if st, err = a.Stats(ctx, s, player); err != nil {
			return games.NoAction, err
		}
	}
	if len(st) == 0 {
		return games.NoAction, fmt.Errorf("mcts: no legal action for player %d", player)
	}
	return a.trees[0].Choose(st, s.MoveNumber()), nil
}

// Analyze implements agent.Analyzer: visits, Q and prior per action.
func (a *Agent) Analyze(ctx context.Context, s games.State, player int) ([]agent.Analysis, error) {
	st, err := a.Stats(ctx, s, player)
	if err != nil {
		return nil, err
	}
	a.analyzed, a.anKey = st, [3]uint64{s.Hash(), uint64(s.MoveNumber()), uint64(player)}
	out := make([]agent.Analysis, len(st))
	for i, x := range st {
		out[i] = agent.Analysis{Action: x.Action, Visits: x.Visits, Q: x.Q, Prior: float64(x.Prior), Score: x.AmafQ}
	}
	return out, nil
}

// Close releases what the agent's evaluator holds (a network evaluator's
// shared engine); the agent must not be used afterwards.
func (a *Agent) Close() error {
	if c, ok := a.opt.Eval.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
