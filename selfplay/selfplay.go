package selfplay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/spec"
)

// Settings are the self-play parameters that decide a game's content
// (with the seed, the game index and the network): the PUCT settings the
// `az` agent shares (engine.Settings, same names and ranges, Gumbel root
// search included) plus resignation, playout-cap randomisation and policy
// target pruning. They are stored in the manifest and must match on
// --resume. The zero values of the options added after the first
// release (gumbel, gumbelm, pcr, pcrfast, prune) are their defaults, so
// manifests written before them read back as equal settings.
type Settings struct {
	engine.Settings
	// Resign: a player whose best move's Q (its own value, MaxN or
	// paranoid alike) is below -Resign resigns (0 = never). ResignOff is
	// the fraction of games played to the end anyway to count false
	// positives (a would-be resigner that did not finish alone in last
	// place, return above -1).
	//
	// Two players: the game ends, the resigner loses (-1), the other wins.
	// More players: a resignation cannot end the game, since the others'
	// order among themselves is still open and any adjudication of it
	// would put made-up targets into their positions. The resigner is
	// adjudicated alone in last place (return -1, what its value
	// predicted) and the game goes on for the others, the resigner's
	// remaining moves played without search (its network's most probable
	// action, one evaluation) and not recorded; the others' returns are
	// those of the game's end. At most one player resigns per game (a
	// second could not also be alone in last place).
	Resign    float64 `json:"resign"`
	ResignOff float64 `json:"resignoff"`
	// PCR is playout-cap randomisation (Wu 2019, "Accelerating Self-Play
	// Learning in Go", section 3.1): each move is, with probability PCR, a
	// full search of Sims simulations that is recorded for training, and
	// otherwise a fast search of PCRFast simulations without root noise
	// that is played but not recorded. 0 turns it off (every move is full
	// and recorded); KataGo uses 0.25 with 600 and 100 simulations.
	PCR float64 `json:"pcr"`
	// PCRFast is the fast searches' budget; 0 means Sims/4 (at least
	// Det).
	PCRFast int `json:"pcrfast"`
	// Prune records visit distributions after KataGo's policy target
	// pruning (Wu 2019, section 3.2; see pruneVisits). Not with Gumbel,
	// whose target is the improved policy.
	Prune bool `json:"prune"`
	// NoReuse starts every search from an empty tree. By default a move's
	// search keeps the subtree of the position reached (the played
	// child, its statistics and its descendants), as AlphaGo Zero's
	// self-play does; root Dirichlet noise is drawn afresh over the kept
	// root's network priors. Trees are never reused under Gumbel search
	// (sequential halving needs a fresh root) nor on sampled deals of
	// hidden-information games. The zero value (reuse) is the default, so
	// that manifests written before the option read back unchanged.
	NoReuse bool `json:"noreuse"`
	// RandomPlies diversifies the starting positions: each game first
	// plays a number of plies drawn uniformly from 0..RandomPlies, each a
	// uniformly random legal move that does not end the game, neither
	// searched nor recorded (the game's stream draws them, so a game
	// stays a function of the seed and its index). Self-play then sees
	// positions its own play would not reach, such as those of a
	// solver-labelled test set drawn from random games. 0 (the default)
	// is off and draws nothing.
	RandomPlies int `json:"randomplies"`
}

// Role is self-play's use of the az agent's search options
// (engine.Settings.Table): the same names, ranges and meaning, with the
// defaults of a player that explores. Each is declared here with its
// reason and shown in help; everything else is az's.
var Role = spec.Role{Name: "self-play", Of: "az", Overrides: []spec.Override{
	{Key: "dir", Default: "1", Why: "self-play explores with root noise; az plays its best"},
	{Key: "tempplies", Default: "8", Why: "self-play samples its opening plies so that games differ"},
	{Key: "det", Default: "1", Why: "one sampled deal per move, the games being many; az searches 8 for one game's move"},
	{Key: "reuse", Default: "true", Why: "AlphaGo Zero's self-play keeps the subtree, with fresh root noise; --reuse=false searches every move afresh (the manifest's key is noreuse)"},
}}

