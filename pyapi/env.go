package pyapi

import (
	"encoding/json"
	"github.com/canopy-go/canopy/search/engine"
	"io"
	"math/rand/v2"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/rl"
)

// VecEnv is canopy.VecEnv: N games stepped together, observations from
// the mover's view written into Python's arrays. With an opponent it is
// an rl.VecEnv (the learner's seat alternates by default; the opponent
// plays every other seat, chance is sampled inside); without, every seat
// is the caller's (self-play: the action is the mover's, rewards are per
// player). Both reset a finished game in the same step (the returned
// observation is the next game's first). A VecEnv is not safe for
// concurrent use (the Python package serialises calls per object).
type VecEnv struct {
	g        games.Game
	n        int
	players  int
	obsN, na int
	opponent string

	// Python's arrays (see openEnv for their shapes).
	obs     []float32
	legal   []byte
	rewards []float32
	term    []byte
	trunc   []byte
	toPlay  []int32
	actions []int64

	acts []games.Action

	rl       *rl.VecEnv // with an opponent
	seat     int
	workers  int
	oppAgent agent.Agent // to close with the environment

	// Without an opponent.
	states []games.State
	rngs   []*rand.Rand
	masks  []games.Mask
	ret    []float64
	init   games.State
	seed   uint64
}

// envArgs are canopy.VecEnv's arguments.
type envArgs struct {
	Game     string  `json:"game"`
	N        int     `json:"num_envs"`
	Seed     uint64  `json:"seed"`
	Opponent *string `json:"opponent"`
	Seat     *int    `json:"seat"`
	Workers  int     `json:"workers"`
}

// openEnv opens a VecEnv on buffers obs f32 [N, C, H, W], legal_mask bool
// [N, A], rewards f32 [N] (with an opponent) or [N, players], terminations
// bool [N], truncations bool [N], to_play i32 [N] and actions i64 [N].
func openEnv(args json.RawMessage, bufs [][]byte) (*VecEnv, error) {
	var a envArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	g, err := newGame(a.Game)
	if err != nil {
		return nil, err
	}
	if err := sequentialGame(g, "VecEnv"); err != nil {
		return nil, err
	}
	if a.N < 1 || a.N > 1<<20 {
		return nil, valueErrorf("num_envs = %d, want 1..%d", a.N, 1<<20)
	}
	e := &VecEnv{g: g, n: a.N, players: g.NumPlayers(), obsN: games.ObservationSize(g), na: g.NumActions()}
	rw := a.N
	if a.Opponent == nil {
		rw = a.N * e.players
	}
	if err := checkBufs("VecEnv", bufs, []bufSpec{
		{"obs", 4, a.N * e.obsN}, {"legal_mask", 1, a.N * e.na}, {"rewards", 4, rw},
		{"terminations", 1, a.N}, {"truncations", 1, a.N}, {"to_play", 4, a.N}, {"actions", 8, a.N},
	}); err != nil {
		return nil, err
	}
	e.obs, e.legal, e.rewards = f32s(bufs[0]), bufs[1], f32s(bufs[2])
	e.term, e.trunc, e.toPlay, e.actions = bufs[3], bufs[4], i32s(bufs[5]), i64s(bufs[6])
	e.acts = make([]games.Action, a.N)
	if a.Opponent == nil {
		if a.Seat != nil {
			return nil, valueErrorf("seat = %d has no meaning without an opponent (every seat is yours); give opponent=\"random\" or another agent spec", *a.Seat)
		}
		e.states = make([]games.State, a.N)
		e.rngs = make([]*rand.Rand, a.N)
		e.masks = make([]games.Mask, a.N)
		e.ret = make([]float64, e.players)
		e.init = g.NewInitialState()
		for i := range e.states {
			e.states[i] = g.NewInitialState()
			e.masks[i] = games.NewMask(e.na)
			e.rngs[i] = games.NewRand(envSeed(a.Seed, i))
		}
		e.seed = a.Seed
		if err := e.reset(nil); err != nil {
			return nil, err
		}
		return e, nil
	}
	e.opponent = *a.Opponent
	e.seat = rl.SeatAlternate
	if a.Seat != nil {
		e.seat = *a.Seat
		if e.seat != rl.SeatAlternate && (e.seat < 0 || e.seat >= e.players) {
			return nil, valueErrorf("seat = %d, want 0..%d or -1 (alternate seats game by game)", e.seat, e.players-1)
		}
	}
	if a.Workers < 0 || a.Workers > 256 {
		return nil, valueErrorf("workers = %d, want 0..256 (0: one)", a.Workers)
	}
	e.workers = a.Workers
	if err := e.openRL(a.Seed); err != nil {
		return nil, err
	}
	e.publish()
	return e, nil
}

// openRL (re)builds the rl.VecEnv with the opponent seeded from seed: an
// agent opponent's choices follow its own seed, so reset(seed) rebuilds
// it to replay the same games.
func (e *VecEnv) openRL(seed uint64) error {
	var opp rl.Opponent
	var ag agent.Agent
	if e.opponent == "random" {
		opp = rl.RandomOpponent() // the environment's own streams, no lock
	} else {
		var err error
		if ag, err = agent.New(e.g, e.opponent, engine.WithPool(agent.Env{Seed: seed ^ 0x0dd0})); err != nil {
			return valueErrorf("opponent %q: %v (canopy.agents(%q) lists the agents)", e.opponent, err, e.g.Spec())
		}
		opp = rl.AgentOpponent(ag)
	}
	// The rl.VecEnv writes observations, legal masks, rewards and dones
	// straight into Python's arrays.
	env, err := rl.NewEnv(e.g, rl.EnvOptions{N: e.n, Opponent: opp, Seat: e.seat, Workers: e.workers, Seed: seed,
		Observations: e.obs, LegalMask: bools(e.legal), Rewards: e.rewards, Dones: bools(e.term)})
	if err != nil {
		closeAgent(ag)
		return valueErrorf("%v", err)
	}
	e.closeRL()
	e.rl, e.oppAgent = env, ag
	e.publish()
	return nil
}

