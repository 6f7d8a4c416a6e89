package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/canopy-go/canopy/games"
)

// Heuristic scores action a for player in s, larger is better, roughly in
// [0, 1]. It is used by progressive bias (stored per edge at expansion) and
// by heuristic-guided rollouts. Implementations must be safe for
// concurrent use and should not allocate. s must not be modified.
type Heuristic interface {
	Score(s games.State, player int, a games.Action) float64
}

// batchHeuristic is implemented by Heuristics that may score all legal
// actions of a state at once: scoreAll writes Score(s, player, a) into
// dst[a] for every a in legal and reports true, or reports false (and
// writes nothing) when it cannot for s.
type batchHeuristic interface {
	scoreAll(s games.State, player int, legal games.Mask, dst []float64) bool
}

// scoreAll writes h's score of every action in legal into dst[a]: in one
// call where h and s offer it (games.HeuristicBatch), else one call per
// action. The values are the same either way.
func scoreAll(h Heuristic, s games.State, player int, legal games.Mask, dst []float64) {
	if b, ok := h.(batchHeuristic); ok && b.scoreAll(s, player, legal, dst) {
		return
	}
	for a := range legal.All() {
		dst[a] = h.Score(s, player, a)
	}
}

// HeuristicFunc adapts a function to Heuristic.
type HeuristicFunc func(s games.State, player int, a games.Action) float64

// Score implements Heuristic.
func (f HeuristicFunc) Score(s games.State, player int, a games.Action) float64 {
	return f(s, player, a)
}

// Evaluator scores a leaf. It is shared by all goroutines of a search and
// must be safe for concurrent use; per-goroutine scratch space lives in
// the EvalContext.
//
// Evaluate writes each player's value, in [-1, 1], into value[:players]
// and may modify s (a scratch copy). When priors is non-nil and the
// evaluator has a policy it writes a non-negative weight for every legal
// action a into priors[a] and returns true; the search normalises them over
// the legal actions. A batched network evaluator does not need to
// implement Evaluator: it drives Tree.SelectLeaf / Tree.Backup itself.
type Evaluator interface {
	Evaluate(c *EvalContext, s games.State, value []float64, priors []float32) bool
}

// How a network's values become the per-player values the tree backs up
// (the backup option of the mcts and az agents). The tree keeps one
// value per player on every edge and each player selects on its own
// (MaxN); only the evaluator's vector differs.
const (
	// BackupMaxN gives every player its own value from a per-player
	// value head (nets.Config.ValuePlayers). With a scalar head it is
	// BackupParanoid: the only vector there is.
	BackupMaxN = "maxn"
	// BackupParanoid takes the mover's value v alone and gives every
	// other player -v/(players-1): exact for two-player zero-sum games,
	// the opponents as one coalition beyond.
	BackupParanoid = "paranoid"
)

// BackupKinds are the values of the backup option.
var BackupKinds = []string{BackupMaxN, BackupParanoid}

// BackupSetter is implemented by evaluators that have a choice of
// backup (search/engine's network evaluator): the mcts agent passes its
// backup option on.
type BackupSetter interface {
	SetBackup(kind string)
}

// EvalContext is the per-walker scratch space of an evaluation.
type EvalContext struct {
	Rng   *rand.Rand
	Mask  games.Mask     // NewMask(NumActions)
	Joint []games.Action // one per player (simultaneous games)
	Ret   []float64      // one per player
	// Record asks rollouts to append their moves to Trace (RAVE).
	Record bool
	Trace  []Traced
	// Pool holds PoolRAVE's candidate moves, PoolP their probability.
	Pool  []games.Action
	PoolP float64

	min, scale float64 // Returns -> [-1, 1]: v' = (v-min)*scale - 1
	// win: Options.Objective is ObjectiveWin, so Terminal and CutValue value
	// winning alone (+1) against everything else (-1).
	win bool

	spare  games.State // Blend's copy of the leaf
	spareV []float64
	scores []float64 // a guided rollout move's scores by action (allocated at the first)
}

// Traced is one move of a simulation (for AMAF updates).
type Traced struct {
	Player int32
	Action games.Action
}

func newEvalContext(g games.Game, rng *rand.Rand) *EvalContext {
	t := g.Type()
	c := &EvalContext{
		Rng: rng, Mask: games.NewMask(g.NumActions()),
		Joint: make([]games.Action, g.NumPlayers()), Ret: make([]float64, g.NumPlayers()),
		Trace: make([]Traced, 0, g.MaxGameLength()+g.NumPlayers()),
		min:   t.MinReturn, scale: 1,
	}
	if t.MaxReturn > t.MinReturn {
		c.scale = 2 / (t.MaxReturn - t.MinReturn)
	} else {
		c.min = -1
	}
	return c
}

