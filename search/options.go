package search

import (
	"fmt"
	"strings"
	"time"

	"github.com/canopy-go/canopy/games"
)

// Options configures a search. The zero value is not meaningful; start from
// DefaultOptions and change fields. Every field maps to an `mcts` spec key
// (see agent.go).
type Options struct {
	Rule Rule    // selection rule (sel)
	C    float64 // exploration constant (c); <0 means the rule's default

	Sims int           // simulations per move (sims); 0 = no limit (then Time must be set)
	Time time.Duration // wall-clock budget per move (time); 0 = no limit
	// MaxNodes is the node budget (nodes); 0 means Sims+16 for a pure
	// simulation budget, else 2^20.
	MaxNodes int
	// MaxEdges is the edge budget; 0 means MaxNodes * min(NumActions +
	// NumPlayers, 128), at most 2^24.
	MaxEdges int
	// StopWhenFull stops the search when the arena is full (full=stop);
	// otherwise simulations go on without adding nodes (full=keep):
	// statistics keep accumulating on the existing edges and leaves are
	// evaluated one ply below the deepest node.
	StopWhenFull bool
	// ExpandVisits: a node's edges are created when it is reached with at
	// least this many visits (classic UCT: 1 adds one node per simulation).
	// 0 expands every leaf when its evaluation is backed up, with the
	// evaluator's priors (AlphaZero style; the default for PUCT).
	ExpandVisits int

	// PUCT.
	FPU          float64 // value of unvisited edges under PUCT (fpu)
	DirichletA   float64 // root Dirichlet noise alpha (dir); 0 = none
	DirichletEps float64 // fraction of noise in the root priors (dirfrac)

	// RAVE family.
	// RaveSchedule (ravesched) weighs the AMAF mean: see the constants.
	RaveSchedule RaveSchedule
	RaveK        float64 // k of the sqrt schedule and of alpha-AMAF (ravek)
	RaveB        float64 // b of the silver schedule (raveb)
	Alpha        float64 // constant alpha-AMAF weight when RaveK = 0 (alpha)
	PoolK        int     // PoolRAVE pool size (poolk)
	PoolP        float64 // PoolRAVE probability of a pool move (poolp)
	// PoolAt is where PoolRAVE plays its pool moves (pool): see the
	// constants.
	PoolAt PoolAt
	// AmafExplore is the exploration term of the RAVE family
	// (amafexplore): see the constants.
	AmafExplore AmafExplore

	// Progressive bias weight b (bias); needs Heuristic. The heuristic
	// values of a node's legal actions are min-max scaled to [0, 1] per
	// node (per player at simultaneous nodes) before they become the
	// edges' priors; see heuristicPriors.
	Bias      float64
	Heuristic Heuristic
	// PBForm is the score progressive bias is added to (pbform): see the
	// constants.
	PBForm PBForm

	// Rewards01 (rewards=01) maps every value from [-1, 1] to [0, 1],
	// x = (v+1)/2, before the selection score is computed, so that the
	// exploration constant c has the meaning it has in studies that use
	// 0/1 rewards (study 001's Cp); see to01.
	Rewards01 bool

	// Objective is what the search maximises (objective): the game's
	// returns (ObjectiveReturns; "" means it too) or winning alone
	// (ObjectiveWin): every terminal value and cut-off rollout becomes +1
	// for the player ahead of all others and -1 for everyone else
	// (EvalContext.Terminal, CutValue). A network's values are what it was
	// trained on either way.
	Objective string

	// Final is how the move is chosen when none is sampled (final).
	Final FinalMove
	// TempPlies: for positions with MoveNumber < TempPlies the move is
	// sampled proportionally to visits^(1/Temp) (temp, tempplies).
	TempPlies int
	Temp      float64

	// Evaluator scores leaves; nil means random rollouts.
	Eval Evaluator

	// Parallelism: Threads goroutines share one tree (threads); Root
	// independent trees are merged at the root (root).
	Threads int
	Root    int

	// Reuse keeps the subtree of the position reached between moves.
	Reuse bool
	// TT merges transpositions through a table keyed by Zobrist hash.
	TT bool

	// Hidden information: Determinize = K sampled deals with Sims/K
	// simulations each (det, "K"; a time budget and the default arena are
	// split likewise), or ISMCTS (ismcts=true) re-determinizes at every
	// simulation (every Rule, with availability counts; ismcts.go).
	Determinize int
	ISMCTS      bool

	// Simultaneous (joint) nodes: SimSel is the per-player bandit (simsel:
	// ucb = decoupled Rule, exp3, rm), SimGamma the uniform exploration
	// mixed into Exp3 and regret matching (simgamma, in [0, 1]), SimFinal
	// how exp3/rm choose the move at a simultaneous root from the average
	// strategy (simfinal; see the constants).
	SimSel   SimRule
	SimGamma float64
	SimFinal SimFinal
}