// closeRL closes the rl.VecEnv and its opponent agent (network agents
// hold engines).
func (e *VecEnv) closeRL() {
	if e.rl != nil {
		e.rl.Close()
		closeAgent(e.oppAgent)
		e.rl, e.oppAgent = nil, nil
	}
}

func closeAgent(a agent.Agent) {
	if c, ok := a.(io.Closer); ok {
		c.Close()
	}
}

// envSeed is environment i's stream under seed (as rl's).
func envSeed(seed uint64, i int) uint64 { return seed*0x9E3779B97F4A7C15 + uint64(i) + 1 }

func (e *VecEnv) close() error {
	e.closeRL()
	return nil
}

func (e *VecEnv) info() any {
	return map[string]any{"num_envs": e.n, "players": e.players, "actions": e.na,
		"observation_shape": e.g.ObservationShape(), "game": e.g.Spec(), "opponent": e.opponent}
}

// reset starts new games everywhere; seed, when given, reseeds every
// environment's stream first.
func (e *VecEnv) reset(seed *uint64) error {
	clear(e.rewards)
	clear(e.term)
	clear(e.trunc)
	if e.rl != nil {
		var err error
		if seed != nil && e.opponent != "random" {
			err = e.openRL(*seed)
		} else if seed != nil {
			err = e.rl.Reseed(*seed)
		} else {
			err = e.rl.Reset()
		}
		if err != nil {
			return runtimeErrorf("%v", err)
		}
		e.publish()
		return nil
	}
	if seed != nil {
		e.seed = *seed
		for i, r := range e.rngs {
			*r = *games.NewRand(envSeed(*seed, i))
		}
	}
	for i, s := range e.states {
		e.init.CloneInto(s)
		e.settle(i)
	}
	return nil
}

// publish writes the learners' seats into Python's array (the rl.VecEnv
// has written the observations, legal masks, rewards and dones there).
func (e *VecEnv) publish() {
	for i := range e.toPlay {
		e.toPlay[i] = int32(e.rl.Seat(i))
	}
}

// legalOf is environment i's legal actions now.
func (e *VecEnv) legalOf(i int) games.Mask {
	if e.rl != nil {
		return e.rl.Legal(i)
	}
	return e.masks[i]
}

// step plays the actions buffer. Every action is checked before any is
// played: a bad one is a ValueError naming it, and the environments are
// unchanged.
func (e *VecEnv) step() error {
	for i, a := range e.actions {
		if a < 0 || a >= int64(e.na) {
			return valueErrorf("actions[%d] = %d is out of range: %s has actions 0..%d", i, a, e.g.Spec(), e.na-1)
		}
		if !e.legalOf(i).Has(games.Action(a)) {
			return valueErrorf("actions[%d] = %d is illegal in environment %d (legal: %v); choose among info[\"legal_mask\"][%d]",
				i, a, i, e.legalOf(i).AppendTo(nil), i)
		}
		e.acts[i] = games.Action(a)
	}
	if e.rl != nil {
		if err := e.rl.Step(e.acts); err != nil {
			return runtimeErrorf("%v", err)
		}
		e.publish()
		return nil
	}
	clear(e.rewards)
	for i, s := range e.states {
		s.Apply(e.acts[i])
		e.term[i], e.trunc[i] = 0, 0
		switch e.settle(i) {
		case ended:
			e.term[i] = 1
		case truncated:
			e.trunc[i] = 1
		}
	}
	return nil
}

// Outcomes of settle.
const (
	playing   = iota
	ended     // the game is over (terminations)
	truncated // the game reached its maximum length unfinished (truncations)
)

// settle samples chance events in environment i, ends (rewards per
// player) and restarts a finished game, and writes the mover's
// observation and legal actions. It reports how the step's game went.
func (e *VecEnv) settle(i int) int {
	s, how := e.states[i], playing
	for {
		for s.CurrentPlayer() == games.ChancePlayer {
			s.Apply(s.(games.ChanceState).SampleChance(e.rngs[i]))
		}
		if s.IsTerminal() {
			s.Returns(e.ret)
			for p, r := range e.ret {
				e.rewards[i*e.players+p] = float32(r)
			}
			how = ended
		} else if s.MoveNumber() >= e.g.MaxGameLength() {
			how = truncated
		} else {
			break
		}
		e.init.CloneInto(s)
	}
	p := s.CurrentPlayer()
	s.Legal(e.masks[i])
	s.Observation(p, e.obs[i*e.obsN:(i+1)*e.obsN])
	row := e.legal[i*e.na : (i+1)*e.na]
	clear(row)
	for a := range e.masks[i].All() {
		row[a] = 1
	}
	e.toPlay[i] = int32(p)
	return how
}

// positions returns copies of the environments' current states (for
// search).
func (e *VecEnv) positions() []games.State {
	out := make([]games.State, e.n)
	for i := range out {
		if e.rl != nil {
			out[i] = e.rl.State(i).Clone()
		} else {
			out[i] = e.states[i].Clone()
		}
	}
	return out
}