// Terminal writes the returns of terminal state s, rescaled from the
// game's [MinReturn, MaxReturn] to [-1, 1], into value; under objective=win
// (ObjectiveWin) it writes +1 for the player whose return is above every
// other player's and -1 for everyone else (all -1 when the best return is
// shared).
func (c *EvalContext) Terminal(s games.State, value []float64) {
	s.Returns(c.Ret)
	if c.win {
		soleWinner(value, c.Ret)
		return
	}
	for p, r := range c.Ret {
		value[p] = (r-c.min)*c.scale - 1
	}
}

// soleWinner writes +1 into value[p] for the one p whose ret[p] is above
// every other, and -1 everywhere else.
func soleWinner(value, ret []float64) {
	best, n := math.Inf(-1), 0
	for _, r := range ret {
		switch {
		case r > best:
			best, n = r, 1
		case r == best:
			n++
		}
	}
	for p, r := range ret {
		value[p] = -1
		if r == best && n == 1 {
			value[p] = 1
		}
	}
}

// fastPlayout is the optional interface of states with a specialised
// random playout (connect4.State.RandomPlayout); fastPlayout2 is the same
// under Tetris Link's name. Both play uniformly random moves to the end.
type fastPlayout interface {
	RandomPlayout(rng *rand.Rand) int
}
type fastPlayout2 interface {
	PlayRandom(rng *rand.Rand) int
}

// turnPlayout is the optional interface of states with a specialised
// random playout that stops after a number of player turns
// (sequence.State.PlayRandomTurns): uniformly random moves until the game
// ends or right after turns actions of the players (chance outcomes not
// counted), where Rollout's own loop stops too. Only games without
// multi-action turns implement it, so a turn is one action, as Rollout
// counts them.
type turnPlayout interface {
	PlayRandomTurns(rng *rand.Rand, turns int) int
}

// Rollout plays uniformly random moves (full playouts, or Depth plies
// when Depth > 0, or Turns player turns when Turns > 0) and scores the
// final state: terminal returns, or Cut's value (zero when Cut is nil) at
// the limit (CutValue for cut=heuristic and cut=score). Plies count every action, chance included; turns count the
// actions of real players, a multi-action turn counting once. With Epsilon-greedy
// guidance (Guide != nil) each move is the guide's best with probability
// 1-Epsilon. The zero value is a full uniformly random rollout.
type Rollout struct {
	Depth   int
	Turns   int
	Cut     Evaluator // value at the depth limit; nil = 0 for everyone
	Guide   Heuristic
	Epsilon float64
}

// Evaluate implements Evaluator; it never writes priors.
func (r *Rollout) Evaluate(c *EvalContext, s games.State, value []float64, _ []float32) bool {
	if !c.Record && r.Depth == 0 && r.Guide == nil && len(c.Pool) == 0 {
		if r.Turns > 0 {
			if f, ok := s.(turnPlayout); ok {
				f.PlayRandomTurns(c.Rng, r.Turns)
				switch {
				case s.IsTerminal():
					c.Terminal(s, value)
				case r.Cut != nil:
					r.Cut.Evaluate(c, s, value, nil)
				default:
					clear(value)
				}
				return false
			}
		} else {
			switch f := s.(type) {
			case fastPlayout:
				f.RandomPlayout(c.Rng)
				c.Terminal(s, value)
				return false
			case fastPlayout2:
				f.PlayRandom(c.Rng)
				c.Terminal(s, value)
				return false
			}
		}
	}
	turns := 0
	for ply := 0; !s.IsTerminal(); ply++ {
		if (r.Depth > 0 && ply >= r.Depth) || (r.Turns > 0 && turns >= r.Turns) {
			if r.Cut != nil {
				r.Cut.Evaluate(c, s, value, nil)
			} else {
				clear(value)
			}
			return false
		}
		switch p := s.CurrentPlayer(); p {
		case games.ChancePlayer:
			s.Apply(s.(games.ChanceState).SampleChance(c.Rng))
		case games.SimultaneousPlayer:
			ss := s.(games.SimultaneousState)
			for i := range c.Joint {
				ss.LegalFor(i, c.Mask)
				c.Joint[i] = r.pick(c, s, i)
				if c.Record {
					c.Trace = append(c.Trace, Traced{int32(i), c.Joint[i]})
				}
			}
			ss.ApplyJoint(c.Joint)
			turns++
		default:
			s.Legal(c.Mask)
			a := r.pick(c, s, p)
			if c.Record {
				c.Trace = append(c.Trace, Traced{int32(p), a})
			}
			if r.Turns == 0 {
				s.Apply(a)
				continue
			}
			ms, multi := s.(games.MultiActionState)
			tn := 0
			if multi {
				tn = ms.TurnNumber()
			}
			s.Apply(a)
			if !multi || ms.TurnNumber() != tn {
				turns++
			}
		}
	}
	c.Terminal(s, value)
	return false
}

