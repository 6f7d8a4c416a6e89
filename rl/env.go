package rl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// Opponent plays every seat but the learner's inside a VecEnv.
type Opponent interface {
	// Act returns player's action in s, which must be in legal (the legal
	// actions of s, already computed). rng is the environment's own random
	// stream. s must not be modified. With EnvOptions.Workers > 1, Act is
	// called concurrently for different environments.
	Act(s games.State, player int, legal games.Mask, rng *rand.Rand) (games.Action, error)
}

// BatchOpponent is an Opponent whose moves a VecEnv gathers across its
// environments and asks for in one call per round (a network evaluated
// on a batch), and that can keep state per environment and game (an
// LSTM's, see RecurrentOpponent). The VecEnv never calls its Act. Its
// dynamic type must be comparable (a pointer): the VecEnv groups moves by
// opponent.
type BatchOpponent interface {
	Opponent
	// ActBatch sets Action of every move to a legal action of its State,
	// drawing only from the move's Rng. Moves are of distinct
	// environments, in increasing order; a move's State must not be
	// modified. The VecEnv calls it from one goroutine at a time.
	ActBatch(moves []OpponentMove) error
}

// OpponentMove is one decision a VecEnv asks of a BatchOpponent.
type OpponentMove struct {
	Env    int         // the environment
	State  games.State // its game, with Player to move
	Player int
	Legal  games.Mask // the legal actions of State
	Rng    *rand.Rand // the environment's stream
	// First is set for the opponent's first move of the game in Player's
	// seat: whatever it carried for that seat of Env belongs to an
	// earlier game.
	First  bool
	Action games.Action
}

// OpponentFunc adapts a function (a fixed policy, a network's policy) to
// the Opponent interface.
type OpponentFunc func(s games.State, player int, legal games.Mask, rng *rand.Rand) (games.Action, error)

// Act implements Opponent.
func (f OpponentFunc) Act(s games.State, player int, legal games.Mask, rng *rand.Rand) (games.Action, error) {
	return f(s, player, legal, rng)
}

// RandomOpponent plays a uniformly random legal action. It allocates
// nothing and is safe for concurrent use.
func RandomOpponent() Opponent {
	return OpponentFunc(func(_ games.State, _ int, legal games.Mask, rng *rand.Rand) (games.Action, error) {
		return legal.Random(rng), nil
	})
}

// AgentOpponent adapts any agent.Agent (random, onestep, solver, a
// `policy` network agent, a search agent). Calls are serialised by a
// mutex, since agents are not safe for concurrent use; the agent's own
// seed, not the environment's stream, drives its choices.
func AgentOpponent(a agent.Agent) Opponent { return &agentOpponent{a: a} }

type agentOpponent struct {
	mu sync.Mutex
	a  agent.Agent
}

func (o *agentOpponent) Act(s games.State, player int, _ games.Mask, _ *rand.Rand) (games.Action, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.a.Act(context.Background(), s, player)
}

// Reward selects how a finished game is rewarded.
type Reward uint8

const (
	// RewardReturns gives the learner its game return (State.Returns: +1
	// win, -1 loss, 0 draw in the two-player games) at the last step.
	RewardReturns Reward = iota
	// RewardWinOnly is study 002's r_base (section 3.3): +1 when the
	// learner wins, 0 on a loss, a draw, or a non-terminal step.
	RewardWinOnly
)

// Seat values of EnvOptions.Seat.
const (
	// SeatAlternate puts the learner in seat e mod players for
	// environment e's first game and moves it one seat on after every
	// game, so that every seat is trained equally.
	SeatAlternate = -1
)

