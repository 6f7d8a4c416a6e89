package selfplay

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/search/multi"
	"github.com/canopy-go/canopy/spec"
)

// TurnSearchSpec checks s, a turn search for Config.TurnSearch, against
// g and returns it as the games will be searched: study 004's self-play
// defaults added for the keys s leaves out, the options sorted. It is
// what the manifest records.
//
// s is an agent spec of a search/multi.TurnSearcher: mcts-v, mcts-bb or
// emcts with their options (sims per turn: 250 by default, the study's
// Connect4d budget; Strands used 500). For mcts-v and mcts-bb the study
// selects with PUCT on the network's priors and draws every action of a
// turn from the visit distribution (Algorithms 2-3, "use distribution
// pi-hat to draw an action"), so sel=puct and tempplies=the game's
// length are the defaults here; emcts draws its root sequence from the
// policy at temperature itemp (0.5) and keeps horizon 1 in training, as
// the study does. The study adds no root noise (dir stays 0). Its
// published code also draws EMCTS's phase steps from the visits in
// self-play; that is emcts's steptemp option, 0 (the most visited) unless
// given.
//
// Two keys of Canopy's set the leaf value: blend=W (default
// 1, the network alone) values each leaf W x the network's value + (1-W)
// x a random rollout of turns=T player turns (default 0: to the end of
// the game), study 000's leaf value, so that self-play has a signal
// where the network's value has none yet.
//
// Refused: a game whose turns are single actions (not
// games.MultiActionState), oep (no per-action statistics), the other
// evaluator options (the run's network evaluates every leaf) and time=
// (a game must replay from its seed alone).
func TurnSearchSpec(g games.Game, s string) (string, error) {
	if _, ok := g.NewInitialState().(games.MultiActionState); !ok {
		return "", fmt.Errorf("turn search %q: %s is not a multi-action game (turn search is for games whose turns have several actions: connect4d, strands); drop it to search every action with PUCT", s, g.Spec())
	}
	sp, err := spec.Parse(s)
	if err != nil {
		return "", fmt.Errorf("turn search: %v", err)
	}
	if sp.Has("time") {
		return "", fmt.Errorf("turn search %q: time= makes a game depend on the machine's speed, and self-play games must replay from (seed, game) alone: use sims=N", s)
	}
	if sp.Name == "mcts-v" || sp.Name == "mcts-bb" {
		if !sp.Has("sel") {
			sp.Set("sel", "puct")
		}
		if !sp.Has("tempplies") {
			sp.Set("tempplies", fmt.Sprint(g.MaxGameLength()))
		}
	}
	planner, _, err := trialPlanner(g, sp)
	if err != nil {
		return "", fmt.Errorf("turn search %q: %w", s, err)
	}
	for _, k := range planner.Keys() { // the defaults it added (sims)
		if !sp.Has(k) {
			sp.Set(k, planner.String(k, ""))
		}
	}
	return canonical(sp), nil
}

// turnBlend is a turn search's leaf value in self-play: W x the network's
// value + (1-W) x a random rollout of Turns player turns (0: to the end
// of the game; a rollout cut earlier scores 0).
type turnBlend struct {
	W     float64
	Turns int
}

// splitTurnBlend returns sp without its blend= and turns= keys, and the
// turnBlend they give (W 1 without them).
func splitTurnBlend(sp *spec.Spec) (*spec.Spec, turnBlend, error) {
	b := turnBlend{W: 1}
	if !sp.Has("blend") && !sp.Has("turns") {
		return sp, b, nil
	}
	t := spec.Table{
		spec.Float("blend", &b.W, 1, 0, 1, "weight of the network's value; the rest is a random rollout"),
		spec.Int("turns", &b.Turns, 0, 0, 1<<20, "rollout length in player turns (0: to the end)"),
	}
	if err := t.Parse(sp); err != nil {
		return nil, b, err
	}
	rest, err := spec.Parse(canonical(sp, "blend", "turns"))
	if err != nil {
		return nil, b, err
	}
	if b.Turns > 0 && b.W == 1 {
		return nil, b, fmt.Errorf("turns=%d without blend < 1: no rollout to cut", b.Turns)
	}
	return rest, b, nil
}

// evaluator returns the leaf evaluator of a planner: net alone, or blended
// with a rollout.
func (b turnBlend) evaluator(g games.Game, net search.Evaluator) search.Evaluator {
	if b.W >= 1 {
		return net
	}
	return search.NewBlend(g, net, &search.Rollout{Turns: b.Turns}, b.W)
}