// What a search maximises (Options.Objective, the objective option of the
// mcts and az agents).
const (
	// ObjectiveReturns: each player's value is its return (Game.Returns,
	// scaled to [-1, 1]); Tetris Link's, for one, is the pairwise score.
	ObjectiveReturns = "returns"
	// ObjectiveWin: +1 to a player who finishes ahead of every other,
	// -1 to everyone else, a shared first place included: the share of
	// sole wins that the arenas report, as the search's own goal. Only
	// for games of two or more players.
	ObjectiveWin = "win"
)

// ObjectiveKinds are the values of the objective option.
var ObjectiveKinds = []string{ObjectiveReturns, ObjectiveWin}

// ObjectiveHelp is the objective option's help, shared by the agents
// that offer it.
const ObjectiveHelp = "what the search maximises: returns (the game's returns, e.g. Tetris Link's pairwise score) or win (+1 for finishing ahead of every other player, -1 otherwise, a shared first place included: the sole wins arenas count; rollouts cut off score the lead over the strongest opponent; a network's value stays what it learned)"

// CheckObjective reports whether objective is one of ObjectiveKinds (or
// "") and one that g can be searched for: objective=win needs two or
// more players.
func CheckObjective(g games.Game, objective string) error {
	switch objective {
	case "", ObjectiveReturns:
		return nil
	case ObjectiveWin:
		if g.NumPlayers() < 2 {
			return fmt.Errorf("objective=win needs two or more players; %s has %d (use objective=returns)", g.Type().Name, g.NumPlayers())
		}
		return nil
	}
	return fmt.Errorf("objective=%q: want one of %s", objective, strings.Join(ObjectiveKinds, ", "))
}

// DefaultOptions returns UCT with c = 1.4 (about sqrt 2), 1000 simulations
// and random rollouts.
func DefaultOptions() Options {
	return Options{
		Rule: UCT, C: -1, Sims: 1000, ExpandVisits: -1,
		DirichletEps: 0.25, RaveSchedule: RaveSqrt, RaveK: 1000, RaveB: 0.1, AmafExplore: AmafUCT, PBForm: PBAdded,
		PoolK: 10, PoolP: 0.5, PoolAt: PoolInRollout, Final: FinalVisits, Temp: 1, Threads: 1, Root: 1,
		SimSel: SimUCB, SimGamma: 0.1, SimFinal: SimFinalMax,
	}
}

// defaultC is each rule's exploration constant (the rules table).
func (r Rule) defaultC() float64 { return rules[r].c }

// raveStudy001 reports whether the options select study 001's additive
// RAVE score (ravesched=additive or additive-clamped under sel=rave or
// poolrave).
func (o *Options) raveStudy001() bool {
	return o.RaveSchedule.additive() && (o.Rule == RAVE || o.Rule == PoolRAVE)
}

// defaultC is the exploration constant of the options' rule and form:
// study 003's K = 5 under pbform=uct-ln1, 1 (the printed coefficient of
// sqrt(2 ln N / n)) under ravesched=additive, else the rule's.
func (o *Options) defaultC() float64 {
	switch {
	case o.PBForm == PBUCTLn1:
		return 5
	case o.raveStudy001():
		return 1
	}
	return o.Rule.defaultC()
}

