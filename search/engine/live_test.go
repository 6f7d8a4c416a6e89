package engine

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
)

// The az agent analysed live, in increments, ends with the statistics of
// one Analyze with the same seed (one leaf in flight: the lock-steps do
// not depend on where increments end), and reports growing snapshots
// whose principal variation is a legal line from the best move.
func TestAZAnalyzeLive(t *testing.T) {
	g := games.MustNew("connect4")
	s := g.NewInitialState()
	for _, m := range []games.Action{3, 3, 2} {
		s.Apply(m)
	}
	st := DefaultSettings()
	st.Sims, st.Leaves = 300, 1
	ref, err := NewAZ(testPool, g, "random", "cpu", st, false, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	want, err := ref.Analyze(context.Background(), s, 1)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAZ(testPool, g, "random", "cpu", st, false, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var sims []int
	var last search.Snapshot
	err = a.AnalyzeLive(context.Background(), s, 1, time.Nanosecond, func(sn *search.Snapshot) error {
		sims = append(sims, sn.Sims)
		last = *sn
		last.Stats = append([]search.ActionStat(nil), sn.Stats...)
		last.PV = append([]games.Action(nil), sn.PV...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sims) < 10 || !last.Final || last.Sims != 300 {
		t.Fatalf("%d snapshots at %v simulations, final %v; want at least 10, the last final at 300", len(sims), sims, last.Final)
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
		if x.Action != w.Action || x.Visits != w.Visits || math.Abs(x.Q-w.Q) > 1e-12 || math.Abs(float64(x.Prior)-w.Prior) > 1e-6 {
			t.Errorf("row %d: live %+v, Analyze %+v", i, x, w)
		}
	}
	if len(last.PV) < 2 || last.PV[0] != last.Stats[0].Action {
		t.Fatalf("PV %v: want several plies from the most visited action %d", last.PV, last.Stats[0].Action)
	}
	c, m := s.Clone(), games.NewMask(g.NumActions())
	for i, x := range last.PV {
		c.Legal(m)
		if c.IsTerminal() || !m.Has(x) {
			t.Fatalf("PV %v: ply %d is not a legal move", last.PV, i)
		}
		c.Apply(x)
	}
}

// nextIncrement aims at the interval from the last increment's speed and
// grows at most fourfold.
func TestNextIncrement(t *testing.T) {
	for _, c := range []struct {
		n           int
		took, every time.Duration
		want        int
	}{
		{100, 100 * time.Millisecond, 200 * time.Millisecond, 200},
		{100, time.Millisecond, 200 * time.Millisecond, 400},
		{100, time.Second, 200 * time.Millisecond, 20},
		{1, time.Second, time.Nanosecond, 1},
		{8, 0, time.Second, 32},
	} {
		if got := nextIncrement(c.n, c.took, c.every); got != c.want {
			t.Errorf("nextIncrement(%d, %v, %v) = %d, want %d", c.n, c.took, c.every, got, c.want)
		}
	}
}