// TurnSearchValues reports whether the turn search s (as TurnSearchSpec
// accepts it) values the state before each action, so that its games'
// RootQ can be mixed into the value targets (train.Options.QMix): mcts-v
// and mcts-bb do, emcts and oep do not.
func TurnSearchValues(g games.Game, s string) (bool, error) {
	sp, err := spec.Parse(s)
	if err != nil {
		return false, fmt.Errorf("turn search: %v", err)
	}
	_, ts, err := trialPlanner(g, sp)
	if err != nil {
		return false, fmt.Errorf("turn search %q: %w", s, err)
	}
	_, ok := ts.(multi.TurnValuer)
	return ok, nil
}

// trialPlanner builds the planner of turn-search spec sp with rollouts
// for leaves (no network), to check sp; it returns the planner's spec
// (sp without the blend keys, with the defaults the planner added).
func trialPlanner(g games.Game, sp *spec.Spec) (*spec.Spec, multi.TurnSearcher, error) {
	planner, _, err := splitTurnBlend(sp)
	if err != nil {
		return nil, nil, err
	}
	ts, err := multi.NewTurnSearcher(g, planner, nil, 0)
	return planner, ts, err
}

// canonical writes sp as NAME:k=v,... with its keys sorted, leaving out
// the keys drop.
func canonical(sp *spec.Spec, drop ...string) string {
	var kv []string
	for _, k := range sp.Keys() { // sorted
		if !slices.Contains(drop, k) {
			kv = append(kv, k+"="+sp.String(k, ""))
		}
	}
	if len(kv) == 0 {
		return sp.Name
	}
	return sp.Name + ":" + strings.Join(kv, ",")
}

