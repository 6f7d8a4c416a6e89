package selfplay

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
)

// Settings are the self-play parameters that decide a game's content
// (with the seed, the game index and the network). They are stored in the
// manifest and must match on --resume.
type Settings struct {
	Sims         int     `json:"sims"`          // simulations per move (split over Determinize trees)
	C            float64 `json:"c"`             // PUCT constant
	FPU          float64 `json:"fpu"`           // value of unvisited edges
	DirichletA   float64 `json:"dirichlet"`     // root noise alpha (0 = none)
	DirichletEps float64 `json:"dirichlet_eps"` // root noise fraction
	TempPlies    int     `json:"temp_plies"`    // sample from visits for plies < TempPlies, then argmax
	// Resign: a player whose best move's Q is below -Resign resigns
	// (0 = never). ResignOff is the fraction of games played to the end
	// anyway to count false positives. 2-player games only.
	Resign    float64 `json:"resign"`
	ResignOff float64 `json:"resign_off"`
	// Determinize is the number of sampled deals (trees) per move in
	// hidden-information games with a Resampler (1 elsewhere).
	Determinize int `json:"determinize"`
	// Leaves in flight per tree (virtual loss); changes the search.
	Leaves int `json:"leaves"`
}

// DefaultSettings are AlphaZero-like settings for small board games.
func DefaultSettings() Settings {
	return Settings{Sims: 100, C: 1.5, DirichletA: 1.0, DirichletEps: 0.25, TempPlies: 8,
		Resign: 0, ResignOff: 0.1, Determinize: 1, Leaves: 1}
}

// Check reports the first out-of-range setting, named as in the
// settings' JSON (and the CLI flag of the same name).
func (s *Settings) Check() error {
	switch {
	case s.Sims < 1:
		return fmt.Errorf("sims = %d, want >= 1", s.Sims)
	case s.Determinize < 1 || s.Determinize > s.Sims:
		return fmt.Errorf("determinize = %d, want 1..sims (%d)", s.Determinize, s.Sims)
	case s.Leaves < 1 || s.Leaves > 256:
		return fmt.Errorf("leaves = %d, want 1..256", s.Leaves)
	case !(s.Resign >= 0 && s.Resign <= 1):
		return fmt.Errorf("resign = %g, want a value in [0, 1]", s.Resign)
	case !(s.ResignOff >= 0 && s.ResignOff <= 1):
		return fmt.Errorf("resign-off = %g, want a fraction in [0, 1]", s.ResignOff)
	case !(s.C > 0) || math.IsInf(s.C, 0):
		return fmt.Errorf("c = %g, want a positive exploration constant", s.C)
	case !(s.DirichletA >= 0) || math.IsInf(s.DirichletA, 0):
		return fmt.Errorf("dirichlet = %g, want alpha >= 0 (0 = no noise)", s.DirichletA)
	case !(s.DirichletEps >= 0 && s.DirichletEps <= 1):
		return fmt.Errorf("dirichlet-frac = %g, want a fraction in [0, 1]", s.DirichletEps)
	case s.TempPlies < 0:
		return fmt.Errorf("temp-plies = %d, want >= 0", s.TempPlies)
	}
	return nil
}

// GameRecord is one finished self-play game: one row per move.
type GameRecord struct {
	ID     int
	Obs    []float32 // Positions x observation size, from the mover's view
	Policy []float32 // Positions x NumActions: visit distribution
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
	r       *runner
	jobs    []*job
	budgets []atomic.Int64
	left    int // jobs still searching this move

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
}