// EnvOptions configures a VecEnv. Zero fields take the documented
// defaults.
type EnvOptions struct {
	// N is the number of environments (games in lock-step); default 16
	// (study 002, section 5.1).
	N int
	// Opponent plays the other seats; default RandomOpponent. Its games
	// are counted under the kind "opponent".
	Opponent Opponent
	// Opponents, when set, chooses the opponent of every game instead
	// (Opponent must then be nil): a League, or any Opponents.
	Opponents Opponents
	// Encoding is the learner's observation (default: the game's own).
	Encoding nets.Encoding
	// Shaping adds a study's dense rewards to the learner's (default
	// none).
	Shaping Shaping
	// Seat is the learner's seat, or SeatAlternate (the default is seat
	// 0; use SeatAlternate to learn both sides as study 002 does).
	Seat int
	// Reward is the terminal reward (default RewardReturns).
	Reward Reward
	// Workers is the number of goroutines stepping the environments in
	// contiguous slices; default 1. Results do not depend on it.
	Workers int
	// Seed seeds every environment's random stream (seed, environment).
	Seed uint64
	// Observations, when non-nil, is the buffer (N x the encoding's size)
	// the VecEnv writes the observation batch into instead of its own:
	// memory its caller owns, such as a numpy array that package pyapi
	// hands to Python without a copy. It must not be written while the
	// VecEnv is in use.
	Observations []float32
	// LegalMask, when non-nil, is a caller-owned buffer (N x the game's
	// actions, as Observations) the VecEnv writes the legal actions into
	// as bools instead of its float batch; LegalFloats is then nil.
	LegalMask []bool
	// Rewards and Dones, when non-nil, are caller-owned buffers (N each,
	// as Observations) that the VecEnv writes and Rewards and Dones
	// return.
	Rewards []float32
	Dones   []bool
}

// EpisodeStats counts finished games from the learner's side. Steps are
// learner decisions.
type EpisodeStats struct {
	Episodes            int64
	Wins, Draws, Losses int64
	ReturnSum           float64 // sum of the learner's undiscounted episode returns
	LengthSum           int64   // sum of the episodes' learner steps
}

// Add adds o's counts into s.
func (s *EpisodeStats) Add(o EpisodeStats) {
	s.Episodes += o.Episodes
	s.Wins += o.Wins
	s.Draws += o.Draws
	s.Losses += o.Losses
	s.ReturnSum += o.ReturnSum
	s.LengthSum += o.LengthSum
}

// WinRate is Wins/Episodes (0 without episodes); a draw counts as no win.
func (s EpisodeStats) WinRate() float64 {
	if s.Episodes == 0 {
		return 0
	}
	return float64(s.Wins) / float64(s.Episodes)
}

// MeanReturn is the mean episode return (0 without episodes).
func (s EpisodeStats) MeanReturn() float64 {
	if s.Episodes == 0 {
		return 0
	}
	return s.ReturnSum / float64(s.Episodes)
}

// MeanLength is the mean episode length in learner steps.
func (s EpisodeStats) MeanLength() float64 {
	if s.Episodes == 0 {
		return 0
	}
	return float64(s.LengthSum) / float64(s.Episodes)
}

func (s EpisodeStats) String() string {
	return fmt.Sprintf("%d episodes: %d wins, %d draws, %d losses (win rate %.3f), mean return %.3f, mean length %.1f",
		s.Episodes, s.Wins, s.Draws, s.Losses, s.WinRate(), s.MeanReturn(), s.MeanLength())
}

