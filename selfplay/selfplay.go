package selfplay

import (
	"context"
	"fmt"
	"math/rand/v2"
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
// `az` agent shares (engine.Settings, same names and ranges) plus
// resignation. They are stored in the manifest and must match on
// --resume.
type Settings struct {
	engine.Settings
	// Resign: a player whose best move's Q is below -Resign resigns
	// (0 = never). ResignOff is the fraction of games played to the end
	// anyway to count false positives. 2-player games only.
	Resign    float64 `json:"resign"`
	ResignOff float64 `json:"resignoff"`
}

// Table declares the settings' options (flags of `canopy selfplay`, keys
// of the manifest) bound to s. Its defaults (Reset) are the shared PUCT
// defaults with root noise (dir 1), 8 sampled opening plies and one
// determinization.
func (s *Settings) Table() spec.Table {
	t := s.Settings.Table()
	t = append(t,
		spec.Float("resign", &s.Resign, 0, 0, 1, "resign when the best move's value is below -resign (0 = never; 2-player games)"),
		spec.Float("resignoff", &s.ResignOff, 0.1, 0, 1, "fraction of games that never resign (measures false resignations)"))
	for _, kv := range [][2]string{{"dir", "1"}, {"tempplies", "8"}, {"det", "1"}} {
		for i := range t {
			if t[i].Key == kv[0] {
				t[i].Default = kv[1]
			}
		}
	}
	return t
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
	return nil
}

// GameRecord is one finished self-play game: one row per move.
type GameRecord struct {
	ID     int
	Obs    []float32 // Positions x observation size, from the mover's view
	Policy []float32 // Positions x NumActions: visit distribution
	Legal  []uint8   // Positions x NumActions: 1 where the action was legal for the mover
	Value  []float32 // final outcome from the mover's view, in [-1, 1]
	Ply    []int32   // MoveNumber of each position
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
	// Trees is the number of games played at once (each with
	// Determinize trees). Default 64.
	Trees int
	// OnGame receives every finished game, from worker goroutines
	// (serialised by the run). An error stops the run.
	OnGame func(*GameRecord) error
}

// slot is one concurrent game: its jobs, state and record so far.
type slot struct {
	r    *runner
	jobs []*engine.Job
	left int // jobs still searching this move

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
}

type runner struct {
	e     *engine.Engine
	cfg   *Config
	g     games.Game
	ids   []int // game indices to play; nil: 0..total-1
	total int
	next  atomic.Int64
	opts  search.Options
	det   bool // determinize with Resample
	obsN  int
	tmin  float64
	tscal float64

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
	g := e.Game()
	ids, total := cfg.Games, len(cfg.Games)
	if ids == nil {
		total = cfg.NumGames
	}
	if total <= 0 {
		return nil
	}
	r := &runner{e: e, cfg: &cfg, g: g, ids: ids, total: total}
	r.cfg.Settings.Leaves = max(st.Leaves, 1)
	_, isRes := g.NewInitialState().(games.Resampler)
	// Hidden-information games are always searched on sampled deals (one
	// or more): searching the real state would show the network the
	// opponents' hidden cards.
	r.det = isRes && g.Type().Information == games.ImperfectInformation
	if !r.det {
		r.cfg.Settings.Det = 1
	}
	if g.NumPlayers() != 2 {
		r.cfg.Settings.Resign = 0
	}
	o := st.SearchOptions().Search
	k := r.cfg.Settings.Det
	o.Sims = max(st.Sims/k, 1)
	o.MaxNodes = o.Sims + st.Leaves + 16
	o.MaxEdges = o.MaxNodes * min(g.NumActions(), 64)
	r.opts = o
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
				if st.Blend < 1 {
					j.SetBlend(st.Blend, &search.Rollout{Turns: st.Turns})
				}
				sl.jobs = append(sl.jobs, j)
			}
			sl.state = g.NewInitialState()
			sl.visits = make([]float64, g.NumActions())
			sl.legal = games.NewMask(g.NumActions())
			sl.would = make([]bool, g.NumPlayers())
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
	n := int(r.next.Add(1) - 1)
	if n >= r.total {
		return false
	}
	sl.id = n
	if r.ids != nil {
		sl.id = r.ids[n]
	}
	sl.seed = arena.DeriveSeed(r.cfg.Seed, uint64(sl.id))
	sl.rng = games.NewRand(arena.DeriveSeed(sl.seed, 1<<32))
	s0 := r.g.NewInitialState()
	s0.CloneInto(sl.state)
	sl.rec = &GameRecord{ID: sl.id}
	st := &r.cfg.Settings
	sl.resignOff = st.Resign > 0 && sl.rng.Float64() < st.ResignOff
	sl.rec.ResignOffGame = sl.resignOff
	clear(sl.would)
	for q, j := range sl.jobs {
		t, err := search.New(r.g, r.opts, arena.DeriveSeed(sl.seed, uint64(2*q+1)))
		if err != nil {
			w.Fail(err)
			return false
		}
		j.SetTree(t, 0)
	}
	sl.startMove(w)
	return true
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
	sl.left = len(sl.jobs)
	for _, j := range sl.jobs {
		if sl.r.det {
			s.(games.Resampler).Resample(p, sl.rng, j.Root())
		} else {
			s.CloneInto(j.Root())
		}
		w.Start(j, sl.r.opts.Sims)
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

// finishMove merges the trees' root statistics, records the position,
// picks and plays the move.
func (sl *slot) finishMove(w *engine.Worker) {
	r := sl.r
	s := sl.state
	p := s.CurrentPlayer()
	clear(sl.visits)
	sl.stats, sl.merged = engine.MergeRootStats(sl.jobs, p, sl.stats, sl.merged)
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
	rec := sl.rec
	n := len(rec.Obs)
	rec.Obs = append(rec.Obs, make([]float32, r.obsN)...)
	s.Observation(p, rec.Obs[n:])
	for a := range sl.visits {
		v := float32(0)
		if total > 0 {
			v = float32(sl.visits[a] / total)
		}
		rec.Policy = append(rec.Policy, v)
	}
	s.Legal(sl.legal)
	for a := range sl.visits {
		rec.Legal = append(rec.Legal, b2u8(sl.legal.Has(games.Action(a))))
	}
	rec.Ply = append(rec.Ply, int32(s.MoveNumber()))
	rec.Value = append(rec.Value, float32(p)) // mover for now; endGame rewrites it
	for _, j := range sl.jobs {
		rec.Nodes += j.Spent()
	}
	if len(stats) == 0 {
		w.Fail(fmt.Errorf("selfplay: %s: no legal move at a non-terminal state %s", r.g.Spec(), s))
		return
	}
	// Resignation on the best move's value.
	if st := &r.cfg.Settings; st.Resign > 0 && stats[best].Q < -st.Resign {
		if !sl.resignOff {
			sl.endGame(w, &p)
			return
		}
		sl.would[p] = true
	}
	a := sl.jobs[0].Tree().Choose(stats, s.MoveNumber())
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
	for i, m := range rec.Value {
		rec.Value[i] = float32(rec.Returns[int(m)])
	}
	for q, wd := range sl.would {
		if wd && rec.Returns[q] >= 0 {
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

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
