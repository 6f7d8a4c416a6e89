package multi_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/cputime"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/multi"
)

// benchPositions are Connect4d positions at the start of x's turn: the
// empty board and the test position of multi_test.go (turn 4).
func benchPositions(b *testing.B) []games.State {
	g := games.MustNew("connect4d")
	mid := g.NewInitialState()
	for _, turn := range [][5]int{{0, 3, 0, 0, 6}, {6, 0, 0, 0, 6}, {5, 0, 5, 0, 5}, {6, 6, 6, 6, 4}} {
		for k, c := range turn {
			if err := games.ApplyChecked(mid, games.Action(k*7+c)); err != nil {
				b.Fatal(err)
			}
		}
	}
	return []games.State{g.NewInitialState(), mid}
}

// BenchmarkTurn plans whole Connect4d turns with each variant (random
// rollouts; the study's self-play and tournament budgets, 250 and 1,250
// evaluations per turn) and reports evaluations per second of wall and
// of process CPU time: the issue asks EMCTS for at least 0.8x MCTS-V's
// rate.
func BenchmarkTurn(b *testing.B) {
	for _, sims := range []int{250, 1250} {
		benchTurn(b, sims)
	}
}

func benchTurn(b *testing.B, sims int) {
	for pi, s := range benchPositions(b) {
		g := s.Game()
		o := search.DefaultOptions()
		o.Sims = sims
		for _, name := range []string{"mcts-v", "mcts-bb", "emcts-v", "emcts-bb", "fh-emcts", "oep"} {
			b.Run(fmt.Sprintf("sims=%d/pos=%d/%s", sims, pi, name), func(b *testing.B) {
				var p multi.Planner
				var err error
				switch name {
				case "mcts-v", "mcts-bb":
					p, err = multi.NewBB(g, o, name == "mcts-v", 1)
				case "oep":
					p, err = multi.NewOEP(g, nil, multi.Budget{Sims: sims}, 1)
				default:
					var e *multi.EMCTS
					e, err = multi.NewEMCTS(g, nil, multi.Budget{Sims: sims}, 1)
					if e != nil {
						e.BB = name == "emcts-bb"
						if name == "fh-emcts" {
							e.Horizon = 3
						}
					}
					p = e
				}
				if err != nil {
					b.Fatal(err)
				}
				var turn []games.Action
				b.ReportAllocs()
				start, cpu0 := time.Now(), cputime.Now()
				turns := 0
				for b.Loop() {
					if turn, err = p.PlanTurn(context.Background(), s, turn[:0]); err != nil {
						b.Fatal(err)
					}
					turns++
				}
				evals := float64(turns * sims)
				b.ReportMetric(evals/time.Since(start).Seconds(), "evals/s")
				if cpu := (cputime.Now() - cpu0).Seconds(); cpu > 0 {
					b.ReportMetric(evals/cpu, "evals/cpu-s")
				}
			})
		}
	}
}
