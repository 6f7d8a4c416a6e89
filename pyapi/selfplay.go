package pyapi

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
)

// selfPlayArgs are canopy.selfplay's arguments: the options are `canopy
// selfplay`'s (selfplay.Settings.Table), plus trees, seed, batch and the
// number of games per yielded batch.
type selfPlayArgs struct {
	Game       string            `json:"game"`
	Games      int               `json:"games"`
	Options    map[string]string `json:"options"`
	Trees      int               `json:"trees"`
	Seed       uint64            `json:"seed"`
	Batch      int               `json:"batch"`
	YieldGames int               `json:"yield_games"`
	Workers    int               `json:"workers"`
}

// SelfPlay is one canopy.selfplay run: a session whose run plays the
// games (selfplay.Run on the Python evaluator) and stages finished games
// for Python in batches of YieldGames.
type SelfPlay struct {
	*session
	g        games.Game
	yield    int
	total    int
	settings selfplay.Settings

	// pending are the finished games not yet staged; staged those that
	// exchange "take" hands over next. Guarded by session.mu.
	pending []*selfplay.GameRecord
	staged  []*selfplay.GameRecord
	handed  int
}

// ParseSelfPlaySettings applies options (the keys of `canopy selfplay`'s
// flags, values as strings) to selfplay's defaults and checks them.
func ParseSelfPlaySettings(options map[string]string) (selfplay.Settings, error) {
	st := selfplay.DefaultSettings()
	t := st.Table()
	for _, k := range sortedKeys(options) {
		if k == "noreuse" { // the key of earlier releases: reuse, negated
			b, err := strconv.ParseBool(options[k])
			if err != nil {
				return st, valueErrorf("option noreuse: want true or false")
			}
			st.NoReuse = b
			continue
		}
		if _, ok := t.Lookup(k); !ok {
			return st, valueErrorf("option %s: unknown (self-play options: %s, and trees, seed, batch, yield_games)", k, strings.Join(t.Keys(), ", "))
		}
		if err := t.Set(k, options[k]); err != nil {
			return st, valueErrorf("option %s: %v", k, err)
		}
	}
	if err := st.Check(); err != nil {
		return st, valueErrorf("%v", err)
	}
	return st, nil
}

func openSelfPlay(args json.RawMessage, bufs [][]byte) (*SelfPlay, error) {
	var a selfPlayArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	g, err := newGame(a.Game)
	if err != nil {
		return nil, err
	}
	if err := sequentialGame(g, "selfplay"); err != nil {
		return nil, err
	}
	if a.Games < 1 || a.Games > selfplay.MaxGames {
		return nil, valueErrorf("games = %d, want 1..%d", a.Games, selfplay.MaxGames)
	}
	st, err := ParseSelfPlaySettings(a.Options)
	if err != nil {
		return nil, err
	}
	if a.Trees == 0 {
		a.Trees = 64
	}
	if a.Trees < 1 || a.Trees > 1<<16 {
		return nil, valueErrorf("trees = %d, want 1..%d", a.Trees, 1<<16)
	}
	if a.YieldGames == 0 {
		a.YieldGames = min(a.Trees, a.Games)
	}
	if a.YieldGames < 1 {
		return nil, valueErrorf("yield_games = %d, want at least 1", a.YieldGames)
	}
	trees := min(a.Trees, a.Games)
	batch := a.Batch
	if batch == 0 {
		batch = min(trees*st.Det*st.Leaves, 1024)
	}
	sess, err := newSession(g, batch, bufs, "selfplay")
	if err != nil {
		return nil, err
	}
	sp := &SelfPlay{session: sess, g: g, yield: a.YieldGames, total: a.Games, settings: st}
	sess.data = make(chan struct{}, 1)
	sess.ready = sp.stage
	nc := consumersFor(trees*st.Det*st.Leaves, batch)
	e, err := engine.New(g, sess.backend(nc), engine.Options{Workers: workersFor(a.Workers), Leaves: st.Leaves, Batch: batch,
		Slots: engine.SlotsFor(trees*st.Det, st.Leaves), LegalActions: true, Consumers: nc, Wait: fillWait(nc)})
	if err != nil {
		return nil, valueErrorf("%v", err)
	}
	sess.start(func(ctx context.Context) error {
		defer e.Close()
		return selfplay.Run(ctx, e, selfplay.Config{Settings: st, Seed: a.Seed, NumGames: a.Games, Trees: trees,
			OnGame: func(r *selfplay.GameRecord) error {
				sess.mu.Lock()
				sp.pending = append(sp.pending, r)
				full := len(sp.pending) >= sp.yield
				sess.mu.Unlock()
				if full {
					select {
					case sess.data <- struct{}{}:
					default:
					}
				}
				return nil
			}})
	})
	return sp, nil
}