// VecEnv is N games of one game stepped in lock-step for one learner (see
// the package doc). It is not safe for concurrent use; with Workers > 1 it
// runs its own goroutines inside Step, which Close stops.
type VecEnv struct {
	game     games.Game
	opt      EnvOptions
	players  int
	obsSize  int
	nActions int

	enc   *nets.Encoder
	kinds int // opponent kinds

	init   games.State
	states []games.State
	seat   []int // learner's seat per environment
	rngs   []*rand.Rand
	opp    []Opponent // opponent of each environment's current game
	kind   []int      // its kind
	epRet  []float64
	epLen  []int
	// Each environment is settled (the learner to move) after every Step
	// and Reset. Between, pending[i] marks environment i waiting for its
	// BatchOpponent's move (the state's current player) and moved[i] one
	// whose BatchOpponent has just moved; bit p of oppMoved[i] that the
	// opponent has moved in seat p in the game; resetting[i] that the game was
	// started by resetOne (a game over before the learner's first move is
	// replaced) rather than stepped by the learner (a game over is an
	// episode); shaped[i] is the shaped reward of the learner's move in
	// flight.
	pending   []bool
	moved     []bool
	oppMoved  []uint64
	resetting []bool
	shaped    []float64
	moves     []OpponentMove // a round's batched moves, grouped by opponent
	batchOpp  []BatchOpponent

	obs     []float32    // N x obsSize
	legal   []games.Mask // per environment
	legalF  []float32    // N x nActions, 1 legal / 0 illegal; nil with legalB
	legalB  []bool       // EnvOptions.LegalMask
	rewards []float32
	dones   []bool
	stats   []EpisodeStats // per worker and opponent kind (w*kinds+k), summed by Stats
	errs    []error        // per worker
	returns [][]float64    // per worker scratch for State.Returns
	omask   []games.Mask   // per worker scratch for the opponent's legal actions
	actions []games.Action // the actions of the Step in flight
	scratch []shapeScratch // per worker, for Shaping

	start []chan struct{}
	wg    sync.WaitGroup
	stop  bool
}

