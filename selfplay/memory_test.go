package selfplay

import (
	"context"
	"runtime"
	"testing"

	"github.com/canopy-go/canopy/search/engine"
)

// MemoryBytes is what Run allocates (runtime.MemStats around a real run
// whose trees dominate: many simulations, few games), within -10% and
// +25% plus 4 MiB for the engine's jobs, states and records: it sized
// trees at sims/det + leaves + 16 nodes where subtree reuse needs about
// 4*sims (issue 39 item 2), a quarter of this.
func TestMemoryBytesMatchesAllocations(t *testing.T) {
	g, e := newEngine(t, "tictactoe", 1, engine.Options{Workers: 1, Leaves: 8, Batch: 16, Slots: engine.SlotsFor(4, 8)})
	for _, c := range []struct {
		name string
		set  func(st *Settings)
	}{
		{"reuse", func(st *Settings) {}},
		{"noreuse", func(st *Settings) { st.NoReuse = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := DefaultSettings()
			st.Sims, st.Leaves = 4000, 8
			c.set(&st)
			cfg := Config{Settings: st, Seed: 1, NumGames: 4, Trees: 4, OnGame: func(*GameRecord) error { return nil }}
			want, err := cfg.MemoryBytes(g)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			if err := Run(context.Background(), e, cfg); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			got := float64(after.TotalAlloc - before.TotalAlloc)
			t.Logf("allocated %.0f bytes, MemoryBytes %.0f (%.3f)", got, want, got/want)
			if got < 0.9*want || got > 1.25*want+4<<20 {
				t.Errorf("allocated %.0f bytes, MemoryBytes says %.0f (want within -10%%, +25%% + 4 MiB)", got, want)
			}
		})
	}
}