// stage moves a batch of finished games to staged when one is due (a full
// batch, or the rest once the run is over) and reports whether games are
// staged.
func (sp *SelfPlay) stage() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if len(sp.staged) > 0 {
		return true
	}
	over := false
	select {
	case <-sp.done:
		over = true
	default:
	}
	if len(sp.pending) >= sp.yield || (over && len(sp.pending) > 0) {
		n := min(sp.yield, len(sp.pending))
		sp.staged = append(sp.staged[:0], sp.pending[:n]...)
		sp.pending = append(sp.pending[:0], sp.pending[n:]...)
		return true
	}
	return false
}

func (sp *SelfPlay) close() error {
	sp.shutdown()
	return nil
}

func (sp *SelfPlay) info() any {
	return map[string]any{"games": sp.total, "batch": sp.maxB, "actions": sp.na, "observation_size": sp.obsN,
		"observation_shape": sp.g.ObservationShape(), "yield_games": sp.yield}
}

// exchange "staged" reports the staged games' sizes; "take" writes them
// into obs f32 [P, ...], policy f32 [P, A], legal u8 [P, A], value f32
// [P], game_id i64 [P], ply i32 [P], root_q f32 [P] and, in games of
// three or more players, values f32 [P, players] (the seat-rotated
// returns a per-player value head learns; the shard layout) and forgets
// them.
func (sp *SelfPlay) exchange(op string, _ json.RawMessage, bufs [][]byte) (any, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	p := 0
	ids := make([]int, 0, len(sp.staged))
	for _, r := range sp.staged {
		p += r.Positions()
		ids = append(ids, r.ID)
	}
	switch op {
	case "staged":
		return map[string]any{"positions": p, "games": ids}, nil
	case "take":
	default:
		return nil, valueErrorf("selfplay has no operation %q", op)
	}
	if len(sp.staged) == 0 {
		return nil, runtimeErrorf("no games are staged: wait until it reports data")
	}
	na, obsN := sp.na, sp.obsN
	want := []bufSpec{{"obs", 4, p * obsN}, {"policy", 4, p * na}, {"legal", 1, p * na},
		{"value", 4, p}, {"game_id", 8, p}, {"ply", 4, p}, {"root_q", 4, p}}
	np := sp.g.NumPlayers()
	if np > 2 {
		want = append(want, bufSpec{"values", 4, p * np})
	}
	if err := checkBufs("selfplay take", bufs, want); err != nil {
		return nil, err
	}
	var vals []float32
	if np > 2 {
		vals = f32s(bufs[7])
	}
	obs, pol, legal, val, gid, ply, rq := f32s(bufs[0]), f32s(bufs[1]), bufs[2], f32s(bufs[3]), i64s(bufs[4]), i32s(bufs[5]), f32s(bufs[6])
	k := 0
	for _, r := range sp.staged {
		n := r.Positions()
		copy(obs[k*obsN:], r.Obs)
		copy(pol[k*na:], r.Policy)
		copy(legal[k*na:], r.Legal)
		copy(val[k:], r.Value)
		copy(ply[k:], r.Ply)
		copy(rq[k:], r.RootQ)
		if vals != nil {
			copy(vals[k*np:(k+n)*np], r.Values)
		}
		for i := range n {
			gid[k+i] = int64(r.ID)
		}
		k += n
	}
	sp.handed += len(sp.staged)
	sp.staged = sp.staged[:0]
	return map[string]any{"positions": p, "games": ids}, nil
}