// NewEnv returns N environments of g, reset to their first learner
// decision. g must be sequential (chance nodes are fine); games with
// simultaneous moves are refused.
func NewEnv(g games.Game, opt EnvOptions) (*VecEnv, error) {
	if g == nil {
		return nil, errors.New("rl: nil game")
	}
	if g.Type().Dynamics != games.Sequential {
		return nil, fmt.Errorf("rl: game %s has simultaneous moves; environments need a sequential game", g.Spec())
	}
	if opt.N == 0 {
		opt.N = 16
	}
	if opt.Workers == 0 {
		opt.Workers = 1
	}
	if opt.Opponents != nil && opt.Opponent != nil {
		return nil, errors.New("rl: EnvOptions sets both Opponent and Opponents; set one")
	}
	if opt.Opponents == nil {
		if opt.Opponent == nil {
			opt.Opponent = RandomOpponent()
		}
		opt.Opponents = Fixed{Name: "opponent", Opponent: opt.Opponent}
	}
	kinds := len(opt.Opponents.Kinds())
	if kinds < 1 {
		return nil, errors.New("rl: the opponents name no kind")
	}
	enc, err := nets.NewEncoder(g, opt.Encoding)
	if err != nil {
		return nil, err
	}
	players := g.NumPlayers()
	if err := opt.Shaping.check(g); err != nil {
		return nil, err
	}
	switch {
	case opt.N < 1 || opt.N > 1<<20:
		return nil, fmt.Errorf("rl: N = %d environments, want 1..%d", opt.N, 1<<20)
	case opt.Workers < 1 || opt.Workers > 256:
		return nil, fmt.Errorf("rl: workers = %d, want 1..256", opt.Workers)
	case opt.Seat != SeatAlternate && (opt.Seat < 0 || opt.Seat >= players):
		return nil, fmt.Errorf("rl: seat %d, want 0..%d or %d (alternate)", opt.Seat, players-1, SeatAlternate)
	case opt.Reward > RewardWinOnly:
		return nil, fmt.Errorf("rl: unknown reward %d", opt.Reward)
	}
	opt.Workers = min(opt.Workers, opt.N)
	obsSize := enc.Size()
	n, na := opt.N, g.NumActions()
	obs := opt.Observations
	if obs == nil {
		obs = make([]float32, n*obsSize)
	} else if len(obs) != n*obsSize {
		return nil, fmt.Errorf("rl: EnvOptions.Observations holds %d values, want N x observation size = %d x %d = %d", len(obs), n, obsSize, n*obsSize)
	}
	legalF, legalB := []float32(nil), opt.LegalMask
	if legalB == nil {
		legalF = make([]float32, n*na)
	} else if len(legalB) != n*na {
		return nil, fmt.Errorf("rl: EnvOptions.LegalMask holds %d values, want N x actions = %d x %d = %d", len(legalB), n, na, n*na)
	}
	rewards, dones := opt.Rewards, opt.Dones
	if rewards == nil {
		rewards = make([]float32, n)
	} else if len(rewards) != n {
		return nil, fmt.Errorf("rl: EnvOptions.Rewards holds %d values, want N = %d", len(rewards), n)
	}
	if dones == nil {
		dones = make([]bool, n)
	} else if len(dones) != n {
		return nil, fmt.Errorf("rl: EnvOptions.Dones holds %d values, want N = %d", len(dones), n)
	}
	e := &VecEnv{
		game: g, opt: opt, players: players, obsSize: obsSize, nActions: na, enc: enc, kinds: kinds,
		init:   g.NewInitialState(),
		states: make([]games.State, n), seat: make([]int, n), rngs: make([]*rand.Rand, n),
		opp: make([]Opponent, n), kind: make([]int, n),
		epRet: make([]float64, n), epLen: make([]int, n),
		pending: make([]bool, n), moved: make([]bool, n), oppMoved: make([]uint64, n), resetting: make([]bool, n), shaped: make([]float64, n), moves: make([]OpponentMove, 0, n),
		obs: obs, legal: make([]games.Mask, n), legalF: legalF, legalB: legalB,
		rewards: rewards, dones: dones,
		stats: make([]EpisodeStats, opt.Workers*kinds), errs: make([]error, opt.Workers),
		returns: make([][]float64, opt.Workers), omask: make([]games.Mask, opt.Workers),
		scratch: make([]shapeScratch, opt.Workers),
	}
	for w := range opt.Workers {
		e.returns[w] = make([]float64, players)
		e.omask[w] = games.NewMask(na)
		if opt.Shaping.enabled() {
			e.scratch[w] = newShapeScratch(g)
		}
	}
	for i := range n {
		e.states[i] = g.NewInitialState()
		e.legal[i] = games.NewMask(na)
		e.rngs[i] = games.NewRand(envSeed(opt.Seed, i))
	}
	if err := e.Reset(); err != nil {
		return nil, err
	}
	if opt.Workers > 1 {
		e.start = make([]chan struct{}, opt.Workers)
		for w := range opt.Workers {
			e.start[w] = make(chan struct{})
			go e.worker(w)
		}
	}
	return e, nil
}

// Close stops the worker goroutines. The VecEnv must not be used after.
func (e *VecEnv) Close() {
	if e.start == nil || e.stop {
		return
	}
	e.stop = true
	for _, c := range e.start {
		close(c)
	}
}

// Game is the environments' game.
func (e *VecEnv) Game() games.Game { return e.game }

// N is the number of environments.
func (e *VecEnv) N() int { return e.opt.N }

// ObservationSize is the length of one environment's observation.
func (e *VecEnv) ObservationSize() int { return e.obsSize }

// NumActions is the game's action count (the policy size).
func (e *VecEnv) NumActions() int { return e.nActions }

// Observations is the batch of the N learner observations (N x
// ObservationSize, planar), valid until the next Step or Reset. The
// caller may read it; the VecEnv owns it.
func (e *VecEnv) Observations() []float32 { return e.obs }

// Legal is environment i's legal learner actions, valid until the next
// Step or Reset.
func (e *VecEnv) Legal(i int) games.Mask { return e.legal[i] }

// LegalFloats is the N x NumActions legal-action batch (1 legal, 0
// illegal), the form nets.Batch.Legal and Loss use; nil when
// EnvOptions.LegalMask is set.
func (e *VecEnv) LegalFloats() []float32 { return e.legalF }

