package search

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

// builtinEvaluators are the evaluators eval=NAME names without a network.
// Any other name is a network reference (a weights file, a shipped network,
// init or default), opened by the EvaluatorOpener the caller passes in the
// agent.Env.
var builtinEvaluators = map[string]func(g games.Game) (Evaluator, error){
	"rollout": func(games.Game) (Evaluator, error) { return &Rollout{}, nil },
	"uniform": func(games.Game) (Evaluator, error) { return Uniform{}, nil },
}

// EvaluatorOpener opens the leaf evaluator that a network reference names
// (eval=FILE, a shipped network's name, init, default): search/engine's
// Pool is one, and commands pass it in the agent.Env of every agent they
// build, so that `mcts:eval=NET` shares the network's engine with the
// command's other network agents. ok is false when ref is not a network
// reference; the evaluator may hold resources (an io.Closer), released by
// the agent's Close.
type EvaluatorOpener interface {
	OpenEvaluator(g games.Game, ref string) (ev Evaluator, ok bool, err error)
}

// builtinNames lists the built-in evaluators, sorted.
func builtinNames() string {
	names := make([]string, 0, len(builtinEvaluators))
	for k := range builtinEvaluators {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
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

// scoreAll implements batchHeuristic for states with the
// games.HeuristicBatch capability.
func (stateHeuristic) scoreAll(s games.State, player int, legal games.Mask, dst []float64) bool {
	h, ok := s.(games.HeuristicBatch)
	if ok {
		h.HeuristicValues(player, legal, dst)
	}
	return ok
}

// unitHeuristic scores every action 1 (pbh=one): progressive bias then
// adds b/(1+n) to every edge alike.
var unitHeuristic = HeuristicFunc(func(games.State, int, games.Action) float64 { return 1 })

// mctsSpec holds the `mcts` agent's options as given; ParseOptions
// turns them into Options (rule-dependent defaults, evaluators).
type mctsSpec struct {
	Sel, Full, Eval, Rollout, Static, RaveSched, Final, SimSel, SimFinal string
	PBForm, PBH, AmafExplore, Rewards, Cut, Pool, Backup, Objective      string
	C, FPU, Dir, DirFrac, RaveK, RaveB, Alpha, PoolP, Bias, Temp, Eps    float64
	Blend, SimGamma, CutScale                                            float64
	Sims, Nodes, Expand, PoolK, TempPlies, Threads, Root, Det            int
	Depth, Turns                                                         int
	Time                                                                 time.Duration
	Reuse, TT, ISMCTS                                                    bool
}

// table declares the `mcts` options bound to m: key, type, default,
// range and help in one place (the agent registry's help, spec parsing
// and range errors all come from it).
func (m *mctsSpec) table() spec.Table {
	d := DefaultOptions()
	return spec.Table{
		spec.Choice("sel", &m.Sel, "uct", ruleChoices(), "selection rule"),
		spec.Float("c", &m.C, -1, -1, 1e6, "exploration constant; -1 = the rule's ("+ruleDefaultsHelp()+")"),
		spec.Int("sims", &m.Sims, d.Sims, 0, 1<<30, "simulations per move (0 = time only)"),
		spec.Duration("time", &m.Time, 0, 24*time.Hour, "time per move, e.g. 100ms (0 = sims only; time alone means no simulation limit)"),
		spec.Int("nodes", &m.Nodes, 0, 0, 1<<26, "node budget (0 = sims+16, or 1M with a time budget)"),
		spec.Choice("full", &m.Full, "keep", []string{"keep", "stop"}, "when the node budget is spent: keep simulating without new nodes, or stop"),
		spec.Int("expand", &m.Expand, -1, -1, 1<<20, "expand a node at this many visits; 0 = at its evaluation, with priors; -1 = the rule's (1; puct 0)"),
		spec.File("eval", &m.Eval, "rollout", "leaf evaluator: rollout, uniform, blend, or a network (a weights file, a shipped name, init)"),
		spec.Choice("backup", &m.Backup, BackupMaxN, BackupKinds, "network values in the tree: maxn (each player its own value from a per-player value head) or paranoid (the mover's value v, -v/(players-1) for the others: exact for two players); the same with a scalar value head"),
		spec.Choice("rollout", &m.Rollout, "random", []string{"random", "heuristic"}, "rollout policy (heuristic: epsilon-greedy on the game's heuristic)"),
		spec.Float("eps", &m.Eps, 0.1, 0, 1, "epsilon of heuristic rollouts"),
		spec.Int("depth", &m.Depth, 0, 0, 1<<20, "rollout depth limit in plies (0 = to the end; the value at the cut: see cut)"),
		spec.Float("blend", &m.Blend, 0.5, 0, 1, "eval=blend: weight of the static value (rest: a random rollout of turns player turns)"),
		spec.File("static", &m.Static, "uniform", "eval=blend: the static evaluator (uniform = value 0, or a network)"),
		spec.Int("turns", &m.Turns, 0, 0, 1<<20, "rollout limit in player turns (0 = none, eval=blend: 8; the value at the cut: see cut)"),
		spec.Choice("cut", &m.Cut, "zero", CutKinds, "value of a rollout cut off by depth or turns: zero, heuristic (tanh((h_p - mean of the others' h)/cutscale), h_p a player's best heuristic value, 0 when not choosing), score (the same on the game's running scores) or state (the same on the game's own evaluation of the position, Sushi Go's score + table + projected standings, Sequence's open windows and sequences)"),
		spec.Float("cutscale", &m.CutScale, 10, 1e-9, 1e9, "cut=heuristic/score/state: the difference that maps to tanh(1) = 0.76"),
		spec.Float("fpu", &m.FPU, 0, -1, 1, "puct: value of unvisited actions"),
		spec.Float("dir", &m.Dir, 0, 0, 1000, "root Dirichlet noise alpha (0 = none)"),
		spec.Float("dirfrac", &m.DirFrac, d.DirichletEps, 0, 1, "fraction of Dirichlet noise"),
		spec.Choice("ravesched", &m.RaveSched, d.RaveSchedule.String(), namedChoices(raveScheduleNames), "rave beta: sqrt = sqrt(k/(3n+k)), silver = na/(n+na+4b^2 n na); additive = the additive score x + alpha*x_rave + c*sqrt(2 ln N/n), alpha = (k-na)/k unclamped, on 0/1 win rates (c default 1), study 001's as printed (alias study001); additive-clamped = the same with alpha >= 0 (alias study001clamp)"),
		spec.Float("ravek", &m.RaveK, d.RaveK, 0, 1e12, "k of the sqrt schedule and of alpha-AMAF; beta of ravesched=additive and additive-clamped"),
		spec.Choice("amafexplore", &m.AmafExplore, d.AmafExplore.String(), namedChoices(amafExploreNames), "rave family: exploration term around the blended mean: uct c*sqrt(ln N/n), or ucb1tuned (UCB1-Tuned's variance bound, study 003)"),
		spec.Float("raveb", &m.RaveB, d.RaveB, 0, 1e6, "b of the silver schedule"),
		spec.Float("alpha", &m.Alpha, 0, 0, 1, "alphaamaf: constant weight when ravek=0"),
		spec.Int("poolk", &m.PoolK, d.PoolK, 1, 64, "poolrave: pool size"),
		spec.Float("poolp", &m.PoolP, d.PoolP, 0, 1, "poolrave: probability of a pool move"),
		spec.Choice("pool", &m.Pool, d.PoolAt.String(), namedChoices(poolAtNames), "poolrave: where pool moves are played: rollout (Rimmel et al. 2010: rollout moves from the last tree node's pool), or tree (study 001, section 4.1.4: with probability poolp a selection step takes one of the poolk edges with the best AMAF value instead of the tree policy)"),
		spec.Float("bias", &m.Bias, 0, -1e6, 1e6, "progressive bias weight b on the heuristic scaled to [0, 1] per node (needs a game heuristic; pbform=study003: default 0.2)"),
		spec.Choice("pbh", &m.PBH, "game", []string{"game", "one"}, "progressive bias heuristic: game (the game's heuristic, scaled to [0, 1] per node) or one (h = 1 for every action: the bias term is b/(1+n), study 003's eq. 5 as printed, its \"Progressive Bias\" row without the custom heuristic; any game)"),
		spec.Choice("pbform", &m.PBForm, d.PBForm.String(), namedChoices(pbFormNames), "progressive bias score: added = the rule's score + b*h/(1+n) (alias canopy); uct-ln1 = Q + c*sqrt(ln(N+1)/n) + b*h/(1+n), sel=uct, c default 5, bias default 0.2: study 003's eq. 5 (alias study003)"),
		spec.Choice("rewards", &m.Rewards, "signed", []string{"signed", "01"}, "value scale in selection: signed [-1, 1], or 01 (x = (v+1)/2, as in studies with 0/1 rewards: study 001's UCB1 with Cp is c = 2*sqrt(2)*Cp)"),
		spec.Choice("objective", &m.Objective, ObjectiveReturns, ObjectiveKinds, ObjectiveHelp),
		spec.Choice("final", &m.Final, d.Final.String(), namedChoices(finalMoveNames), "final move: most visits or best value"),
		spec.Float("temp", &m.Temp, d.Temp, 0, 100, "temperature for sampled moves"),
		spec.Int("tempplies", &m.TempPlies, 0, 0, 1<<20, "sample by visits^(1/temp) while move number < this"),
		spec.Int("threads", &m.Threads, 1, 1, 1024, "goroutines sharing one tree (tree parallelism)"),
		spec.Int("root", &m.Root, 1, 1, 1024, "independent trees merged at the root (root parallelism)"),
		spec.Bool("reuse", &m.Reuse, false, "reuse the subtree of the position reached between moves"),
		spec.Bool("tt", &m.TT, false, "transposition table (Zobrist hash, verified)"),
		spec.Int("det", &m.Det, -1, -1, 1<<20, "determinizations K: K sampled deals x sims/K each (-1: 8 for hidden information, else 0)"),
		spec.Bool("ismcts", &m.ISMCTS, false, "single-observer ISMCTS: re-determinize every simulation; every sel rule, with availability counts for N; sequential-move games, threads=1, no det"),
		spec.Choice("simsel", &m.SimSel, "ucb", simRuleNames, "simultaneous nodes: ucb (decoupled sel rule), exp3 or rm (regret matching), sampled per player"),
		spec.Float("simgamma", &m.SimGamma, d.SimGamma, 0, 1, "simsel=exp3/rm: uniform exploration mixed into the strategy (exp3 eta = simgamma/K)"),
		spec.Choice("simfinal", &m.SimFinal, d.SimFinal.String(), namedChoices(simFinalNames), "simsel=exp3/rm at a simultaneous root: max (the average strategy's most probable action), or sample it (for mixed equilibria; weak at small budgets)"),
	}
}

// AgentOptions documents the `mcts` options for the registry (and for
// the agents of search/multi, which take the same keys). The caller owns
// the returned slice.
func AgentOptions() []agent.Option { return slices.Clone(agentOptions()) }

// agentOptions builds the documentation once: four registrations read it
// at start-up, and building the table formats every default and range.
var agentOptions = sync.OnceValue(func() []agent.Option {
	var m mctsSpec
	return agent.OptionsOf(m.table())
})

func init() {
	agent.Register(agent.Registration{
		Name:    "mcts",
		Summary: "Monte Carlo tree search (UCT, UCB1-Tuned, PUCT, RAVE family; Exp3/regret matching at simultaneous nodes; rollouts or evaluators)",
		Options: AgentOptions(),
		New: func(g games.Game, s *spec.Spec, env agent.Env) (agent.Agent, error) {
			o, err := ParseOptions(g, s, env)
			if err != nil {
				return nil, err
			}
			return NewAgent(g, o, env.Seed)
		},
	})
}

// ParseOptions reads the `mcts` spec options for game g. Values out of
// range are errors naming the option and its range; unknown keys are
// left for the registry to report. A network named by eval= or static= is
// opened by env's EvaluatorOpener (see EvaluatorOpener); without one such
// a name is an error that says so.
func ParseOptions(g games.Game, s *spec.Spec, env agent.Env) (Options, error) {
	var m mctsSpec
	o := DefaultOptions()
	if err := m.table().Parse(s); err != nil {
		return o, err // spec.Table.Apply names the agent and the option
	}
	o.Rule, _ = ParseRule(m.Sel) // sel is one of ruleChoices()
	o.C = m.C
	o.Sims, o.Time = m.Sims, m.Time
	if s.Has("time") && !s.Has("sims") {
		o.Sims = 0
	}
	o.MaxNodes = m.Nodes
	o.StopWhenFull = m.Full == "stop"
	o.ExpandVisits = m.Expand
	o.FPU, o.DirichletA, o.DirichletEps = m.FPU, m.Dir, m.DirFrac
	o.RaveSchedule, _ = ParseRaveSchedule(m.RaveSched) // one of namedChoices(raveScheduleNames)
	o.PBForm, _ = ParsePBForm(m.PBForm)
	o.RaveK, o.RaveB, o.Alpha = m.RaveK, m.RaveB, m.Alpha
	// The choices below are among namedChoices of their tables.
	o.AmafExplore, _ = ParseAmafExplore(m.AmafExplore)
	o.PoolAt, _ = ParsePoolAt(m.Pool)
	o.Final, _ = ParseFinalMove(m.Final)
	o.SimFinal, _ = ParseSimFinal(m.SimFinal)
	o.Rewards01 = m.Rewards == "01"
	o.Objective = m.Objective
	if err := CheckObjective(g, o.Objective); err != nil {
		return o, fmt.Errorf("mcts: %w", err)
	}
	o.PoolK, o.PoolP = m.PoolK, m.PoolP
	o.Bias, o.Temp, o.TempPlies = m.Bias, m.Temp, m.TempPlies
	if o.PBForm == PBUCTLn1 && !s.Has("bias") {
		o.Bias = 0.2 // study 003's progressiveBiasFactor
	}
	o.Threads, o.Root, o.Reuse, o.TT = m.Threads, m.Root, m.Reuse, m.TT
	o.Determinize, o.ISMCTS = m.Det, m.ISMCTS
	switch m.SimSel {
	case "exp3":
		o.SimSel = SimExp3
	case "rm":
		o.SimSel = SimRM
	}
	o.SimGamma = m.SimGamma
	rollout, eps, depth, blendW, staticName, turns, evalName := m.Rollout, m.Eps, m.Depth, m.Blend, m.Static, m.Turns, m.Eval
	if m.PBH == "one" {
		if o.Bias == 0 {
			return o, fmt.Errorf("mcts: pbh=one sets progressive bias's heuristic; it needs bias=B or pbform=study003")
		}
		if rollout == "heuristic" || m.Cut == "heuristic" {
			return o, fmt.Errorf("mcts: pbh=one replaces the game's heuristic by 1, which rollout=heuristic and cut=heuristic cannot use; drop pbh=one or those")
		}
		o.Heuristic = unitHeuristic
	} else if o.Bias != 0 || rollout == "heuristic" || m.Cut == "heuristic" {
		o.Heuristic = lookupHeuristic(g)
		if o.Heuristic == nil {
			return o, fmt.Errorf("mcts: %s has no heuristic (the games.Heuristic capability), which bias=, rollout=heuristic and cut=heuristic need; games with one: hex, sequence, sushigo, tetrislink", g.Type().Name)
		}
	}
	ro := &Rollout{Depth: depth, Turns: turns}
	if rollout == "heuristic" {
		ro.Guide, ro.Epsilon = o.Heuristic, eps
	}
	cut, err := NewCut(g, m.Cut, m.CutScale)
	if err != nil {
		return o, fmt.Errorf("mcts: %w", err)
	}
	ro.Cut = cut
	lookupEval := func(name string) (Evaluator, error) {
		if f, ok := builtinEvaluators[name]; ok {
			return f(g)
		}
		if op, ok := agent.Lookup[EvaluatorOpener](env); ok {
			if ev, ok, err := op.OpenEvaluator(g, name); ok || err != nil {
				if bs, isBS := ev.(BackupSetter); isBS && err == nil {
					bs.SetBackup(m.Backup)
				}
				return ev, err
			}
			return nil, fmt.Errorf("mcts: unknown evaluator %q (available: blend, %s, or a network: a weights file, a shipped name, init, default)", name, builtinNames())
		}
		return nil, fmt.Errorf("mcts: unknown evaluator %q (available: blend, %s); a network evaluator needs a network pool, which this caller did not pass (agent.Env with a search.EvaluatorOpener such as search/engine's Pool)", name, builtinNames())
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
	to := o.agentTree()
	for i := range max(o.Root, 1) {
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
			return nil, fmt.Errorf("mcts: ismcts runs single-threaded and without det (got threads=%d, det=%d): use threads=1 (root=N for parallel trees) and leave det unset", o.Threads, o.Determinize)
		}
		if g.Type().Dynamics == games.Simultaneous {
			// A joint node's edges come from the deal that expanded it;
			// another deal's hands make some of them illegal, and
			// ApplyJoint does not check.
			return nil, fmt.Errorf("mcts: ismcts does not support simultaneous moves (%s): use det=K (root determinization) or the game's sequential view (e.g. sushigo-seq)", g.Type().Name)
		}
		for _, t := range a.trees {
			t.ismcts = true
		}
	}
	return a, nil
}

// agentTree returns the options of each of the Root trees of an agent
// with options o: the budget split between root-parallel trees and
// between determinizations.
func (o Options) agentTree() Options {
	to := o
	if o.Root > 1 {
		to.Root = 1
		if to.Sims > 0 {
			to.Sims = max(1, o.Sims/o.Root)
		}
	}
	// The K determinizations share the move's budget, in simulations
	// and in time alike (a time budget alone was not split before,
	// so det=8,time=100ms took 800 ms per move), and under a time
	// budget the default arena too (2^20 nodes, 2^24 edges at most;
	// see Options.MaxNodes): each tree searches 1/K of the time, and
	// K full-size arenas cost more to allocate per game than the
	// searches themselves (about 1 GB each).
	if o.Determinize > 0 {
		if to.Sims > 0 {
			to.Sims = max(1, to.Sims/o.Determinize)
		}
		if to.Time > 0 {
			to.Time /= time.Duration(o.Determinize)
			if to.MaxNodes == 0 && to.MaxEdges == 0 && to.Sims == 0 {
				to.MaxNodes = max(1<<20/o.Determinize, 1<<12)
				to.MaxEdges = max(1<<24/o.Determinize, 1<<16)
			}
		}
	}
	return to
}

// AgentBytes is the memory, in bytes, of the search trees of an mcts
// agent with options o for g (NewAgent: Root trees, each sized by
// TreeBytes with Threads walkers). Errors are New's.
func (o Options) AgentBytes(g games.Game) (int64, error) {
	per, err := o.agentTree().TreeBytes(g, o.Threads)
	return int64(max(o.Root, 1)) * per, err
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
	return a.legalStats(s, player), nil
}

// legalStats returns the accumulated statistics (a.acc) of player's legal
// actions in s, strategies normalised to sum 1, sorted.
func (a *Agent) legalStats(s games.State, player int) []ActionStat {
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
	return out
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

// Close releases the agent's trees for reuse by agents made later
// (Tree.Release) and what its evaluator holds (a network evaluator's
// shared engine); the agent must not be used afterwards.
func (a *Agent) Close() error {
	for _, t := range a.trees {
		t.Release()
	}
	if c, ok := a.opt.Eval.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