// Table declares the settings' options (flags of `canopy selfplay`, keys
// of the manifest) bound to s: the az agent's search options and
// reuse, then self-play's own, with Role's defaults.
func (s *Settings) Table() spec.Table {
	t := append(s.Settings.Table(),
		spec.Float("resign", &s.Resign, 0, 0, 1, "resign when the best move's value is below -resign (0 = never; 3+ players: the resigner is scored last and plays on without search)"),
		spec.Float("resignoff", &s.ResignOff, 0.1, 0, 1, "fraction of games that never resign (measures false resignations)"),
		spec.Float("pcr", &s.PCR, 0, 0, 1, "playout-cap randomisation: probability that a move is a full, recorded search (0 = off: every move; KataGo 0.25)"),
		spec.Int("pcrfast", &s.PCRFast, 0, 0, 1<<24, "simulations of the fast, unrecorded searches under pcr (0 = sims/4)"),
		spec.Bool("prune", &s.Prune, false, "record visit distributions after KataGo's policy target pruning"),
		// The az agent's reuse= (search/engine), stored negated as
		// noreuse in manifests of every release.
		spec.Not("reuse", &s.NoReuse, false, "reuse the subtree of the position reached between moves"),
		spec.Int("randomplies", &s.RandomPlies, 0, 0, 1<<16, "start each game with 0..N (uniform) random legal plies, not searched nor recorded (diverse positions; 0 = off)"))
	return Role.Apply(t)
}

// Table declares the run's options that `canopy selfplay` sets by flag
// (games, trees, seed, turn-search; Settings.Table declares the search's)
// bound to c. TurnSearch is the spec as given (TurnSearchSpec resolves
// it for the game).
func (c *Config) Table() spec.Table {
	return spec.Table{
		spec.Int("games", &c.NumGames, 64, 1, MaxGames, "self-play games: the run's total (per run directory; split a larger run over several)"),
		TreesOption(&c.Trees),
		spec.Uint64("seed", &c.Seed, 1, 0, math.MaxUint64, "random seed: game i is a function of (seed, i)"),
		spec.String("turn-search", &c.TurnSearch, "", "multi-action games: search whole turns with this agent spec (mcts-v, mcts-bb or emcts, e.g. mcts-bb:sims=250; study 004)"),
	}
}

// TreesOption declares the number of games a self-play engine plays at
// once (trees searched together), bound to p: `canopy selfplay`'s,
// `canopy zero`'s and `canopy worker`'s --trees. A game is a function
// of the seed and its index alone, so it changes speed and memory, never
// the games.
func TreesOption(p *int) spec.Option {
	return spec.Int("trees", p, 64, 1, 1<<16, "self-play games played at once (trees searched together; the games do not depend on it)")
}

// Changed returns the keys (flag names) of the settings whose values
// differ from base's, in table order.
func (s *Settings) Changed(base *Settings) []string {
	t := s.Table()
	sv, bv := t.Values(), base.Table().Values()
	var keys []string
	for _, k := range t.Keys() {
		if sv[k] != bv[k] {
			keys = append(keys, k)
		}
	}
	return keys
}

// DefaultSettings are AlphaZero-like settings for small board games (the
// defaults of Settings.Table).
func DefaultSettings() Settings {
	var s Settings
	s.Table().Reset()
	return s
}

// Check reports the first out-of-range setting, named as in the
// settings' JSON (and the CLI flag of the same name).
func (s *Settings) Check() error {
	c := *s // Check stores what it re-validates: keep s untouched
	if err := c.Table().Check(); err != nil {
		return err
	}
	if s.Det > s.Sims {
		return fmt.Errorf("det=%d is out of range (want 1..sims = %d)", s.Det, s.Sims)
	}
	if s.PCR > 0 && s.PCRFast > s.Sims {
		return fmt.Errorf("pcrfast=%d is out of range (want 0..sims = %d; 0 = sims/4)", s.PCRFast, s.Sims)
	}
	if s.Prune && s.Gumbel {
		return fmt.Errorf("prune and gumbel exclude each other: pruning applies to visit counts, Gumbel search records its improved policy")
	}
	return nil
}

// FastSims is the budget of a fast search under playout-cap
// randomisation: PCRFast, or Sims/4 when it is 0, and at least one
// simulation per determinization.
func (s *Settings) FastSims() int {
	n := s.PCRFast
	if n == 0 {
		n = s.Sims / 4
	}
	return max(n, s.Det, 1)
}