// runTurns is Run under a turn search: Trees goroutines, each playing
// one game at a time with PlayTurns and a TurnSearcher made for that
// game, seeded from (Seed, game id) alone, every leaf evaluated by e's
// network (one blocking request per leaf; the goroutines' requests share
// e's batches).
func runTurns(ctx context.Context, e *engine.Engine, cfg *Config, ids []int, total int) error {
	g := e.Game()
	ts, err := TurnSearchSpec(g, cfg.TurnSearch)
	if err != nil {
		return err
	}
	ev := engine.NewEngineEvaluator(e)
	trees := cfg.Trees
	if trees <= 0 {
		trees = 64
	}
	trees = min(trees, total)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var mu sync.Mutex // serialises OnGame and guards failed
	var failed error
	fail := func(err error) {
		mu.Lock()
		if failed == nil && parent.Err() == nil {
			failed = err
		}
		mu.Unlock()
		cancel()
	}
	var wg sync.WaitGroup
	for range trees {
		wg.Go(func() {
			for {
				n := int(next.Add(1) - 1)
				if n >= total || ctx.Err() != nil {
					return
				}
				id := n
				if ids != nil {
					id = ids[n]
				}
				sp, err := spec.Parse(ts)
				if err != nil {
					fail(err)
					return
				}
				sp, blend, err := splitTurnBlend(sp)
				if err != nil {
					fail(err)
					return
				}
				planner, err := multi.NewTurnSearcher(g, sp, blend.evaluator(g, ev), games.DeriveSeed(cfg.Seed, uint64(id)))
				if err != nil {
					fail(err)
					return
				}
				rec, err := PlayTurns(ctx, g, planner, id, g.MaxGameLength())
				if err == nil {
					if eerr := ev.Err(); eerr != nil {
						// Leaves were valued 0 from then on: not the game
						// the network plays.
						err = fmt.Errorf("selfplay: %s: evaluating a leaf: %w", g.Spec(), eerr)
					}
				}
				if err != nil {
					fail(err)
					return
				}
				mu.Lock()
				// A game whose searches a cancellation cut short is not
				// the game its seed gives: it is dropped, never handed
				// over (cancellation is final, so a game handed over
				// was searched in full).
				if ctx.Err() == nil && cfg.OnGame != nil {
					err = cfg.OnGame(rec)
				}
				mu.Unlock()
				if err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if failed != nil {
		return failed
	}
	return parent.Err()
}

// PlayTurns plays one self-play game of g from its initial state with ts
// choosing every turn of every player, as study 004's MegaZero does
// (Algorithm 1: TURN-SELECTION once per turn), and returns its record:
// one position per atomic action, with the observation from the mover's
// view, the row of ts.PolicyHistory for that action as the policy
// target, the legal actions, the ply and the final outcome from the
// mover's view. RootQ is the planner's value of the state before each
// action where ts is a multi.TurnValuer (mcts-v, mcts-bb), 0 otherwise;
// Nodes adds up the simulations of the turns (the planners'
// Sims; 0 for other TurnSearchers). maxPlies > 0 caps the game's atomic
// actions (a game cut there is a draw, as in Run); 0 plays to the end.
//
// It is the hook by which a turn-level search (search/multi: mcts-v,
// mcts-bb, emcts) feeds AlphaZero training: Run plays every game with it
// under Config.TurnSearch. What varies between games (seeds,
// temperature) is ts's. It stops with ctx's error when ctx is done, and
// with an error when ts plans an illegal action.
func PlayTurns(ctx context.Context, g games.Game, ts multi.TurnSearcher, id, maxPlies int) (*GameRecord, error) {
	obsN := 1
	for _, d := range g.ObservationShape() {
		obsN *= d
	}
	n := g.NumActions()
	rec := &GameRecord{ID: id}
	s := g.NewInitialState()
	mask := games.NewMask(n)
	var turn []games.Action
	var hist, values []float32
	valuer, _ := ts.(multi.TurnValuer)
	var movers []int
	for !s.IsTerminal() && (maxPlies <= 0 || s.MoveNumber() < maxPlies) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		if turn, err = ts.PlanTurn(ctx, s, turn[:0]); err != nil {
			return nil, fmt.Errorf("selfplay: %s: planning a turn at ply %d: %w", g.Spec(), s.MoveNumber(), err)
		}
		rec.Nodes += int64(spent(ts))
		hist = ts.PolicyHistory(hist[:0])
		if len(turn) == 0 || len(hist) != n*len(turn) {
			return nil, fmt.Errorf("selfplay: %s: planner returned %d actions and %d policy values at ply %d", g.Spec(), len(turn), len(hist), s.MoveNumber())
		}
		if valuer != nil {
			if values = valuer.ValueHistory(values[:0]); len(values) != len(turn) {
				return nil, fmt.Errorf("selfplay: %s: planner returned %d actions and %d state values at ply %d", g.Spec(), len(turn), len(values), s.MoveNumber())
			}
		}
		for i, a := range turn {
			if s.IsTerminal() || (maxPlies > 0 && s.MoveNumber() >= maxPlies) {
				break
			}
			p := s.CurrentPlayer()
			k := len(rec.Obs)
			rec.Obs = append(rec.Obs, make([]float32, obsN)...)
			s.Observation(p, rec.Obs[k:])
			rec.Policy = append(rec.Policy, hist[i*n:(i+1)*n]...)
			s.Legal(mask)
			for b := range n {
				rec.Legal = append(rec.Legal, b2u8(mask.Has(games.Action(b))))
			}
			rec.Ply = append(rec.Ply, int32(s.MoveNumber()))
			q := float32(0)
			if valuer != nil {
				q = values[i]
			}
			rec.RootQ = append(rec.RootQ, q)
			movers = append(movers, p)
			if err := games.ApplyChecked(s, a); err != nil {
				return nil, fmt.Errorf("selfplay: %s: planned action at ply %d: %w", g.Spec(), s.MoveNumber(), err)
			}
		}
	}
	rec.Returns = make([]float64, g.NumPlayers())
	if s.IsTerminal() {
		lo, scale := -1.0, 1.0
		if t := g.Type(); t.MaxReturn > t.MinReturn {
			lo, scale = t.MinReturn, 2/(t.MaxReturn-t.MinReturn)
		}
		s.Returns(rec.Returns)
		for q, v := range rec.Returns {
			rec.Returns[q] = (v-lo)*scale - 1
		}
	} // else: cut at maxPlies; a draw (zeros)
	rec.Value = make([]float32, len(movers))
	for i, p := range movers {
		rec.Value[i] = float32(rec.Returns[p])
		rec.Values = appendSeatValues(rec.Values, rec.Returns, p)
	}
	return rec, nil
}

// spent returns the simulations ts ran for the turn it planned last.
func spent(ts multi.TurnSearcher) int {
	switch p := ts.(type) {
	case *multi.BB:
		return p.Sims
	case *multi.EMCTS:
		return p.Sims
	}
	return 0
}
