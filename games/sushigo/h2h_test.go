package sushigo

import (
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
)

// TestHeuristicBeatsGreedy: two heuristic seats against two greedy seats
// (alternating, seats swapped every game) must score a positive average.
func TestHeuristicBeatsGreedy(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 40
	}
	g := games.MustNew("sushigo")
	sum := 0.0
	for i := range n {
		seats := make([]agent.Agent, 4)
		for q := range 4 {
			name := "sushigo-greedy"
			if (q+i)%2 == 0 {
				name = "sushigo-heuristic"
			}
			seats[q], _ = agent.New(g, name, agent.Env{Seed: uint64(10*i + q)})
		}
		ret := playGame(t, g, seats, uint64(i))
		for q := range 4 {
			if (q+i)%2 == 0 {
				sum += ret[q]
			}
		}
	}
	avg := sum / float64(2*n)
	t.Logf("heuristic vs greedy: average return %.3f per heuristic seat over %d games", avg, n)
	if avg <= 0 {
		t.Errorf("heuristic does not beat greedy: %.3f", avg)
	}
}