// Rewards is the learner's reward of the last Step per environment.
func (e *VecEnv) Rewards() []float32 { return e.rewards }

// Dones reports per environment whether the last Step ended its game
// (the environment has been reset since and shows the next game).
func (e *VecEnv) Dones() []bool { return e.dones }

// Seat is the learner's seat in environment i's current game.
func (e *VecEnv) Seat(i int) int { return e.seat[i] }

// State is environment i's current game, at a learner decision. It must
// not be modified.
func (e *VecEnv) State(i int) games.State { return e.states[i] }

// Stats returns the statistics of the games finished since the last
// ResetStats.
func (e *VecEnv) Stats() EpisodeStats {
	var s EpisodeStats
	for _, w := range e.stats {
		s.Add(w)
	}
	return s
}

// StatsByKind returns the statistics of the games finished since the
// last ResetStats per opponent kind, in the order of Opponents.Kinds.
func (e *VecEnv) StatsByKind() []EpisodeStats {
	out := make([]EpisodeStats, e.kinds)
	for i, w := range e.stats {
		out[i%e.kinds].Add(w)
	}
	return out
}

// Kinds names the opponent kinds of StatsByKind.
func (e *VecEnv) Kinds() []string { return e.opt.Opponents.Kinds() }

// envSeed is the seed of environment i's stream under seed.
func envSeed(seed uint64, i int) uint64 { return seed*0x9E3779B97F4A7C15 + uint64(i) + 1 }

// Reseed gives every environment a new random stream derived from seed
// and starts new games in all of them (Reset), with the learner back in
// its first seat. After Reseed(s) the environments play exactly as
// NewEnv's with Seed s would, given the same learner actions: a run that
// reseeds at every update can be resumed exactly.
func (e *VecEnv) Reseed(seed uint64) error {
	for i, r := range e.rngs {
		*r = *games.NewRand(envSeed(seed, i))
	}
	return e.Reset()
}

// ResetStats clears the episode statistics.
func (e *VecEnv) ResetStats() { clear(e.stats) }

// Reset starts a new game in every environment (unfinished games are
// dropped without being counted), with the learner back in its first
// seat and a newly picked opponent, and plays the opponents' moves up to
// the learner's first decision.
func (e *VecEnv) Reset() error {
	for i := range e.states {
		if e.opt.Seat == SeatAlternate {
			e.seat[i] = (i + e.players - 1) % e.players // resetOne moves it on to i mod players
		} else {
			e.seat[i] = e.opt.Seat
		}
		if err := e.resetOne(0, i); err != nil {
			return err
		}
		e.rewards[i], e.dones[i] = 0, false
	}
	return e.settlePending()
}

// Step plays actions[i] for the learner in environment i, then the other
// seats up to the learner's next decision. An illegal action is an error
// naming the environment (the environments are then in an unspecified
// state; Reset them). Step allocates nothing.
func (e *VecEnv) Step(actions []games.Action) error {
	if len(actions) != e.opt.N {
		return fmt.Errorf("rl: Step with %d actions for %d environments", len(actions), e.opt.N)
	}
	if e.stop {
		return errors.New("rl: Step after Close")
	}
	e.actions = actions
	err := e.runWorkers()
	e.actions = nil
	if err != nil {
		return err
	}
	return e.settlePending()
}

// runWorkers runs stepRange on every worker's slice and returns the first
// worker's error.
func (e *VecEnv) runWorkers() error {
	if e.start == nil {
		e.stepRange(0)
	} else {
		e.wg.Add(len(e.start))
		for _, c := range e.start {
			c <- struct{}{}
		}
		e.wg.Wait()
	}
	for w, err := range e.errs {
		if err != nil {
			e.errs[w] = nil
			return err
		}
	}
	return nil
}

