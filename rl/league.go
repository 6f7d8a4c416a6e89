package rl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// Opponents chooses the opponent of every new game of a VecEnv. Games are
// counted per opponent kind (VecEnv.StatsByKind), so that a run reports
// its win rate against each kind of opponent it met.
type Opponents interface {
	// Kinds names the opponent kinds. It must not change while the
	// VecEnv uses the Opponents.
	Kinds() []string
	// Pick returns the opponent of a new game and the index of its kind
	// in Kinds, drawing only from rng (the environment's stream). With
	// EnvOptions.Workers > 1 it is called concurrently, so it must not
	// change state; the opponents it returns must be safe for concurrent
	// use.
	Pick(rng *rand.Rand) (Opponent, int)
}

// Fixed is one opponent in every game, counted under kind Name.
type Fixed struct {
	Name     string
	Opponent Opponent
}

// Kinds implements Opponents.
func (f Fixed) Kinds() []string { return []string{f.Name} }

// Pick implements Opponents.
func (f Fixed) Pick(*rand.Rand) (Opponent, int) { return f.Opponent, 0 }

// WeightedOpponent is a fixed opponent of a League with its weight in a
// phase's mixture.
type WeightedOpponent struct {
	Name     string
	Opponent Opponent
	Weight   float64
}

// Mixture is one phase of a League: the probabilities of each new game's
// opponent. Latest is the learner's current weights, Pool a snapshot
// drawn uniformly from the pool, and Fixed the fixed opponents. Weights
// are relative (they need not sum to 1); with an empty pool, Pool's
// weight goes to Latest, or to the fixed opponents when Latest is 0.
type Mixture struct {
	Latest, Pool float64
	Fixed        []WeightedOpponent
}

// LeagueOptions configures a League.
type LeagueOptions struct {
	// PoolSize is the number of snapshots kept (the oldest is dropped
	// first).
	PoolSize int
	// WarmupUpdates is the number of updates that play Warmup; later
	// updates play Main.
	WarmupUpdates int
	Warmup, Main  Mixture
}

// Study002League is study 002's fictitious self-play (section 4.3): a
// pool of N = 20 snapshots of the learner; every game is against the
// latest policy with probability 0.8 and a snapshot drawn uniformly from
// the pool with probability 0.2. The study does not say when snapshots
// are taken; `canopy ppo` takes one at every checkpoint.
func Study002League() LeagueOptions {
	return LeagueOptions{PoolSize: 20, Main: Mixture{Latest: 0.8, Pool: 0.2}}
}

// Study000League is study 000's schedule (section 3.3): during the first
// 400 updates every game is against greedy or random with probability
// 0.5 each; after, 0.7 a snapshot from a pool of the 5 most recent
// checkpoints, 0.15 greedy, 0.15 random. Greedy is the game's greedy
// agent (for Connect Four, onestep).
func Study000League(greedy, random Opponent) LeagueOptions {
	return LeagueOptions{PoolSize: 5, WarmupUpdates: 400,
		Warmup: Mixture{Fixed: []WeightedOpponent{{"greedy", greedy, 0.5}, {"random", random, 0.5}}},
		Main:   Mixture{Pool: 0.7, Fixed: []WeightedOpponent{{"greedy", greedy, 0.15}, {"random", random, 0.15}}}}
}

// Kind names of a League's network opponents.
const (
	KindLatest = "latest"
	KindPool   = "pool"
)

// League is a mixture of the learner's latest weights, a pool of its
// snapshots and fixed opponents, chosen per game, in one or two phases.
// Its network opponents are NetOpponents for a plain learner (NewLeague)
// and RecurrentOpponents for study 000's recurrent one
// (NewRecurrentLeague), each keeping its own LSTM state per environment.
// Pick is safe for concurrent use; SetUpdate, the Sync and the
// AddSnapshot methods are not, and must be called between Steps (PPO
// calls Sync and SetUpdate before every rollout).
type League struct {
	opt    LeagueOptions
	kinds  []string
	fixedK map[string]int // fixed opponent name -> kind
	game   games.Game
	// Exactly one of latestNet and latestRec is set, as the learner is.
	latestNet *NetOpponent
	latestRec *RecurrentOpponent
	latest    Opponent   // the one set
	pool      []Opponent // oldest first; of latest's type
	warm      bool
}