type runner struct {
	e     *Engine
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
func (e *Engine) Run(ctx context.Context, cfg Config) error {
	st := cfg.Settings
	if err := st.Check(); err != nil {
		return err
	}
	g := e.game
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
		r.cfg.Settings.Determinize = 1
	}
	if g.NumPlayers() != 2 {
		r.cfg.Settings.Resign = 0
	}
	o := search.DefaultOptions()
	o.Rule, o.C, o.FPU = search.PUCT, st.C, st.FPU
	o.DirichletA, o.DirichletEps = st.DirichletA, st.DirichletEps
	o.TempPlies, o.Temp = st.TempPlies, 1
	o.ExpandVisits = 0
	k := r.cfg.Settings.Determinize
	o.Sims = max(st.Sims/k, 1)
	o.MaxNodes = o.Sims + st.Leaves + 16
	o.MaxEdges = o.MaxNodes * min(g.NumActions(), 64)
	r.opts = o
	r.obsN = e.inSize
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
	nw := min(e.opt.Workers, trees)
	return e.runWorkers(ctx, nw, func(i int, w *worker) error {
		for s := i; s < trees; s += nw {
			sl := &slot{r: r, budgets: make([]atomic.Int64, k)}
			for q := range k {
				j := w.newJob(st.Leaves)
				j.budget = &sl.budgets[q]
				j.root = g.NewInitialState()
				j.done = sl.jobDone
				sl.jobs = append(sl.jobs, j)
			}
			sl.state = g.NewInitialState()
			sl.visits = make([]float64, g.NumActions())
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
func (sl *slot) nextGame(w *worker) bool {
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
			w.err = err
			return false
		}
		j.setTree(t, arena.DeriveSeed(sl.seed, uint64(2*q+2)))
	}
	sl.startMove(w)
	return true
}

// startMove samples chance events, then starts the searches of the move
// (or ends the game).
func (sl *slot) startMove(w *worker) {
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
	for q, j := range sl.jobs {
		if sl.r.det {
			s.(games.Resampler).Resample(p, sl.rng, j.root)
		} else {
			s.CloneInto(j.root)
		}
		sl.budgets[q].Store(int64(sl.r.opts.Sims))
		j.prepared = false
		w.start(j)
	}
}

// jobDone is called when one of the move's trees has spent its budget.
func (sl *slot) jobDone(w *worker, _ *job) {
	sl.left--
	if sl.left > 0 {
		return
	}
	sl.finishMove(w)
}

// finishMove merges the trees' root statistics, records the position,
// picks and plays the move.
func (sl *slot) finishMove(w *worker) {
	r := sl.r
	s := sl.state
	p := s.CurrentPlayer()
	clear(sl.visits)
	var stats []search.ActionStat
	if len(sl.jobs) == 1 {
		sl.stats = sl.jobs[0].tree.RootStats(p, sl.stats[:0])
		stats = sl.stats
	} else {
		// Merge: visits add up; Q is visit-weighted.
		sl.merged = sl.merged[:0]
		for _, j := range sl.jobs {
			sl.stats = j.tree.RootStats(p, sl.stats[:0])
			for _, x := range sl.stats {
				k := -1
				for i := range sl.merged {
					if sl.merged[i].Action == x.Action {
						k = i
						break
					}
				}
				if k < 0 {
					sl.merged = append(sl.merged, search.ActionStat{Action: x.Action})
					k = len(sl.merged) - 1
				}
				m := &sl.merged[k]
				if x.Visits > 0 {
					m.Q = (m.Q*float64(m.Visits) + x.Q*float64(x.Visits)) / float64(m.Visits+x.Visits)
				}
				m.Visits += x.Visits
				m.Prior += x.Prior / float32(len(sl.jobs))
			}
		}
		stats = sl.merged
	}
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
	rec.Ply = append(rec.Ply, int32(s.MoveNumber()))
	rec.Value = append(rec.Value, float32(p)) // mover for now; endGame rewrites it
	for _, j := range sl.jobs {
		rec.Nodes += int64(r.opts.Sims) - j.budget.Load()
	}
	if len(stats) == 0 {
		w.err = fmt.Errorf("selfplay: %s: no legal move at a non-terminal state %s", r.g.Spec(), s)
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
	a := sl.jobs[0].tree.Choose(stats, s.MoveNumber())
	s.Apply(a)
	sl.startMove(w)
}

// endGame fills in the outcomes, hands the record over and starts the
// next game. resigner is the player who resigned, if any.
func (sl *slot) endGame(w *worker, resigner *int) {
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
		w.err = err
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