// settlePending plays the moves of batch opponents in rounds until every
// environment waits for the learner: each round asks every BatchOpponent
// once for the moves of all environments waiting for it (in environment
// order, so that the batches do not depend on the worker count), applies
// them, and lets the workers play on.
func (e *VecEnv) settlePending() error {
	for {
		e.moves = e.moves[:0]
		e.batchOpp = e.batchOpp[:0]
		for i, p := range e.pending {
			if !p {
				continue
			}
			b := e.opp[i].(BatchOpponent)
			if !slices.Contains(e.batchOpp, b) {
				e.batchOpp = append(e.batchOpp, b)
			}
		}
		if len(e.batchOpp) == 0 {
			return nil
		}
		for _, b := range e.batchOpp {
			start := len(e.moves)
			for i, p := range e.pending {
				if p && e.opp[i] == Opponent(b) {
					s := e.states[i]
					pl := s.CurrentPlayer()
					s.Legal(e.legal[i]) // the learner's mask is free until encode
					e.moves = append(e.moves, OpponentMove{Env: i, State: s, Player: pl, Legal: e.legal[i], Rng: e.rngs[i], First: e.oppMoved[i]&(1<<pl) == 0})
				}
			}
			if err := b.ActBatch(e.moves[start:]); err != nil {
				return fmt.Errorf("rl: a batch of %d environments from environment %d: opponent: %w", len(e.moves)-start, e.moves[start].Env, err)
			}
		}
		for _, m := range e.moves {
			if !m.Legal.Has(m.Action) {
				return fmt.Errorf("rl: environment %d: opponent action %d is not legal in %s", m.Env, m.Action, m.State)
			}
			m.State.Apply(m.Action)
			e.pending[m.Env], e.moved[m.Env] = false, true
			e.oppMoved[m.Env] |= 1 << m.Player
		}
		if err := e.runWorkers(); err != nil { // settle the environments moved
			return err
		}
	}
}

func (e *VecEnv) worker(w int) {
	for range e.start[w] {
		e.stepRange(w)
		e.wg.Done()
	}
}

// stepRange steps worker w's slice of the environments: the learner's
// actions of a Step, or (actions nil) the environments whose batch
// opponent has just moved.
func (e *VecEnv) stepRange(w int) {
	n, nw := e.opt.N, len(e.errs)
	for i := w * n / nw; i < (w+1)*n/nw; i++ {
		var err error
		switch {
		case e.actions != nil:
			err = e.stepOne(w, i, e.actions[i])
		case e.moved[i]:
			e.moved[i] = false
			err = e.settle(w, i)
		}
		if err != nil {
			e.errs[w] = err
			return
		}
	}
}

func (e *VecEnv) stepOne(w, i int, a games.Action) error {
	s := e.states[i]
	if !e.legal[i].Has(a) {
		return fmt.Errorf("rl: environment %d: learner action %d is not legal in %s", i, a, s)
	}
	var shaped float64
	if e.opt.Shaping.enabled() {
		shaped = e.opt.Shaping.reward(&e.scratch[w], s, e.seat[i], a, e.legal[i])
	}
	s.Apply(a)
	e.epLen[i]++
	e.rewards[i], e.dones[i] = float32(shaped), false
	e.shaped[i], e.resetting[i] = shaped, false
	return e.settle(w, i)
}

// settle plays environment i on up to the learner's next decision, or up
// to a batch opponent's move (pending; settlePending goes on from there),
// ending and restarting games on the way.
func (e *VecEnv) settle(w, i int) error {
	for {
		if err := e.advance(w, i); err != nil || e.pending[i] {
			return err
		}
		if !e.states[i].IsTerminal() {
			e.encode(i)
			return nil
		}
		if !e.resetting[i] {
			e.finish(w, i)
		}
		// A game the opponents finished before the learner moved is not
		// an episode of the learner; play another.
		if err := e.newGame(i); err != nil {
			return err
		}
	}
}