// pick chooses among c.Mask for player p.
func (r *Rollout) pick(c *EvalContext, s games.State, p int) games.Action {
	if len(c.Pool) > 0 && c.Rng.Float64() < c.PoolP {
		if a := c.Pool[c.Rng.IntN(len(c.Pool))]; c.Mask.Has(a) {
			return a
		}
	}
	if r.Guide != nil && c.Rng.Float64() >= r.Epsilon {
		if len(c.scores) < 64*len(c.Mask) { // the first guided move of this context
			c.scores = make([]float64, 64*len(c.Mask))
		}
		scoreAll(r.Guide, s, p, c.Mask, c.scores)
		best, bestH := games.NoAction, 0.0
		for a := range c.Mask.All() {
			if h := c.scores[a]; best == games.NoAction || h > bestH {
				best, bestH = a, h
			}
		}
		return best
	}
	return c.Mask.Random(c.Rng)
}

// Uniform is a static evaluator: value 0 for everyone and uniform priors.
// It stands in for a network in tests.
type Uniform struct{}

// Evaluate implements Evaluator.
func (Uniform) Evaluate(c *EvalContext, s games.State, value []float64, priors []float32) bool {
	if s.IsTerminal() {
		c.Terminal(s, value)
		return false
	}
	clear(value)
	if priors == nil {
		return false
	}
	for i := range priors {
		priors[i] = 1
	}
	return true
}

// Blend mixes two evaluators: value = W*A + (1-W)*B; priors come from A,
// else from B. The Sequence study uses W = 0.5, A = a static evaluator and
// B = Rollout{Turns: 8}. B sees a copy of the leaf
// made before A runs, so A may modify its state.
type Blend struct {
	A, B    Evaluator
	W       float64
	scratch func() games.State
}

// NewBlend returns a blend of a and b with weight w on a for game g.
func NewBlend(g games.Game, a, b Evaluator, w float64) *Blend {
	return &Blend{A: a, B: b, W: w, scratch: g.NewInitialState}
}

// Evaluate implements Evaluator. It uses c's spare state; after warm-up it
// does not allocate.
func (bl *Blend) Evaluate(c *EvalContext, s games.State, value []float64, priors []float32) bool {
	if c.spare == nil {
		c.spare = bl.scratch()
		c.spareV = make([]float64, len(value))
	}
	s.CloneInto(c.spare)
	has := bl.A.Evaluate(c, s, value, priors)
	vb := c.spareV
	var pb []float32
	if !has {
		pb = priors
	}
	hasB := bl.B.Evaluate(c, c.spare, vb, pb)
	for p := range value {
		value[p] = bl.W*value[p] + (1-bl.W)*vb[p]
	}
	return has || hasB
}

// CutValue scores a position where a rollout was cut off (Rollout.Cut;
// cut=heuristic and cut=score). Each player p gets
//
//	v_p = tanh((x_p - mean of x_q over the other players q) / Scale)
//
// in (-1, 1), zero-sum for two players (under objective=win the lead over
// the strongest other player instead of their mean: cutValuesWin). With
// Heuristic set (cut=heuristic)
// x_p is p's best heuristic value over its legal actions when p chooses in
// the position (the mover at a decision node, every player at a
// simultaneous node) and 0 otherwise: a one-ply reading of the game's own
// heuristic, in its units, that says how much the mover can gain next.
// Without it (cut=score) x_p is p's running score (games.Scorer), a
// score difference. Chance outcomes are sampled first, so the position
// scored is one where a player chooses (a terminal position gets its
// returns). Study 000 (eq. 5) blends a static value with a rollout cut
// after 8 turns; scoring that cut with 0 halved the blend's value, this
// scores it instead.
//
// With State set (cut=state) x_p is the game's own evaluation of the
// whole position for p (games.StateValuer; Sushi Go: the running score
// plus this round's table with partial credit and the maki and pudding
// standings projected, study 003's EVALUATESTATE; Sequence: the player's
// open five-square windows and completed sequences), which, unlike
// cut=heuristic's one-ply reading, counts what each player already has.
type CutValue struct {
	Heuristic Heuristic // cut=heuristic; nil: cut=score (or cut=state)
	State     bool      // cut=state: x_p from games.StateValuer
	Scale     float64   // differences are divided by Scale before tanh
}

