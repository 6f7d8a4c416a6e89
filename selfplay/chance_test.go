package selfplay

import (
	"context"
	"math"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/engine"
)

// This file tests chance in sequential play: a leaf that is a chance node
// is sampled forward to the next decision and valued there, so the
// network only ever sees decision states, from their mover's view (the
// spyGame of hidden_test.go checks every Observation call).

// loudBackend scales the wrapped backend's values by 4, so they leave
// [-1, 1]: the driver must clamp them before they reach the tree.
type loudBackend struct{ *rowSpy }

func (b loudBackend) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	err := b.rowSpy.Evaluate(ctx, batch, input, policy, value)
	for i := range value[:batch] {
		value[i] *= 4
	}
	return err
}

// playUntil plays uniformly random actions (chance included) from the
// initial state of g's inner game until stop holds at a decision state.
func playUntil(t *testing.T, g *spyGame, seed uint64, stop func(s games.State) bool) *spyState {
	t.Helper()
	s := g.Game.NewInitialState()
	rng := games.NewRand(seed)
	m := games.NewMask(g.NumActions())
	for !s.IsTerminal() {
		if s.CurrentPlayer() == games.ChancePlayer {
			s.Apply(s.(games.ChanceState).SampleChance(rng))
			continue
		}
		if stop(s) {
			return &spyState{g: g, s: s}
		}
		s.Legal(m)
		var acts []games.Action
		for a := range m.All() {
			acts = append(acts, a)
		}
		s.Apply(acts[rng.IntN(len(acts))])
	}
	t.Fatalf("%s: the game ended before the wanted position", g.Spec())
	return nil
}

// Analysis from positions whose children are chance nodes: sequence (a
// card is drawn after every play) and Sushi Go at the last pick of a
// round (the next round's whole deal follows). Root visits add up to the
// budget, every Q and prior is in range although the network's values
// are not, chance was sampled inside the search, no chance or terminal
// state was encoded, and every row the backend saw is counted.
func TestChanceLeavesSampledForward(t *testing.T) {
	sims := 400
	if testing.Short() {
		sims = 150
	}
	for _, tc := range []struct {
		spec string
		stop func(s games.State) bool
	}{
		{"sequence:jacks=false", func(s games.State) bool { return s.MoveNumber() >= 30 }},
		{"sushigo-seq:players=3", func(s games.State) bool {
			x := s.(interface {
				Round() int
				Turn() int
			})
			return x.Round() == 0 && x.Turn() == 8 && s.CurrentPlayer() == 2 // 9 cards a hand: the round's last pick
		}},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			g := newSpyGame(tc.spec)
			root := playUntil(t, g, 4, tc.stop)
			rs := newRowSpy(newRandomFor(g), false)
			e, err := engine.New(g, loudBackend{rs}, engine.Options{Workers: 2, Leaves: 4, Batch: 16})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			o := search.DefaultOptions()
			o.Rule, o.Sims = search.PUCT, sims
			draws0 := g.chanceDraws.Load()
			tr, err := e.Analyze(context.Background(), root, o, 1)
			if err != nil {
				t.Fatal(err)
			}
			p := root.CurrentPlayer()
			st := tr.RootStats(p, nil)
			visits := 0
			var prior float64
			m := games.NewMask(g.NumActions())
			root.Legal(m)
			for _, x := range st {
				visits += x.Visits
				prior += float64(x.Prior)
				if x.Q < -1 || x.Q > 1 || math.IsNaN(x.Q) {
					t.Errorf("action %s: Q %v outside [-1, 1]", root.ActionString(x.Action), x.Q)
				}
				if !m.Has(x.Action) {
					t.Errorf("root edge for illegal action %d", x.Action)
				}
			}
			if visits != sims {
				t.Errorf("root visits add up to %d, want %d", visits, sims)
			}
			if len(st) != m.Count() || math.Abs(prior-1) > 1e-4 {
				t.Errorf("%d root edges for %d legal actions, priors sum to %v", len(st), m.Count(), prior)
			}
			if d := g.chanceDraws.Load() - draws0; d == 0 {
				t.Error("no chance outcome was sampled during the search")
			}
			if n := g.badObs.Load(); n != 0 {
				t.Errorf("%d chance, terminal or other-player states were encoded; first: %v", n, g.firstBad.Load())
			}
			c := e.Counters()
			if c.Evals != int64(rs.n) || c.Evals > int64(sims)+1 || c.Nodes != int64(sims) {
				t.Errorf("counters %+v, backend saw %d rows, sims %d", c, rs.n, sims)
			}
			if obs := g.observations.Load(); obs != c.Evals {
				t.Errorf("%d Observation calls for %d network rows", obs, c.Evals)
			}
		})
	}
}

// Self-play with chance and several leaves in flight on two workers (run
// it with -race): no chance state is encoded, every record's values are
// in [-1, 1] and every move got its simulations.
func TestChanceSelfPlay(t *testing.T) {
	g := newSpyGame("sequence:jacks=false")
	rs := newRowSpy(newRandomFor(g), false)
	e, err := engine.New(g, loudBackend{rs}, engine.Options{Workers: 2, Leaves: 4, Batch: 32, Slots: engine.SlotsFor(6, 4)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st := hiddenSettings(16, 2)
	if testing.Short() {
		st.Sims = 8
	}
	st.Leaves = 4
	recs := collect(t, e, Config{Settings: st, Seed: 2, NumGames: 2, Trees: 2})
	positions := 0
	for id, r := range recs {
		positions += r.Positions()
		for i, v := range r.Value {
			if v < -1 || v > 1 {
				t.Errorf("game %d row %d: value %v", id, i, v)
			}
		}
		if r.Nodes != int64(r.Positions()*st.Sims) {
			t.Errorf("game %d: %d simulations for %d moves", id, r.Nodes, r.Positions())
		}
	}
	if n := g.badObs.Load(); n != 0 {
		t.Errorf("%d chance, terminal or other-player states were encoded; first: %v", n, g.firstBad.Load())
	}
	c := e.Counters()
	if c.Evals != int64(rs.n) || g.observations.Load() != c.Evals+int64(positions) {
		t.Errorf("%d rows seen, counters %+v, %d Observation calls for %d positions",
			rs.n, c, g.observations.Load(), positions)
	}
}
