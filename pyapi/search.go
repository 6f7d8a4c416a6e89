package pyapi

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/engine"
)

// searchArgs are canopy.search's arguments.
type searchArgs struct {
	Game string `json:"game"`
	// Env is a VecEnv handle whose positions to search, or 0.
	Env int64 `json:"env"`
	// Moves are move lists from the initial position (or state
	// notations), when Env is 0.
	Moves []string `json:"moves"`
	Sims  int      `json:"sims"`
	Rule  string   `json:"rule"`
	// Options are az's options (engine.Settings.Table) as strings.
	Options map[string]string `json:"options"`
	Batch   int               `json:"batch"`
	Seed    uint64            `json:"seed"`
	Workers int               `json:"workers"`
}

// Search is one canopy.search call: a session whose run searches every
// position once, then holds the results until Python reads them
// (exchange "results").
type Search struct {
	*session
	g      games.Game
	n      int
	rule   string
	jobs   [][]*engine.Job
	movers []int
	moveNo []int
	gumbel bool
}

// ParseSettings applies options (az's keys, values as strings) to the
// defaults of engine.Settings: the table `az` and self-play declare, so
// names, defaults and ranges are theirs.
func ParseSettings(options map[string]string) (engine.Settings, error) {
	st := engine.DefaultSettings()
	t := st.Table()
	for _, k := range sortedKeys(options) {
		if _, ok := t.Lookup(k); !ok {
			return st, valueErrorf("option %s: unknown (search options are az's: %s)", k, strings.Join(t.Keys(), ", "))
		}
		if err := t.Set(k, options[k]); err != nil {
			return st, valueErrorf("option %s: %v", k, err)
		}
	}
	return st, nil
}

func (l *Library) openSearch(args json.RawMessage, bufs [][]byte) (*Search, error) {
	var a searchArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	g, err := newGame(a.Game)
	if err != nil {
		return nil, err
	}
	if err := sequentialGame(g, "search"); err != nil {
		return nil, err
	}
	opts := map[string]string{}
	for k, v := range a.Options {
		opts[k] = v
	}
	if a.Sims < 1 {
		return nil, valueErrorf("sims = %d, want at least 1", a.Sims)
	}
	opts["sims"] = strconv.Itoa(a.Sims)
	switch a.Rule {
	case "puct", "":
		if opts["gumbel"] == "true" {
			return nil, valueErrorf("rule=\"puct\" with gumbel=true: give rule=\"gumbel\" instead")
		}
	case "gumbel":
		opts["gumbel"] = "true"
	default:
		return nil, valueErrorf("rule = %q, want \"puct\" or \"gumbel\"", a.Rule)
	}
	st, err := ParseSettings(opts)
	if err != nil {
		return nil, err
	}
	// The positions.
	var states []games.State
	if a.Env != 0 {
		o, err := l.get(a.Env)
		if err != nil {
			return nil, valueErrorf("states: %s", message(err))
		}
		env, ok := o.(*VecEnv)
		if !ok {
			return nil, valueErrorf("states: handle %d is not a VecEnv", a.Env)
		}
		if env.g.Spec() != g.Spec() {
			return nil, valueErrorf("states: the VecEnv plays %s, not game_spec %s", env.g.Spec(), g.Spec())
		}
		states = env.positions()
	} else {
		if len(a.Moves) == 0 {
			return nil, valueErrorf("states is empty: give a VecEnv or a list of move strings (\"\" is the initial position)")
		}
		for i, m := range a.Moves {
			s, err := parsePosition(g, m)
			if err != nil {
				return nil, valueErrorf("states[%d]: %s", i, message(err))
			}
			states = append(states, s)
		}
	}
	rng := games.NewRand(a.Seed ^ 0xc4a9ce)
	for i, s := range states {
		for s.CurrentPlayer() == games.ChancePlayer {
			s.Apply(s.(games.ChanceState).SampleChance(rng))
		}
		if s.IsTerminal() {
			return nil, valueErrorf("states[%d] is a finished game: search only positions with a player to move", i)
		}
	}
	batch := a.Batch
	if batch == 0 {
		batch = min(len(states)*st.Leaves, 1024)
	}
	sess, err := newSession(g, batch, bufs, "search")
	if err != nil {
		return nil, err
	}
	so := st.SearchOptions()
	_, isRes := g.NewInitialState().(games.Resampler)
	det := isRes && g.Type().Information == games.ImperfectInformation
	k := 1
	if det {
		k = st.Det
	}
	if st.Sims < k {
		return nil, valueErrorf("sims = %d, want at least det = %d (one per determinization)", st.Sims, k)
	}
	o := so.Search
	o.Sims = st.Sims / k
	o.ExpandVisits = 0
	o.Eval = search.Uniform{} // never called: the engine evaluates
	o.MaxNodes = o.Sims + st.Leaves + 16
	o.MaxEdges = o.MaxNodes * min(g.NumActions(), 64)
	blend, err := engine.BlendRollout(g, so)
	if err != nil {
		return nil, valueErrorf("%v", err)
	}
	sr := &Search{session: sess, g: g, n: len(states), rule: a.Rule, gumbel: st.Gumbel}
	sr.jobs = make([][]*engine.Job, len(states))
	sr.movers = make([]int, len(states))
	sr.moveNo = make([]int, len(states))
	for i, s := range states {
		sr.movers[i], sr.moveNo[i] = s.CurrentPlayer(), s.MoveNumber()
	}
	nc := consumersFor(len(states)*k*st.Leaves, batch)
	e, err := engine.New(g, sess.backend(nc), engine.Options{Workers: workersFor(a.Workers), Leaves: st.Leaves, Batch: batch,
		Slots: engine.SlotsFor(len(states)*k, st.Leaves), LegalActions: true, Consumers: nc, Wait: fillWait(nc)})
	if err != nil {
		return nil, valueErrorf("%v", err)
	}
	sess.start(func(ctx context.Context) error {
		defer e.Close()
		nw := min(e.Options().Workers, len(states))
		// The trees (and their walkers) are built on nw goroutines
		// first: for thousands of positions that is most of the time
		// before the first batch, and RunWorkers calls setup on one
		// goroutine.
		trees := make([]*search.Tree, len(states)*k)
		if err := forEach(nw, len(states), func(i int) error {
			seed := arena.DeriveSeed(a.Seed, uint64(i))
			for q := range k {
				t, err := search.New(g, o, arena.DeriveSeed(seed, uint64(2*q+1)))
				if err != nil {
					return valueErrorf("%v", err)
				}
				t.Walkers(st.Leaves)
				trees[i*k+q] = t
			}
			return nil
		}); err != nil {
			return err
		}
		var left atomic.Int64
		left.Store(int64(len(states) * k))
		return e.RunWorkers(ctx, nw, func(wi int, w *engine.Worker) error {
			for i := wi; i < len(states); i += nw {
				seed := arena.DeriveSeed(a.Seed, uint64(i))
				prng := games.NewRand(arena.DeriveSeed(seed, 1<<32))
				for q := range k {
					j := w.NewJob(st.Leaves, func(*engine.Worker, *engine.Job) { left.Add(-1) })
					j.SetTree(trees[i*k+q], 0)
					j.SetBlend(st.Blend, blend)
					j.SetNetVisits(st.NetVisits)
					j.SetBackup(st.Backup)
					j.SetGumbel(so.Gumbel, arena.DeriveSeed(seed, uint64(1<<33+q)))
					if det {
						states[i].(games.Resampler).Resample(sr.movers[i], prng, j.Root())
					} else {
						states[i].CloneInto(j.Root())
					}
					sr.jobs[i] = append(sr.jobs[i], j)
					w.Start(j, o.Sims)
				}
			}
			return nil
		})
	})
	return sr, nil
}