// GameRecord is one finished self-play game: one row per move.
type GameRecord struct {
	ID     int
	Obs    []float32 // Positions x observation size, from the mover's view
	Policy []float32 // Positions x NumActions: visit distribution
	Legal  []uint8   // Positions x NumActions: 1 where the action was legal for the mover
	Value  []float32 // final outcome from the mover's view, in [-1, 1]
	// Values are the per-player value targets of games of three or more
	// players (nil for fewer): Positions x NumPlayers, row i the final
	// returns seat-rotated so that the mover comes first (entry k is the
	// return of player (mover_i + k) mod players), what a per-player
	// value head (nets.Config.ValuePlayers) learns. Row i starts with
	// Value[i].
	Values []float32
	// RootQ is the search's value of each position for the mover: the
	// visit-weighted mean Q of the root's actions, merged over the
	// determinizations (in [-1, 1]; 0 without visits).
	RootQ []float32
	// RootValues are, for games of three or more players (nil for
	// fewer), the search's value of each position for every player:
	// Positions x NumPlayers, seat-rotated as Values, entry 0 the
	// mover's RootQ and entry k the mean over the search's simulations
	// of the value backed up for player (mover+k) mod players
	// (engine.MergeRootValues): what train's qmix mixes into a per-player
	// head's targets.
	RootValues []float32
	Ply        []int32 // MoveNumber of each position
	// Returns are the final values per player in [-1, 1] (after a
	// resignation: -1 for the resigner, +1 for the opponent).
	Returns  []float64
	Resigned bool
	// FalseResign: resignation was disabled in this game and a player who
	// would have resigned did not lose.
	ResignOffGame, FalseResign bool
	Nodes                      int64 // simulations run
}

// Positions is the number of recorded moves.
func (r *GameRecord) Positions() int { return len(r.Value) }

// Config is one self-play run.
type Config struct {
	Settings Settings
	Seed     uint64
	// Games lists the game indices to play (game i uses seeds derived
	// from (Seed, i)). Nil means 0..NumGames-1.
	Games    []int
	NumGames int
	// Next, when set, hands out the game indices instead of Games and
	// NumGames: a slot that is free (at the start, and each time its
	// game ends) asks it for the next index, and ends when it says there
	// is none now (ok false). It is called one call at a time, from the
	// goroutines that play, and must not block. Run returns when every
	// slot has ended. A caller that takes its games from a queue (a fleet
	// worker) keeps every slot busy this way instead of waiting for a
	// whole batch to finish. Not with TurnSearch.
	Next func() (id int, ok bool)
	// Trees is the number of games played at once (each with
	// Determinize trees). Default 64.
	Trees int
	// OnGame receives every finished game, from worker goroutines
	// (serialised by the run). An error stops the run.
	OnGame func(*GameRecord) error
	// TurnSearch, when set, is a whole-turn search (study 004: see
	// TurnSearchSpec) that plays every game with PlayTurns instead of
	// PUCT per atomic action: a search/multi.TurnSearcher per game,
	// seeded from (Seed, game id) alone, its leaves evaluated by the
	// engine's network; Trees games at a time, one goroutine each. Its
	// policy histories are the policy targets; RootQ is 0. Settings then
	// have no meaning and must be DefaultSettings (the spec holds the
	// search's options). Multi-action games only.
	TurnSearch string
}

// slot is one concurrent game: its jobs, state and record so far.
type slot struct {
	r    *runner
	jobs []*engine.Job
	left int // jobs still searching this move
	// full and fast are the game's trees for full and (under playout-cap
	// randomisation) fast searches, one per job; record says whether the
	// move being searched is a full one, to be recorded.
	full, fast []*search.Tree
	record     bool
	policy     []float32 // Gumbel: the merged improved policy

	id        int
	seed      uint64
	rng       *rand.Rand
	state     games.State
	rec       *GameRecord
	resignOff bool
	would     []bool // would have resigned (resign-off games)
	stats     []search.ActionStat
	merged    []search.ActionStat
	visits    []float64
	legal     games.Mask
	scratch   games.State // randomOpening's look-ahead
	// seat is the player being searched at a simultaneous state (-1
	// elsewhere): each player's choice is searched in turn, on deals
	// sampled from its own view, into joint, then applied together.
	seat  int
	joint []games.Action
	rootv []float64 // engine.MergeRootValues scratch (3+ players)
	// resigned is the player who resigned in a game of three or more
	// players (-1: none); its moves are played without search.
	resigned int
}

