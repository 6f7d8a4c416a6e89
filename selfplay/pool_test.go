package selfplay

import (
	"context"
	"runtime"
	"testing"

	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/engine"
)

// Trees are allocated once per slot, not once per game: with one slot,
// the bytes allocated by six extra games stay well below one tree's
// arenas. What remains per game is mostly its record, built by appending
// (observations, policy and legal masks of about 40 positions: 80-105 KB
// for Connect Four at this commit, 78 KB when pooling came in). Without
// pooling every game makes a new tree: its arenas alone are
// arenaNodes(...) nodes and 7 edges per node, twice with reuse (608 KB
// here), so the bound, a third of that, still fails then.
func TestNoPerGameTreeAllocation(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 18 Connect Four games at 400 simulations per move (about a second)")
	}
	_, e := newEngine(t, "connect4", 5, engine.Options{Workers: 1, Batch: 8})
	st := DefaultSettings()
	st.Sims = 400
	play := func(n int) (bytes uint64, mallocs float64) {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		mallocs = testing.AllocsPerRun(1, func() {
			if err := Run(context.Background(), e, Config{Settings: st, Seed: 1, NumGames: n, Trees: 1}); err != nil {
				t.Fatal(err)
			}
		})
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc, mallocs
	}
	b2, a2 := play(2)
	b8, a8 := play(8)
	perGame := float64(b8-b2) / 6
	// One tree's arenas, from the layout's published sizes (reuse is on
	// by default: two arenas).
	nodes := 4*st.Sims + st.Leaves + 16
	arena := float64(2 * (nodes*search.NodeBytes + nodes*7*search.EdgeBytes))
	t.Logf("per extra game: %.0f bytes, %.1f allocations; one tree's arenas: %.0f bytes", perGame, (a8-a2)/6, arena)
	if perGame > arena/3 {
		t.Errorf("each extra game allocates %.0f bytes, want well under one tree's arenas (%.0f bytes): trees are not pooled", perGame, arena)
	}
}
