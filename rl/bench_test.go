package rl

import (
	"fmt"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// BenchmarkConnect4Env measures environment steps (one learner move with
// the random opponent's reply, resets included) per second without a
// net. The learner plays the first legal action of a rotating index.
//
//	go test ./rl -run '^$' -bench Connect4Env -benchtime 2s
func BenchmarkConnect4Env(b *testing.B) {
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("n=256/workers=%d", workers), func(b *testing.B) {
			e, err := NewEnv(connect4Game(b), EnvOptions{N: 256, Workers: workers, Seat: SeatAlternate, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			acts := make([]games.Action, e.N())
			k := 0
			b.ReportAllocs()
			for b.Loop() {
				randomActions(e, acts, k)
				k++
				if err := e.Step(acts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*e.N())/b.Elapsed().Seconds(), "steps/s")
		})
	}
}