type runner struct {
	e     *engine.Engine
	cfg   *Config
	g     games.Game
	ids   []int // game indices to play; nil: 0..total-1
	total int
	next  atomic.Int64
	// nextMu serialises the calls of cfg.Next.
	nextMu sync.Mutex
	opts   search.Options
	fast   search.Options // playout-cap randomisation: the fast searches' trees
	gumb   engine.GumbelOptions
	det    bool // determinize with Resample
	obsN   int
	tmin   float64
	tscal  float64

	mu  sync.Mutex
	err error
}

// Run plays cfg's games on e and hands each finished one to cfg.OnGame.
// When ctx ends, games in flight are abandoned (never handed over) and
// ctx.Err() is returned after every request has drained.
func Run(ctx context.Context, e *engine.Engine, cfg Config) error {
	st := cfg.Settings
	if err := st.Check(); err != nil {
		return err
	}
	if cfg.TurnSearch != "" {
		def := DefaultSettings()
		if keys := st.Changed(&def); len(keys) > 0 {
			return fmt.Errorf("selfplay: %s: no meaning under the turn search %q, which sets its own search (options in its spec, e.g. mcts-bb:sims=250); leave them at their defaults", strings.Join(keys, ", "), cfg.TurnSearch)
		}
	}
	g := e.Game()
	ids, total := cfg.Games, len(cfg.Games)
	if ids == nil {
		total = cfg.NumGames
	}
	if cfg.Next != nil {
		if cfg.TurnSearch != "" {
			return errors.New("selfplay: Config.Next does not work with a turn search")
		}
		ids, total = nil, max(cfg.Trees, 1)
		if cfg.Trees <= 0 {
			total = 64
		}
	}
	if total <= 0 {
		return nil
	}
	if cfg.TurnSearch != "" {
		return runTurns(ctx, e, &cfg, ids, total)
	}
	r := &runner{e: e, cfg: &cfg, g: g, ids: ids, total: total}
	r.cfg.Settings.Leaves = max(st.Leaves, 1)
	var k int
	r.opts, r.fast, k, r.det = treeOptions(g, st)
	r.cfg.Settings.Det = k
	so := st.SearchOptions()
	blend, err := engine.BlendRollout(g, so)
	if err != nil {
		return fmt.Errorf("selfplay: %w", err)
	}
	r.gumb = so.Gumbel
	r.obsN = 1
	for _, d := range g.ObservationShape() {
		r.obsN *= d
	}
	t := g.Type()
	r.tmin, r.tscal = -1, 1
	if t.MaxReturn > t.MinReturn {
		r.tmin, r.tscal = t.MinReturn, 2/(t.MaxReturn-t.MinReturn)
	}
	trees := cfg.Trees
	if trees <= 0 {
		trees = 64
	}
	trees = min(trees, total)
	nw := min(e.Options().Workers, trees)
	return e.RunWorkers(ctx, nw, func(i int, w *engine.Worker) error {
		for s := i; s < trees; s += nw {
			sl := &slot{r: r}
			for range k {
				j := w.NewJob(st.Leaves, sl.jobDone)
				j.SetBlend(st.Blend, blend)
				j.SetNetVisits(st.NetVisits)
				j.SetBackup(st.Backup)
				sl.jobs = append(sl.jobs, j)
			}
			sl.state = g.NewInitialState()
			sl.full = make([]*search.Tree, k)
			sl.fast = make([]*search.Tree, k)
			sl.policy = make([]float32, g.NumActions())
			sl.visits = make([]float64, g.NumActions())
			sl.legal = games.NewMask(g.NumActions())
			sl.would = make([]bool, g.NumPlayers())
			sl.joint = make([]games.Action, g.NumPlayers())
			sl.rootv = make([]float64, g.NumPlayers())
			if !sl.nextGame(w) {
				break
			}
		}
		return nil
	})
}