// finish records environment i's game, over after a learner move, as an
// episode and sets the step's reward.
func (e *VecEnv) finish(w, i int) {
	s, shaped := e.states[i], e.shaped[i]
	ret := e.returns[w]
	s.Returns(ret)
	r := ret[e.seat[i]]
	best, others := true, false
	for p, v := range ret {
		if p != e.seat[i] {
			best = best && r > v
			others = others || v > r
		}
	}
	st := &e.stats[w*e.kinds+e.kind[i]]
	st.Episodes++
	switch {
	case best:
		st.Wins++
	case others:
		st.Losses++
	default:
		st.Draws++
	}
	if e.opt.Reward == RewardWinOnly {
		r = 0
		if best {
			r = 1
		}
	}
	st.ReturnSum += r
	st.LengthSum += int64(e.epLen[i])
	e.rewards[i], e.dones[i] = float32(r+shaped), true
}

// resetOne starts environment i's next game with the learner in its next
// seat and plays up to its first decision (or its batch opponent's move).
func (e *VecEnv) resetOne(w, i int) error {
	if err := e.newGame(i); err != nil {
		return err
	}
	return e.settle(w, i)
}

// newGame starts environment i's next game: the initial state, the
// learner's next seat, a newly picked opponent.
func (e *VecEnv) newGame(i int) error {
	e.init.CloneInto(e.states[i])
	e.epLen[i] = 0
	e.resetting[i], e.pending[i], e.oppMoved[i] = true, false, 0
	if e.opt.Seat == SeatAlternate {
		e.seat[i] = (e.seat[i] + 1) % e.players
	}
	e.opp[i], e.kind[i] = e.opt.Opponents.Pick(e.rngs[i])
	if k := e.kind[i]; k < 0 || k >= e.kinds {
		return fmt.Errorf("rl: environment %d: opponent kind %d, want 0..%d", i, k, e.kinds-1)
	}
	if e.opp[i] == nil {
		return fmt.Errorf("rl: environment %d: no opponent picked", i)
	}
	return nil
}

// advance plays chance and opponent moves until the learner is to move,
// the game is over, or a batch opponent is to move (then pending[i] is
// set).
func (e *VecEnv) advance(w, i int) error {
	s, seat, rng, m := e.states[i], e.seat[i], e.rngs[i], e.omask[w]
	for !s.IsTerminal() {
		p := s.CurrentPlayer()
		if p == seat {
			return nil
		}
		if p == games.ChancePlayer {
			cs, ok := s.(games.ChanceState)
			if !ok {
				return fmt.Errorf("rl: environment %d: chance node without ChanceState in %s", i, s)
			}
			s.Apply(cs.SampleChance(rng))
			continue
		}
		if p < 0 {
			return fmt.Errorf("rl: environment %d: unsupported player %d to move in %s", i, p, s)
		}
		if _, ok := e.opp[i].(BatchOpponent); ok {
			e.pending[i] = true
			return nil
		}
		s.Legal(m)
		a, err := e.opp[i].Act(s, p, m, rng)
		if err != nil {
			return fmt.Errorf("rl: environment %d: opponent: %w", i, err)
		}
		if !m.Has(a) {
			return fmt.Errorf("rl: environment %d: opponent action %d is not legal in %s", i, a, s)
		}
		s.Apply(a)
	}
	return nil
}

// encode writes environment i's learner observation and legal actions.
func (e *VecEnv) encode(i int) {
	s := e.states[i]
	m := e.legal[i]
	s.Legal(m)
	e.enc.Encode(s, e.seat[i], m, e.obs[i*e.obsSize:(i+1)*e.obsSize])
	if e.legalB != nil {
		lb := e.legalB[i*e.nActions : (i+1)*e.nActions]
		clear(lb)
		for a := range m.All() {
			lb[a] = true
		}
		return
	}
	lf := e.legalF[i*e.nActions : (i+1)*e.nActions]
	clear(lf)
	for a := range m.All() {
		lf[a] = 1
	}
}
