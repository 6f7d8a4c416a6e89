package selfplay

import (
	"context"
	"sync"
	"testing"

	"github.com/canopy-go/canopy/search/engine"
)

// Resignation with three players (Settings.Resign): the resigner is
// scored alone in last place (-1) and the game goes on for the others,
// the resigner's moves no longer recorded. Sushi Go's simultaneous view
// records one position per seat per joint move (same ply), in seat
// order, so a resigned game shows three positions per ply up to the
// resignation and two from then on, and lasts the full 27 joint moves.
func TestResignThreePlayers(t *testing.T) {
	_, e := newEngine(t, "sushigo:players=3", 5, engine.Options{Workers: 1, Slots: engine.SlotsFor(2, 1), Wait: -1})
	st := DefaultSettings()
	st.Sims, st.Det = 8, 2
	st.Resign, st.ResignOff = 0.05, 0
	var mu sync.Mutex
	var recs []*GameRecord
	err := Run(context.Background(), e, Config{Settings: st, Seed: 3, NumGames: 6, Trees: 2, OnGame: func(r *GameRecord) error {
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	resigned := 0
	for _, r := range recs {
		perPly := map[int32]int{}
		var plies []int32
		for _, p := range r.Ply {
			if perPly[p] == 0 {
				plies = append(plies, p)
			}
			perPly[p]++
		}
		if len(plies) != 27 {
			t.Fatalf("game %d: %d joint moves recorded, want all 27 (a resignation does not end a 3-player game)", r.ID, len(plies))
		}
		if !r.Resigned {
			for _, p := range plies {
				if perPly[p] != 3 {
					t.Fatalf("game %d (no resignation): %d positions at ply %d, want 3", r.ID, perPly[p], p)
				}
			}
			continue
		}
		resigned++
		last := 0
		for _, v := range r.Returns {
			if v == -1 {
				last++
			}
		}
		if last == 0 {
			t.Errorf("game %d resigned but no player is scored -1: %v", r.ID, r.Returns)
		}
		two := false
		for _, p := range plies {
			switch n := perPly[p]; {
			case n == 2:
				two = true
			case n == 3 && !two:
			default:
				t.Fatalf("game %d: %d positions at ply %d after the resignation began (plies %v)", r.ID, n, p, perPly)
			}
		}
		if !two {
			t.Errorf("game %d resigned but every ply has 3 positions", r.ID)
		}
		for i := range r.Positions() {
			if r.Values[i*3] != r.Value[i] {
				t.Fatalf("game %d position %d: values row %v does not start with the mover's value %v", r.ID, i, r.Values[i*3:i*3+3], r.Value[i])
			}
		}
	}
	if resigned == 0 {
		t.Fatal("no game resigned at resign=0.05 with a random network")
	}
	t.Logf("%d of %d games resigned", resigned, len(recs))
}