// nextGame claims the next game index and starts it; false when none is
// left.
func (sl *slot) nextGame(w *engine.Worker) bool {
	r := sl.r
	if r.cfg.Next != nil {
		r.nextMu.Lock()
		id, ok := r.cfg.Next()
		r.nextMu.Unlock()
		if !ok {
			return false
		}
		sl.id = id
	} else {
		n := int(r.next.Add(1) - 1)
		if n >= r.total {
			return false
		}
		sl.id = n
		if r.ids != nil {
			sl.id = r.ids[n]
		}
	}
	sl.seed = arena.DeriveSeed(r.cfg.Seed, uint64(sl.id))
	sl.rng = games.NewRand(arena.DeriveSeed(sl.seed, 1<<32))
	s0 := r.g.NewInitialState()
	s0.CloneInto(sl.state)
	sl.rec = &GameRecord{ID: sl.id}
	st := &r.cfg.Settings
	sl.resignOff = st.Resign > 0 && sl.rng.Float64() < st.ResignOff
	sl.rec.ResignOffGame = sl.resignOff
	sl.resigned = -1
	clear(sl.would)
	if st.RandomPlies > 0 {
		sl.randomOpening(st.RandomPlies)
	}
	for q, j := range sl.jobs {
		// The slot's trees are made for its first game and Reset (same
		// streams as new ones, arenas kept) for the next.
		if err := renew(&sl.full[q], r.g, r.opts, arena.DeriveSeed(sl.seed, uint64(2*q+1))); err != nil {
			w.Fail(err)
			return false
		}
		j.SetTree(sl.full[q], 0)
		if st.PCR > 0 {
			if err := renew(&sl.fast[q], r.g, r.fast, arena.DeriveSeed(sl.seed, uint64(2*q+2))); err != nil {
				w.Fail(err)
				return false
			}
		}
		j.SetGumbel(r.gumb, arena.DeriveSeed(sl.seed, uint64(1<<33+q)))
	}
	sl.startMove(w)
	return true
}

// randomOpening plays the game's first plies at random (see
// Settings.RandomPlies): a count drawn uniformly from 0..n, each ply a
// uniformly random legal move among those that do not end the game, with
// chance events sampled on the way. It stops early where every legal
// move ends the game.
func (sl *slot) randomOpening(n int) {
	s := sl.state
	if sl.scratch == nil {
		sl.scratch = sl.r.g.NewInitialState()
	}
	for range sl.rng.IntN(n + 1) {
		for s.CurrentPlayer() == games.ChancePlayer {
			s.Apply(s.(games.ChanceState).SampleChance(sl.rng))
		}
		if s.IsTerminal() || s.MoveNumber() >= sl.r.g.MaxGameLength() {
			return
		}
		s.Legal(sl.legal)
		for {
			if sl.legal.Empty() {
				return
			}
			a := sl.legal.Random(sl.rng)
			s.CloneInto(sl.scratch)
			sl.scratch.Apply(a)
			if !sl.scratch.IsTerminal() {
				s.Apply(a)
				break
			}
			sl.legal.Unset(a)
		}
	}
}

// treeOptions returns the search options of the trees of self-play with
// settings st on g (Run and MemoryBytes share them): full searches', and
// under playout-cap randomisation (PCR > 0) fast searches' (else the zero
// Options); k, the trees per game (the determinizations of
// hidden-information games, else 1); det, whether moves are searched on
// sampled deals.
func treeOptions(g games.Game, st Settings) (full, fast search.Options, k int, det bool) {
	_, isRes := g.NewInitialState().(games.Resampler)
	// Hidden-information games are always searched on sampled deals (one
	// or more): searching the real state would show the network the
	// opponents' hidden cards.
	det = isRes && g.Type().Information == games.ImperfectInformation
	k = 1
	if det {
		k = st.Det
	}
	so := st.SearchOptions()
	o := so.Search
	o.Sims = max(st.Sims/k, 1)
	// A kept subtree holds the played child's visits, so trees that
	// reuse get room for several searches (as engine.NewSearcher's).
	o.Reuse = !st.NoReuse && !det && so.Gumbel.M == 0
	o.MaxNodes = arenaNodes(o.Sims, st.Leaves, o.Reuse)
	o.MaxEdges = o.MaxNodes * min(g.NumActions(), 64)
	if st.PCR > 0 {
		// Fast searches: fewer simulations and no root noise (Wu 2019).
		fast = o
		fast.DirichletA = 0
		fast.Sims = max(st.FastSims()/k, 1)
		fast.MaxNodes = arenaNodes(fast.Sims, st.Leaves, fast.Reuse)
		fast.MaxEdges = fast.MaxNodes * min(g.NumActions(), 64)
	}
	return o, fast, k, det
}

