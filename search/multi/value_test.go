package multi_test

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/multi"
)

// MCTS-V and MCTS-BB value the state before each action of a turn for
// its mover: one value per action in [-1, 1]. In the won test position
// the last action's node holds the winning drop, so its value is high
// (0.77-0.92 over these seeds), and the turn's first node values the
// position above the empty board's first node (0.19-0.36 against
// 0.07-0.10: the mean Q over all visits, exploration included); a value
// of the wrong sign or none at all fails both.
func TestValueHistory(t *testing.T) {
	won := winPosition(t)
	start := won.Game().NewInitialState()
	for _, vanilla := range []bool{true, false} {
		for seed := range uint64(3) {
			o := search.DefaultOptions()
			o.Sims = 2000
			b, err := multi.NewBB(won.Game(), o, vanilla, seed+1)
			if err != nil {
				t.Fatal(err)
			}
			var tv multi.TurnValuer = b
			var first [2]float32
			for k, s := range []games.State{won, start} {
				turn, err := b.PlanTurn(context.Background(), s, nil)
				if err != nil {
					t.Fatal(err)
				}
				v := tv.ValueHistory(nil)
				if len(v) != len(turn) {
					t.Fatalf("vanilla %v: %d values for %d actions", vanilla, len(v), len(turn))
				}
				for _, x := range v {
					if x < -1 || x > 1 {
						t.Fatalf("vanilla %v seed %d: value %v outside [-1, 1]", vanilla, seed, x)
					}
				}
				first[k] = v[0]
				if k == 0 && v[len(v)-1] < 0.7 {
					t.Errorf("vanilla %v seed %d: the winning drop's node valued %v, want >= 0.7 (all: %v)", vanilla, seed, v[len(v)-1], v)
				}
			}
			if first[0] <= first[1] {
				t.Errorf("vanilla %v seed %d: the won position's first node valued %v, the empty board's %v", vanilla, seed, first[0], first[1])
			}
		}
	}
}