// NewLeague returns a league for a learner shaped like net (whose weights
// the latest opponent copies at each Sync) on game g.
func NewLeague(g games.Game, net *nets.Net, opt LeagueOptions) (*League, error) {
	if net == nil {
		return nil, errors.New("rl: NewLeague needs the learner's net")
	}
	l, err := newLeague(g, opt)
	if err != nil {
		return nil, err
	}
	if l.latestNet, err = NewNetOpponent(g, net.Clone()); err != nil {
		return nil, err
	}
	l.latest = l.latestNet
	return l, nil
}

// NewRecurrentLeague returns a league for a recurrent learner shaped like
// net (study 000's CNN-LSTM) on game g: its latest opponent and pool
// snapshots are RecurrentOpponents.
func NewRecurrentLeague(g games.Game, net *nets.Recurrent, opt LeagueOptions) (*League, error) {
	if net == nil {
		return nil, errors.New("rl: NewRecurrentLeague needs the learner's net")
	}
	l, err := newLeague(g, opt)
	if err != nil {
		return nil, err
	}
	if l.latestRec, err = NewRecurrentOpponent(g, net.Clone()); err != nil {
		return nil, err
	}
	l.latest = l.latestRec
	return l, nil
}

// newLeague checks opt and sets up everything but the latest opponent.
func newLeague(g games.Game, opt LeagueOptions) (*League, error) {
	if opt.PoolSize < 0 || opt.PoolSize > 1000 {
		return nil, fmt.Errorf("rl: league pool size %d, want 0..1000", opt.PoolSize)
	}
	if opt.WarmupUpdates < 0 {
		return nil, fmt.Errorf("rl: league warm-up of %d updates, want >= 0", opt.WarmupUpdates)
	}
	l := &League{opt: opt, kinds: []string{KindLatest, KindPool}, fixedK: map[string]int{}, game: g}
	phases := []Mixture{opt.Main}
	if opt.WarmupUpdates > 0 {
		phases = append(phases, opt.Warmup)
	}
	for _, m := range phases {
		if err := m.check(opt.PoolSize); err != nil {
			return nil, err
		}
		for _, f := range m.Fixed {
			if _, ok := l.fixedK[f.Name]; !ok {
				l.fixedK[f.Name] = len(l.kinds)
				l.kinds = append(l.kinds, f.Name)
			}
		}
	}
	l.SetUpdate(0)
	return l, nil
}

func (m Mixture) check(poolSize int) error {
	ok := func(w float64) bool { return w >= 0 && !math.IsInf(w, 0) }
	sum := m.Latest + m.Pool
	if !ok(m.Latest) || !ok(m.Pool) {
		return fmt.Errorf("rl: league weights latest %g, pool %g: want finite and >= 0", m.Latest, m.Pool)
	}
	if m.Pool > 0 && poolSize == 0 {
		return errors.New("rl: league draws from a pool of size 0; give it a pool size")
	}
	for _, f := range m.Fixed {
		switch {
		case f.Name == "" || f.Name == KindLatest || f.Name == KindPool:
			return fmt.Errorf("rl: league opponent name %q: want a non-empty name other than %q and %q", f.Name, KindLatest, KindPool)
		case f.Opponent == nil:
			return fmt.Errorf("rl: league opponent %q is nil", f.Name)
		case !ok(f.Weight):
			return fmt.Errorf("rl: league opponent %q has weight %g, want finite and >= 0", f.Name, f.Weight)
		}
		sum += f.Weight
	}
	if !(sum > 0) {
		return errors.New("rl: league mixture has no positive weight")
	}
	if m.Latest == 0 && sum == m.Pool {
		return errors.New("rl: league mixture plays only the pool, which is empty at the start; give latest or a fixed opponent a weight")
	}
	return nil
}

// Kinds implements Opponents: "latest", "pool", then the fixed opponents'
// names in order of first appearance (main phase first).
func (l *League) Kinds() []string { return l.kinds }

// SetUpdate selects the phase of the games that update (0-based: the
// update about to be collected) plays.
func (l *League) SetUpdate(update int) { l.warm = update < l.opt.WarmupUpdates }

// Sync copies the learner's weights into the latest opponent.
func (l *League) Sync(learner *nets.Net) error {
	if l.latestNet == nil {
		return errors.New("rl: a recurrent learner's league synced with a plain net")
	}
	return l.latestNet.Net.CopyFrom(learner)
}

// SyncRecurrent copies a recurrent learner's weights into the latest
// opponent (of a NewRecurrentLeague).
func (l *League) SyncRecurrent(learner *nets.Recurrent) error {
	if l.latestRec == nil {
		return errors.New("rl: a plain learner's league synced with a recurrent net")
	}
	return l.latestRec.Net.CopyFrom(learner)
}