// MemoryBytes estimates, in bytes, the memory Run allocates for c's
// games of g: the search trees of the games played at once (Trees, at
// most the games to play, with the trees of every determinization and,
// under playout-cap randomisation, of fast searches), each sized by
// search.Options.TreeBytes, and one game record per game at once, of the
// longest possible game. The engine's batcher and the network's scratch
// are the caller's (engine.Options.MemoryBytes, the backend). Under a
// TurnSearch only the records are counted: a turn searcher's tree is
// small (about twice its simulations in nodes). The result is a float64:
// absurd settings overflow int64. Errors are the settings' (Check).
func (c Config) MemoryBytes(g games.Game) (float64, error) {
	st := c.Settings
	if err := st.Check(); err != nil {
		return 0, err
	}
	trees := c.Trees
	if trees <= 0 {
		trees = 64
	}
	total := c.NumGames
	if c.Games != nil {
		total = len(c.Games)
	}
	at := float64(max(min(trees, total), 1))
	rec := at * recordBytes(g)
	if c.TurnSearch != "" {
		return rec, nil
	}
	full, fast, k, _ := treeOptions(g, st)
	leaves := max(st.Leaves, 1)
	per, err := full.TreeBytes(g, leaves)
	if err != nil {
		return 0, err
	}
	if st.PCR > 0 {
		f, err := fast.TreeBytes(g, leaves)
		if err != nil {
			return 0, err
		}
		per += f
	}
	return at*float64(k)*float64(per) + rec, nil
}

// recordBytes bounds one game record of g (GameRecord: observation and
// policy float32s, legal-mask bytes, value and ply per position) by the
// longest possible game.
func recordBytes(g games.Game) float64 {
	perPos := 4*float64(games.ObservationSize(g)) + 5*float64(g.NumActions()) + 8
	return float64(g.MaxGameLength()) * perPos
}

// arenaNodes is the node capacity of a tree that runs sims simulations a
// move with leaves in flight: one search's worth, or four when subtrees
// are kept (the played child keeps most of the root's visits).
func arenaNodes(sims, leaves int, reuse bool) int {
	if reuse {
		return 4*sims + leaves + 16
	}
	return sims + leaves + 16
}

// renew makes *t a tree with options o and seed seed: a new one the first
// time, else the same tree Reset.
func renew(t **search.Tree, g games.Game, o search.Options, seed uint64) error {
	if *t != nil {
		(*t).Reset(seed)
		return nil
	}
	var err error
	*t, err = search.New(g, o, seed)
	return err
}

// startMove samples chance events, then starts the searches of the move
// (or ends the game).
func (sl *slot) startMove(w *engine.Worker) {
	s := sl.state
	for s.CurrentPlayer() == games.ChancePlayer {
		s.Apply(s.(games.ChanceState).SampleChance(sl.rng))
	}
	if s.IsTerminal() || s.MoveNumber() >= sl.r.g.MaxGameLength() {
		sl.endGame(w, nil)
		return
	}
	p := s.CurrentPlayer()
	sl.seat = -1
	if p == games.SimultaneousPlayer {
		sl.seat = 0
		p = 0
	}
	sl.search(w, p)
}

// search starts the move's searches for player p (the mover, or the seat
// searched at a simultaneous state).
func (sl *slot) search(w *engine.Worker, p int) {
	s := sl.state
	sl.left = len(sl.jobs)
	sims := sl.r.opts.Sims
	sl.record = true
	if p == sl.resigned {
		// A resigned player: its network's policy alone (the root's
		// evaluation, no simulation), not recorded.
		sl.record, sl.left = false, 1
		j := sl.jobs[0]
		if sl.r.det {
			s.(games.Resampler).Resample(p, sl.rng, j.Root())
		} else {
			s.CloneInto(j.Root())
		}
		w.Start(j, 0)
		return
	}
	if pcr := sl.r.cfg.Settings.PCR; pcr > 0 {
		// Playout-cap randomisation: a full search with probability pcr,
		// else a fast one; the draw comes from the game's stream.
		sl.record = sl.rng.Float64() < pcr
		trees := sl.full
		if !sl.record {
			trees, sims = sl.fast, sl.r.fast.Sims
		}
		for q, j := range sl.jobs {
			j.SetTree(trees[q], 0)
		}
	}
	for _, j := range sl.jobs {
		if sl.r.det {
			s.(games.Resampler).Resample(p, sl.rng, j.Root())
		} else {
			s.CloneInto(j.Root())
		}
		w.Start(j, sims)
	}
}