// CutKinds are the names NewCut accepts, in the order options list them.
var CutKinds = []string{"zero", "heuristic", "score", "state"}

// NewCut returns the value of a rollout cut off by its depth or turn
// limit (Rollout.Cut) of the named kind: "zero" (nil, every player 0),
// "heuristic" (CutValue over g's heuristic) or "score" (CutValue over
// g's running scores), differences divided by scale. It reports an error
// when g lacks what the kind reads or scale is not positive.
func NewCut(g games.Game, kind string, scale float64) (Evaluator, error) {
	if kind != "zero" && !(scale > 0) {
		return nil, fmt.Errorf("cutscale = %g, want > 0", scale)
	}
	switch kind {
	case "zero":
		return nil, nil
	case "heuristic":
		h := lookupHeuristic(g)
		if h == nil {
			return nil, fmt.Errorf("cut=heuristic: %s has no heuristic (the games.Heuristic capability); games with one: hex, sequence, sushigo, tetrislink (or use cut=zero)", g.Type().Name)
		}
		return &CutValue{Heuristic: h, Scale: scale}, nil
	case "state":
		if _, ok := g.NewInitialState().(games.StateValuer); !ok {
			return nil, fmt.Errorf("cut=state needs a game whose states evaluate themselves (games.StateValuer); %s has none (games with one: sequence, sushigo; or try cut=heuristic or cut=score)", g.Type().Name)
		}
		return &CutValue{State: true, Scale: scale}, nil
	case "score":
		if _, ok := g.NewInitialState().(games.Scorer); !ok {
			return nil, fmt.Errorf("cut=score needs a game with running scores (games.Scorer); %s has none (try cut=heuristic)", g.Type().Name)
		}
		return &CutValue{Scale: scale}, nil
	}
	return nil, fmt.Errorf("cut=%q: want one of %s", kind, strings.Join(CutKinds, ", "))
}

// Evaluate implements Evaluator; it never writes priors. It uses c.Ret
// and c.Mask as scratch and does not allocate.
func (cv *CutValue) Evaluate(c *EvalContext, s games.State, value []float64, _ []float32) bool {
	for s.CurrentPlayer() == games.ChancePlayer {
		s.Apply(s.(games.ChanceState).SampleChance(c.Rng))
	}
	if s.IsTerminal() {
		c.Terminal(s, value)
		return false
	}
	x := c.Ret[:len(value)]
	switch {
	case cv.State:
		sv := s.(games.StateValuer)
		for q := range x {
			x[q] = sv.StateValue(q)
		}
	case cv.Heuristic == nil:
		s.(games.Scorer).Scores(x)
	default:
		clear(x)
		p := s.CurrentPlayer()
		ss, sim := s.(games.SimultaneousState)
		for q := range x {
			switch {
			case sim && p == games.SimultaneousPlayer:
				ss.LegalFor(q, c.Mask)
			case q == p:
				s.Legal(c.Mask)
			default:
				continue
			}
			best := math.Inf(-1)
			for a := range c.Mask.All() {
				best = max(best, cv.Heuristic.Score(s, q, a))
			}
			if !math.IsInf(best, -1) {
				x[q] = best
			}
		}
	}
	if c.win {
		cutValuesWin(value, x, cv.Scale)
		return false
	}
	CutValues(value, x, cv.Scale)
	return false
}

// cutValuesWin is CutValues under objective=win: v_p = tanh((x_p - max_{q !=
// p} x_q) / scale), p's margin over its strongest opponent rather than
// over their mean, so that only a lead over every other player reads as
// winning.
func cutValuesWin(value, x []float64, scale float64) {
	for p, v := range x {
		best := math.Inf(-1)
		for q, w := range x {
			if q != p {
				best = max(best, w)
			}
		}
		value[p] = math.Tanh((v - best) / scale)
	}
}

// CutValues writes v_p = tanh((x_p - mean_{q != p} x_q) / scale) for every
// player p into value (CutValue's formula); one player gets tanh(x_0/scale).
func CutValues(value, x []float64, scale float64) {
	var sum float64
	for _, v := range x {
		sum += v
	}
	others := float64(max(len(x)-1, 1))
	for p, v := range x {
		d := v
		if len(x) > 1 {
			d = v - (sum-v)/others
		}
		value[p] = math.Tanh(d / scale)
	}
}