func (sr *Search) close() error {
	sr.shutdown()
	return nil
}

func (sr *Search) info() any {
	return map[string]any{"positions": sr.n, "batch": sr.maxB, "actions": sr.na, "observation_size": sr.obsN,
		"observation_shape": sr.g.ObservationShape(), "gumbel": sr.gumbel}
}

// exchange "results" writes, once the run is done, the results into
// visits f32 [n, A] (visit counts merged over determinizations),
// root_value f32 [n] (the mover's visit-weighted Q), action i64 [n] (the
// move the search chooses) and improved_policy f32 [n, A] (Gumbel's
// improved policy; zeros under PUCT).
func (sr *Search) exchange(op string, _ json.RawMessage, bufs [][]byte) (any, error) {
	if op != "results" {
		return nil, valueErrorf("search has no operation %q", op)
	}
	select {
	case <-sr.done:
	default:
		return nil, runtimeErrorf("the search is still running: call wait until it reports done")
	}
	if sr.err != nil {
		return nil, runtimeErrorf("the search failed: %v", sr.err)
	}
	n, na := sr.n, sr.na
	if err := checkBufs("search results", bufs, []bufSpec{{"visits", 4, n * na}, {"root_value", 4, n}, {"action", 8, n}, {"improved_policy", 4, n * na}}); err != nil {
		return nil, err
	}
	visits, value, action, improved := f32s(bufs[0]), f32s(bufs[1]), i64s(bufs[2]), f32s(bufs[3])
	var scratch, merged []search.ActionStat
	clear(visits)
	clear(improved)
	for i, jobs := range sr.jobs {
		if len(jobs) == 0 {
			return nil, runtimeErrorf("position %d was not searched", i)
		}
		scratch, merged = engine.MergeRootStats(jobs, sr.movers[i], scratch, merged)
		row := visits[i*na : (i+1)*na]
		for _, x := range merged {
			row[x.Action] = float32(x.Visits)
		}
		q, _ := search.MeanQ(merged)
		value[i] = float32(q)
		a, ok := engine.MergeGumbel(jobs, improved[i*na:(i+1)*na])
		if !ok {
			search.SortStats(merged)
			a = jobs[0].Tree().Choose(merged, sr.moveNo[i])
		}
		action[i] = int64(a)
	}
	return map[string]int{"positions": n}, nil
}

// parsePosition builds a position from a move list from the initial
// position (space- or comma-separated, as `canopy move --moves`), or
// from the game's state notation.
func parsePosition(g games.Game, text string) (games.State, error) {
	s := g.NewInitialState()
	var tokErr error
	for i, tok := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ',' }) {
		a, err := s.ParseAction(tok)
		if err == nil {
			err = games.ApplyChecked(s, a)
		}
		if err != nil {
			tokErr = valueErrorf("move %d %q: %v", i+1, tok, err)
			break
		}
	}
	if tokErr == nil {
		return s, nil
	}
	st, err := g.ParseState(text)
	if err != nil {
		return nil, tokErr
	}
	return st, nil
}

// forEach calls f(i) for i in [0, n) on up to w goroutines and returns
// the first error (the others still run to the end).
func forEach(w, n int, f func(i int) error) error {
	w = max(min(w, n), 1)
	errs := make([]error, w)
	var wg sync.WaitGroup
	for g := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += w {
				if err := f(i); err != nil && errs[g] == nil {
					errs[g] = err
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