// jobDone is called when one of the move's trees has spent its budget.
func (sl *slot) jobDone(w *engine.Worker, _ *engine.Job) {
	sl.left--
	if sl.left > 0 {
		return
	}
	sl.finishMove(w)
}

// finishMove merges the trees' root statistics, records the position
// (full searches only), picks and plays the move. The recorded policy is
// the visit distribution (after pruning with Settings.Prune), or under
// Gumbel search the merged improved policy, and the move the Gumbel move.
func (sl *slot) finishMove(w *engine.Worker) {
	r := sl.r
	s := sl.state
	p := s.CurrentPlayer()
	if sl.seat >= 0 {
		p = sl.seat
	}
	clear(sl.visits)
	jobs := sl.jobs
	if p == sl.resigned {
		jobs = jobs[:1] // searched alone (search)
	}
	sl.stats, sl.merged = engine.MergeRootStats(jobs, p, sl.stats, sl.merged)
	stats := sl.merged
	var total float64
	best := -1
	for i, x := range stats {
		sl.visits[x.Action] += float64(x.Visits)
		total += float64(x.Visits)
		if best < 0 || x.Visits > stats[best].Visits || (x.Visits == stats[best].Visits && x.Q > stats[best].Q) {
			best = i
		}
	}
	gumbelA, gumbel := games.NoAction, false
	if r.gumb.M > 0 {
		gumbelA, gumbel = engine.MergeGumbel(sl.jobs, sl.policy)
	}
	rec := sl.rec
	if sl.record {
		n := len(rec.Obs)
		rec.Obs = append(rec.Obs, make([]float32, r.obsN)...)
		s.Observation(p, rec.Obs[n:])
		if gumbel {
			rec.Policy = append(rec.Policy, sl.policy...)
		} else {
			if r.cfg.Settings.Prune {
				total = pruneVisits(stats, r.cfg.Settings.C, sl.visits)
			}
			for a := range sl.visits {
				v := float32(0)
				if total > 0 {
					v = float32(sl.visits[a] / total)
				}
				rec.Policy = append(rec.Policy, v)
			}
		}
		games.LegalOf(s, p, sl.legal)
		for a := range sl.visits {
			rec.Legal = append(rec.Legal, b2u8(sl.legal.Has(games.Action(a))))
		}
		rec.Ply = append(rec.Ply, int32(s.MoveNumber()))
		rec.Value = append(rec.Value, float32(p)) // mover for now; endGame rewrites it
		rec.RootQ = append(rec.RootQ, float32(rootQ(stats)))
		if np := len(sl.rootv); np > 2 {
			engine.MergeRootValues(jobs, sl.rootv)
			rec.RootValues = append(rec.RootValues, float32(rootQ(stats)))
			for k := 1; k < np; k++ {
				rec.RootValues = append(rec.RootValues, float32(max(-1, min(1, sl.rootv[(p+k)%np]))))
			}
		}
	}
	for _, j := range jobs {
		rec.Nodes += j.Spent()
	}
	if len(stats) == 0 {
		w.Fail(fmt.Errorf("selfplay: %s: no legal move at a non-terminal state %s", r.g.Spec(), s))
		return
	}
	// Resignation on the best move's value (see Settings.Resign).
	if st := &r.cfg.Settings; st.Resign > 0 && p != sl.resigned && stats[best].Q < -st.Resign {
		switch {
		case sl.resignOff:
			sl.would[p] = true
		case len(sl.would) == 2:
			sl.endGame(w, &p)
			return
		case sl.resigned < 0:
			sl.resigned = p
		}
	}
	a := gumbelA
	switch {
	case p == sl.resigned:
		a = mostProbable(stats)
	case !gumbel:
		a = sl.jobs[0].Tree().Choose(stats, s.MoveNumber())
	}
	if sl.seat >= 0 {
		// Simultaneous: the next seat's search, or every choice made.
		sl.joint[sl.seat] = a
		if sl.seat++; sl.seat < len(sl.joint) {
			sl.search(w, sl.seat)
			return
		}
		s.(games.SimultaneousState).ApplyJoint(sl.joint)
		sl.startMove(w)
		return
	}
	s.Apply(a)
	sl.startMove(w)
}

