package search

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

// c4After returns the connect4 position after moves (columns).
func c4After(t *testing.T, moves ...games.Action) (games.Game, games.State) {
	t.Helper()
	g := games.MustNew("connect4")
	s := g.NewInitialState()
	for _, m := range moves {
		s.Apply(m)
	}
	return g, s
}

// liveAgent builds an mcts agent from spec text.
func liveAgent(t *testing.T, g games.Game, text string, seed uint64) *Agent {
	t.Helper()
	sp, err := spec.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	o, err := ParseOptions(g, sp, agent.Env{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAgent(g, o, seed)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A tree searched in increments by Continue is the tree one Search
// builds: one goroutine, the same seed, the same simulations.
func TestContinueBuildsTheSearchTree(t *testing.T) {
	g, s := c4After(t, 3, 3, 2)
	o := DefaultOptions()
	o.Sims = 2000
	whole, err := New(g, o, 5)
	if err != nil {
		t.Fatal(err)
	}
	if n := whole.Search(context.Background(), s); n != o.Sims {
		t.Fatalf("Search ran %d simulations, want %d", n, o.Sims)
	}
	parts, err := New(g, o, 5)
	if err != nil {
		t.Fatal(err)
	}
	parts.Prepare(s)
	ran := 0
	for _, n := range []int{1, 16, 300, 683, 1000} {
		if got := parts.Continue(context.Background(), n); got != n {
			t.Fatalf("Continue(%d) ran %d simulations", n, got)
		}
		ran += n
	}
	if ran != o.Sims {
		t.Fatalf("test bug: %d simulations in the increments", ran)
	}
	want, got := whole.RootStats(0, nil), parts.RootStats(0, nil)
	if len(want) != len(got) || len(want) == 0 {
		t.Fatalf("%d root actions in increments, %d in one search", len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Errorf("root action %d: increments %+v, one search %+v", i, got[i], want[i])
		}
	}
	if whole.Stats() != parts.Stats() {
		t.Errorf("arena use: increments %+v, one search %+v", parts.Stats(), whole.Stats())
	}
}

// checkPV checks that pv is a sequence of legal moves from s that starts
// with the most visited root action.
func checkPV(t *testing.T, g games.Game, s games.State, pv []games.Action, best games.Action) {
	t.Helper()
	if len(pv) == 0 || pv[0] != best {
		t.Fatalf("PV %v does not start with the most visited action %d", pv, best)
	}
	c := s.Clone()
	m := games.NewMask(g.NumActions())
	for i, a := range pv {
		if c.IsTerminal() {
			t.Fatalf("PV %v goes on past the end of the game at ply %d", pv, i)
		}
		c.Legal(m)
		if !m.Has(a) {
			t.Fatalf("PV %v: ply %d (%d) is illegal", pv, i, a)
		}
		c.Apply(a)
	}
}

// AnalyzeLive reports growing snapshots and ends with the statistics that
// Analyze computes with the same seed and budget; its principal variation
// is a legal line that starts with the most visited move.
func TestAnalyzeLive(t *testing.T) {
	g, s := c4After(t, 3, 3, 2, 4)
	const text = "mcts:sims=3000"
	want, err := liveAgent(t, g, text, 9).Analyze(context.Background(), s, s.CurrentPlayer())
	if err != nil {
		t.Fatal(err)
	}
	a := liveAgent(t, g, text, 9)
	var sims []int
	var last Snapshot
	// An interval of 1ns ends every increment at its first poll of the
	// context: many snapshots, each at least 16 simulations apart.
	err = a.AnalyzeLive(context.Background(), s, s.CurrentPlayer(), time.Nanosecond, func(sn *Snapshot) error {
		if last.Final {
			t.Error("a snapshot after the final one")
		}
		sims = append(sims, sn.Sims)
		total := 0
		for _, x := range sn.Stats {
			total += x.Visits
		}
		if total != sn.Sims {
			t.Errorf("snapshot at %d simulations: root visits add up to %d", sn.Sims, total)
		}
		last = *sn
		last.Stats = append([]ActionStat(nil), sn.Stats...)
		last.PV = append([]games.Action(nil), sn.PV...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sims) < 10 || !last.Final || last.Sims != 3000 {
		t.Fatalf("%d snapshots at %v simulations, final %v: want at least 10, the last final at 3000", len(sims), sims, last.Final)
	}
	for i := 1; i < len(sims); i++ {
		if sims[i] <= sims[i-1] {
			t.Fatalf("simulations do not grow: %v", sims)
		}
	}
	if len(last.Stats) != len(want) {
		t.Fatalf("%d rows live, %d from Analyze", len(last.Stats), len(want))
	}
	for i, w := range want {
		x := last.Stats[i]
		if x.Action != w.Action || x.Visits != w.Visits || x.Q != w.Q || float64(x.Prior) != w.Prior {
			t.Errorf("row %d: live %+v, Analyze %+v", i, x, w)
		}
	}
	checkPV(t, g, s, last.PV, last.Stats[0].Action)
	if len(last.PV) < 3 {
		t.Errorf("PV %v: want several plies after 3000 simulations", last.PV)
	}
	// The move an Act right after plays is the analysed one.
	if m, err := a.Act(context.Background(), s, s.CurrentPlayer()); err != nil || m != last.Stats[0].Action {
		t.Errorf("Act after the live analysis: %v, %v; want %d", m, err, last.Stats[0].Action)
	}
}

// Under tree and root parallelism every simulation of the budget is
// counted once at the root.
func TestAnalyzeLiveParallel(t *testing.T) {
	g, s := c4After(t, 3)
	for _, text := range []string{"mcts:sims=2000,threads=2", "mcts:sims=2000,root=2", "mcts:sims=2000,root=2,threads=2"} {
		a := liveAgent(t, g, text, 3)
		var last Snapshot
		n := 0
		err := a.AnalyzeLive(context.Background(), s, s.CurrentPlayer(), time.Nanosecond, func(sn *Snapshot) error {
			n++
			last = *sn
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		total := 0
		for _, x := range last.Stats {
			total += x.Visits
		}
		if !last.Final || last.Sims != 2000 || total != 2000 {
			t.Errorf("%s: final %v after %d snapshots, %d simulations, %d root visits; want 2000", text, last.Final, n, last.Sims, total)
		}
		checkPV(t, g, s, last.PV, last.Stats[0].Action)
	}
}

// An error from report stops the search and is returned; a time budget
// alone ends the search too.
func TestAnalyzeLiveStops(t *testing.T) {
	g, s := c4After(t)
	stop := errors.New("stop")
	n := 0
	err := liveAgent(t, g, "mcts:sims=100000", 1).AnalyzeLive(context.Background(), s, 0, time.Nanosecond, func(sn *Snapshot) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Errorf("AnalyzeLive returned %v after %d reports; want the report's error after 3", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	err = liveAgent(t, g, "mcts:sims=0,time=1h", 1).AnalyzeLive(ctx, s, 0, time.Nanosecond, func(sn *Snapshot) error {
		n++
		if n == 5 {
			cancel()
		}
		if sn.Final && n != 6 {
			t.Errorf("final snapshot at report %d, want 6 (the one after the cancel)", n)
		}
		return nil
	})
	if err != nil || n != 6 {
		t.Errorf("cancelled time-only search: %v after %d reports; want nil after 6", err, n)
	}
}

// With determinizations only the final snapshot is reported, without a
// principal variation (it would show sampled hidden cards).
func TestAnalyzeLiveDeterminized(t *testing.T) {
	g := games.MustNew("sushigo")
	s := g.NewInitialState()
	for s.CurrentPlayer() == games.ChancePlayer {
		s.Apply(s.(games.ChanceState).SampleChance(games.NewRand(1)))
	}
	a, err := agent.New(g, "mcts:sims=400", agent.Env{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = a.(*Agent).AnalyzeLive(context.Background(), s, 0, time.Nanosecond, func(sn *Snapshot) error {
		n++
		if !sn.Final || len(sn.PV) != 0 || sn.Sims == 0 {
			t.Errorf("snapshot %d: final %v, PV %v, %d simulations; want final, no PV, some simulations", n, sn.Final, sn.PV, sn.Sims)
		}
		return nil
	})
	if err != nil || n != 1 {
		t.Errorf("%v after %d reports; want one", err, n)
	}
}

// BenchmarkAnalyzeLive compares one Analyze with AnalyzeLive at several
// snapshot intervals (connect4, UCT with rollouts, 20000 simulations):
// the cost of searching in increments and reading the root between them.
func BenchmarkAnalyzeLive(b *testing.B) {
	g := games.MustNew("connect4")
	s := g.NewInitialState()
	const text = "mcts:sims=20000"
	sp, _ := spec.Parse(text)
	o, err := ParseOptions(g, sp, agent.Env{})
	if err != nil {
		b.Fatal(err)
	}
	a, err := NewAgent(g, o, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("analyze", func(b *testing.B) {
		for b.Loop() {
			if _, err := a.Analyze(context.Background(), s, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, every := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 200 * time.Millisecond} {
		b.Run("live-"+every.String(), func(b *testing.B) {
			snaps := 0
			for b.Loop() {
				err := a.AnalyzeLive(context.Background(), s, 0, every, func(*Snapshot) error { snaps++; return nil })
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(snaps)/float64(b.N), "snapshots/op")
		})
	}
}