// normalize fills derived defaults and checks the options.
func (o *Options) normalize() error {
	if o.C < 0 {
		o.C = o.defaultC()
	}
	if int(o.Rule) >= len(rules) {
		return fmt.Errorf("search: unknown selection rule %d", o.Rule)
	}
	if o.ExpandVisits < 0 {
		o.ExpandVisits = rules[o.Rule].expand
	}
	if o.Sims <= 0 && o.Time <= 0 {
		return fmt.Errorf("search: no budget (set sims=N or time=D)")
	}
	if o.Threads < 1 || o.Root < 1 {
		return fmt.Errorf("search: threads and root must be >= 1")
	}
	if o.Bias != 0 && o.Heuristic == nil {
		return fmt.Errorf("search: bias=%g needs a game heuristic (Options.Heuristic; this game has none)", o.Bias)
	}
	study001 := o.RaveSchedule.additive()
	if int(o.RaveSchedule) >= len(raveScheduleNames) {
		return fmt.Errorf("search: unknown ravesched %d: want sqrt, silver, additive or additive-clamped", o.RaveSchedule)
	}
	if study001 && o.Rule.usesAMAF() && (o.Rule == AlphaAMAF || o.RaveK <= 0) {
		return fmt.Errorf("search: ravesched=%s applies to sel=rave and poolrave with ravek (its beta) > 0", o.RaveSchedule)
	}
	switch o.AmafExplore {
	case AmafUCT:
	case AmafUCB1Tuned:
		if !o.Rule.usesAMAF() {
			return fmt.Errorf("search: amafexplore=ucb1tuned applies to the RAVE family (sel=rave, poolrave, alphaamaf), not sel=%v", o.Rule)
		}
		if study001 && o.Rule != AlphaAMAF {
			return fmt.Errorf("search: amafexplore=ucb1tuned and ravesched=%s are two different exploration terms; pick one", o.RaveSchedule)
		}
	default:
		return fmt.Errorf("search: unknown amafexplore %d: want uct or ucb1tuned", o.AmafExplore)
	}
	switch o.PoolAt {
	case PoolInRollout:
	case PoolInTree:
		if o.Rule != PoolRAVE {
			return fmt.Errorf("search: pool=tree is PoolRAVE's pool in tree selection; it needs sel=poolrave, not sel=%v", o.Rule)
		}
	default:
		return fmt.Errorf("search: unknown pool %d: want rollout or tree", o.PoolAt)
	}
	switch o.PBForm {
	case PBAdded:
	case PBUCTLn1:
		if o.Rule != UCT {
			return fmt.Errorf("search: pbform=uct-ln1 (study003) is study 003's UCT formula; it needs sel=uct, not sel=%v", o.Rule)
		}
	default:
		return fmt.Errorf("search: unknown pbform %d: want added or uct-ln1", o.PBForm)
	}
	if o.RaveK < 0 || o.RaveB < 0 || o.Alpha < 0 || o.Alpha > 1 || o.PoolP < 0 || o.PoolP > 1 ||
		o.DirichletEps < 0 || o.DirichletEps > 1 || o.DirichletA < 0 || o.Temp < 0 || o.PoolK < 1 {
		return fmt.Errorf("search: out of range: need ravek, raveb, dir, temp >= 0; alpha, poolp, dirfrac in [0, 1]; poolk >= 1")
	}
	if o.SimSel > SimRM {
		return fmt.Errorf("search: unknown simultaneous selection %d: want ucb, exp3 or rm", o.SimSel)
	}
	if !(o.SimGamma >= 0 && o.SimGamma <= 1) {
		return fmt.Errorf("search: simgamma=%g out of range: want a value in [0, 1]", o.SimGamma)
	}
	if o.SimSel == SimExp3 && o.SimGamma == 0 {
		return fmt.Errorf("search: simsel=exp3 needs simgamma > 0 (its learning rate is simgamma/K)")
	}
	if o.SimFinal > SimFinalSample {
		return fmt.Errorf("search: unknown simfinal %d: want max or sample", o.SimFinal)
	}
	if o.Final > FinalValue {
		return fmt.Errorf("search: unknown final %d: want visits or value", o.Final)
	}
	if o.Eval == nil {
		o.Eval = &Rollout{}
	}
	return nil
}
