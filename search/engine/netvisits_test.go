package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/search"
)

// netVisitsSearch searches tic-tac-toe's opening with sims simulations, a
// one-leaf job, blend weight 0.5 with whole-game rollouts and netvisits n,
// and returns the root statistics and the network rows it used.
func netVisitsSearch(t *testing.T, sims, n int) ([]search.ActionStat, int64) {
	t.Helper()
	g, e := newEngine(t, "tictactoe", 7, Options{Workers: 1, Leaves: 1, Batch: 8, Wait: -1})
	st := DefaultSettings()
	st.Sims, st.Blend, st.Turns, st.NetVisits = sims, 0.5, 9, n
	s, err := NewSearcher(e, st.SearchOptions(), 3)
	if err != nil {
		t.Fatal(err)
	}
	root := g.NewInitialState()
	stats, err := s.Search(context.Background(), root, root.CurrentPlayer())
	if err != nil {
		t.Fatal(err)
	}
	return append([]search.ActionStat(nil), stats...), e.Counters().Evals
}

func visits(stats []search.ActionStat) int {
	n := 0
	for _, x := range stats {
		n += x.Visits
	}
	return n
}

// netvisits=N sends a leaf to the network on its N-th visit only: every
// network row but the root's stands for a leaf that N-1 earlier
// simulations valued by the rollout alone, so at most sims/N of them; a
// threshold above the budget leaves the root as the only row, and every
// simulation is still counted at the root.
func TestNetVisitsThreshold(t *testing.T) {
	const sims = 400
	_, all := netVisitsSearch(t, sims, 1)
	if all < sims/2 {
		t.Fatalf("netvisits=1: %d network rows for %d simulations, want about one per simulation", all, sims)
	}
	for _, n := range []int{2, 3, 8} {
		stats, rows := netVisitsSearch(t, sims, n)
		if v := visits(stats); v != sims {
			t.Errorf("netvisits=%d: root visits %d, want %d", n, v, sims)
		}
		if rows < 2 || rows-1 > int64(sims/n) {
			t.Errorf("netvisits=%d: %d network rows (root included) for %d simulations, want 2..%d", n, rows, sims, 1+sims/n)
		}
	}
	stats, rows := netVisitsSearch(t, sims, sims+1)
	if rows != 1 || visits(stats) != sims {
		t.Errorf("netvisits above the budget: %d network rows and %d root visits, want 1 (the root) and %d", rows, visits(stats), sims)
	}
}

// netvisits=1 is the search without the option.
func TestNetVisitsOneUnchanged(t *testing.T) {
	a, ra := netVisitsSearch(t, 300, 1)
	b, rb := netVisitsSearch(t, 300, 0)
	if ra != rb || len(a) != len(b) {
		t.Fatalf("netvisits=1: %d rows, %d actions; netvisits=0: %d rows, %d actions", ra, len(a), rb, len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("action %d: netvisits=1 %+v, netvisits=0 %+v", i, a[i], b[i])
		}
	}
}

// Without a rollout (blend=1) nothing can value a leaf before the
// network does: netvisits above 1 is refused with a hint.
func TestNetVisitsNeedsRollout(t *testing.T) {
	_, e := newEngine(t, "tictactoe", 1, Options{Workers: 1})
	st := DefaultSettings()
	st.NetVisits = 4
	_, err := NewSearcher(e, st.SearchOptions(), 1)
	if err == nil || !strings.Contains(err.Error(), "netvisits=4") || !strings.Contains(err.Error(), "blend") {
		t.Fatalf("netvisits=4 with blend=1: err %v, want one naming netvisits and blend", err)
	}
	st.Blend = 0.5
	if _, err := NewSearcher(e, st.SearchOptions(), 1); err != nil {
		t.Fatalf("netvisits=4 with blend=0.5: %v", err)
	}
}