// endGame fills in the outcomes, hands the record over and starts the
// next game. resigner is the player who resigned, if any.
func (sl *slot) endGame(w *engine.Worker, resigner *int) {
	r := sl.r
	rec := sl.rec
	np := r.g.NumPlayers()
	rec.Returns = make([]float64, np)
	if resigner != nil {
		for q := range rec.Returns {
			rec.Returns[q] = 1
		}
		rec.Returns[*resigner] = -1
		rec.Resigned = true
	} else if sl.state.IsTerminal() {
		sl.state.Returns(rec.Returns)
		for q, v := range rec.Returns {
			rec.Returns[q] = (v-r.tmin)*r.tscal - 1
		}
	} // else: length cap reached; a draw (zeros)
	if sl.resigned >= 0 {
		// Three or more players: the resigner is scored alone in last
		// place whatever its unsearched moves reached.
		rec.Returns[sl.resigned] = -1
		rec.Resigned = true
	}
	for _, m := range rec.Value {
		rec.Values = appendSeatValues(rec.Values, rec.Returns, int(m))
	}
	for i, m := range rec.Value {
		rec.Value[i] = float32(rec.Returns[int(m)])
	}
	for q, wd := range sl.would {
		if wd && (rec.Returns[q] >= 0 || np > 2 && rec.Returns[q] > -1) { // two players: not lost; more: not alone in last place
			rec.FalseResign = true
		}
	}
	if err := r.emit(rec); err != nil {
		w.Fail(err)
		return
	}
	sl.nextGame(w)
}

func (r *runner) emit(rec *GameRecord) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	if r.cfg.OnGame != nil {
		r.err = r.cfg.OnGame(rec)
	}
	return r.err
}

// appendSeatValues appends to dst a position's per-player value targets
// (GameRecord.Values) for a game of three or more players: returns
// seat-rotated so that the mover's comes first. With fewer players it
// returns dst unchanged: two-player records and shards stay as they
// were, their mover's value saying everything.
func appendSeatValues(dst []float32, returns []float64, mover int) []float32 {
	np := len(returns)
	if np <= 2 {
		return dst
	}
	for k := range np {
		dst = append(dst, float32(returns[(mover+k)%np]))
	}
	return dst
}

// mostProbable returns the action of stats with the highest prior (the
// network's most probable move), ties to the first.
func mostProbable(stats []search.ActionStat) games.Action {
	best := 0
	for i, x := range stats {
		if x.Prior > stats[best].Prior {
			best = i
		}
	}
	return stats[best].Action
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// rootQ is the search's value of the root for its mover (search.MeanQ;
// 0 without visits).
func rootQ(stats []search.ActionStat) float64 {
	q, _ := search.MeanQ(stats)
	return q
}

// pruneVisits applies policy target pruning (Wu 2019, "Accelerating
// Self-Play Learning in Go", section 3.2) to visits, the root's visit
// counts by action id as stats (root statistics of the same search, with
// the priors PUCT used) give them, and returns their new total.
//
// Let c* be the most visited action (ties: the higher Q), N the total of
// the visits and PUCT(a, n) = Q(a) + c P(a) sqrt(N) / (1 + n). Every
// other visited action a keeps only the visits PUCT needs to have chosen
// a over c*: its count becomes min(n(a), n'), n' the least count with
// PUCT(a, n') < PUCT(c*, n(c*)), that is n' = floor(c P(a) sqrt(N) /
// (PUCT(c*) - Q(a))) (no change when Q(a) >= PUCT(c*)); then every
// action but c* left with at most one visit is dropped. The rest of its visits came from
// exploration (Dirichlet noise, virtual loss) and would teach the
// network to play it. c* keeps its visits, so the total stays positive.
func pruneVisits(stats []search.ActionStat, c float64, visits []float64) float64 {
	best := -1
	var total float64
	for i, x := range stats {
		total += float64(x.Visits)
		if best < 0 || x.Visits > stats[best].Visits || (x.Visits == stats[best].Visits && x.Q > stats[best].Q) {
			best = i
		}
	}
	if best < 0 || total == 0 {
		return total
	}
	sqrtN := math.Sqrt(total)
	b := stats[best]
	puctBest := b.Q + c*float64(b.Prior)*sqrtN/(1+float64(b.Visits))
	total = 0
	for i, x := range stats {
		n := float64(x.Visits)
		if i != best && x.Visits > 0 {
			if puctBest > x.Q {
				n = min(n, math.Floor(c*float64(x.Prior)*sqrtN/(puctBest-x.Q)))
			}
			if n <= 1 {
				n = 0
			}
		}
		visits[x.Action] = n
		total += n
	}
	return total
}