// AddSnapshot adds a copy of net to the pool, dropping the oldest
// snapshot when the pool is full. Opponents picked before keep their
// weights (a game in progress is not switched to another snapshot).
func (l *League) AddSnapshot(net *nets.Net) error {
	if l.latestNet == nil {
		return errors.New("rl: a recurrent learner's league given a plain snapshot")
	}
	if l.opt.PoolSize == 0 {
		return nil
	}
	o, err := NewNetOpponent(l.game, net.Clone())
	if err != nil {
		return err
	}
	l.push(o)
	return nil
}

// AddRecurrentSnapshot is AddSnapshot for a recurrent league: the
// snapshot plays with an LSTM state of its own per environment.
func (l *League) AddRecurrentSnapshot(net *nets.Recurrent) error {
	if l.latestRec == nil {
		return errors.New("rl: a plain learner's league given a recurrent snapshot")
	}
	if l.opt.PoolSize == 0 {
		return nil
	}
	o, err := NewRecurrentOpponent(l.game, net.Clone())
	if err != nil {
		return err
	}
	l.push(o)
	return nil
}

// push adds o to the pool, dropping the oldest snapshot when it is full.
func (l *League) push(o Opponent) {
	if len(l.pool) == l.opt.PoolSize {
		l.pool[0] = nil
		l.pool = l.pool[1:]
	}
	l.pool = append(l.pool, o)
}

// PoolLen is the number of snapshots in the pool.
func (l *League) PoolLen() int { return len(l.pool) }

// Pick implements Opponents.
func (l *League) Pick(rng *rand.Rand) (Opponent, int) {
	m := l.opt.Main
	if l.warm {
		m = l.opt.Warmup
	}
	latest, pool := m.Latest, m.Pool
	if len(l.pool) == 0 {
		if latest > 0 {
			latest += pool
		}
		pool = 0
	}
	sum := latest + pool
	for _, f := range m.Fixed {
		sum += f.Weight
	}
	x := rng.Float64() * sum
	if x < latest {
		return l.latest, 0
	}
	x -= latest
	if x < pool {
		return l.pool[rng.IntN(len(l.pool))], 1
	}
	x -= pool
	last := -1
	for i, f := range m.Fixed {
		if f.Weight <= 0 {
			continue
		}
		last = i
		if x < f.Weight {
			break
		}
		x -= f.Weight
	}
	f := m.Fixed[last]
	return f.Opponent, l.fixedK[f.Name]
}

// NetOpponent plays by sampling from a network's masked policy
// (temperature 1, as the learner samples its own moves), seeing the board
// from its own side. It is safe for concurrent use (calls are
// serialised).
type NetOpponent struct {
	Net    *nets.Net
	game   games.Game
	enc    *nets.Encoder
	mu     sync.Mutex
	obs    []float32
	logits []float32
	probs  []float32
	value  [1]float32
}

// NewNetOpponent returns an opponent that plays net's policy in g. The
// net's input decides the encoding (see nets.EncodingFor).
func NewNetOpponent(g games.Game, net *nets.Net) (*NetOpponent, error) {
	e, err := nets.EncodingFor(g, net.InputSize())
	if err != nil {
		return nil, err
	}
	enc, err := nets.NewEncoder(g, e)
	if err != nil {
		return nil, err
	}
	if net.PolicySize() != g.NumActions() {
		return nil, fmt.Errorf("rl: net gives %d logits; game %s has %d actions", net.PolicySize(), g.Spec(), g.NumActions())
	}
	if net.ValueSize() != 1 {
		return nil, fmt.Errorf("rl: the net has a per-player value head (%d values); league opponents take scalar-head nets", net.ValueSize())
	}
	return &NetOpponent{Net: net, game: g, enc: enc, obs: make([]float32, enc.Size()),
		logits: make([]float32, g.NumActions()), probs: make([]float32, g.NumActions())}, nil
}

// Act implements Opponent.
func (o *NetOpponent) Act(s games.State, player int, legal games.Mask, rng *rand.Rand) (games.Action, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.enc.Encode(s, player, legal, o.obs)
	o.Net.Forward(1, o.obs, o.logits, o.value[:])
	if !nets.MaskedSoftmax(o.logits, legal, o.probs) {
		return games.NoAction, fmt.Errorf("rl: the opponent net's policy is not finite on %s", s)
	}
	return sample(o.probs, legal, rng), nil
}
