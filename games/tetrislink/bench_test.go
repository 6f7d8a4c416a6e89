package tetrislink

import (
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/cputime"
)

// BenchmarkFirstLegalGame plays whole games in which every player always
// plays its first (smallest) legal action, through the generic API
// (Legal + Mask.First + Apply) and through the concrete fast path.
func BenchmarkFirstLegalGame(b *testing.B) {
	for _, np := range []int{2, 4} {
		g, _ := New(np)
		b.Run("api/players="+string(rune('0'+np)), func(b *testing.B) {
			s := g.NewState()
			init := g.NewState()
			var st games.State = s
			m := games.NewMask(NumActionIDs)
			b.ReportAllocs()
			c0 := startCPU()
			for b.Loop() {
				*s = *init
				for !st.IsTerminal() {
					st.Legal(m)
					st.Apply(m.First())
				}
			}
			report(b, c0, "us/game")
		})
		b.Run("fast/players="+string(rune('0'+np)), func(b *testing.B) {
			s := g.NewState()
			init := g.NewState()
			b.ReportAllocs()
			c0 := startCPU()
			for b.Loop() {
				*s = *init
				s.PlayFirst()
			}
			report(b, c0, "us/game")
		})
	}
}

// BenchmarkRandomPlayout measures uniformly random playouts from the
// initial position on one core: games.RandomPlayout through the interface
// and the concrete PlayRandom path.
func BenchmarkRandomPlayout(b *testing.B) {
	for _, np := range []int{2, 4} {
		g, _ := New(np)
		b.Run("api/players="+string(rune('0'+np)), func(b *testing.B) {
			s := g.NewState()
			init := g.NewState()
			m := games.NewMask(NumActionIDs)
			rng := games.NewRand(1)
			b.ReportAllocs()
			c0 := startCPU()
			for b.Loop() {
				*s = *init
				games.RandomPlayout(s, rng, m, nil)
			}
			report(b, c0, "games/s")
		})
		b.Run("fast/players="+string(rune('0'+np)), func(b *testing.B) {
			s := g.NewState()
			init := g.NewState()
			rng := games.NewRand(1)
			b.ReportAllocs()
			c0 := startCPU()
			for b.Loop() {
				*s = *init
				s.PlayRandom(rng)
			}
			report(b, c0, "games/s")
		})
	}
}

// startCPU returns the process CPU time (the benchmark loop is the only
// busy goroutine, so it is the loop's CPU time plus a little GC).
func startCPU() time.Duration { return cputime.Now() }

// report adds the wall-clock metric unit ("us/game" or "games/s") and the
// same quantity measured in CPU time ("cpu-us/game", "games/cpu-s").
func report(b *testing.B, c0 time.Duration, unit string) {
	cpu := cputime.Now() - c0
	n := float64(b.N)
	switch unit {
	case "us/game":
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n/1e3, unit)
		if cpu > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/n/1e3, "cpu-us/game")
		}
	default:
		b.ReportMetric(n/b.Elapsed().Seconds(), unit)
		if cpu > 0 {
			b.ReportMetric(n/cpu.Seconds(), "games/cpu-s")
		}
	}
}

// BenchmarkHeuristicGame plays tuned against user weights (2 players).
func BenchmarkHeuristicGame(b *testing.B) {
	g, _ := New(2)
	s := g.NewState()
	pl := [2]*Heuristic{NewHeuristic(TunedWeights, false, 1), NewHeuristic(UserWeights, false, 2)}
	b.ReportAllocs()
	c0 := startCPU()
	for b.Loop() {
		s.Reset()
		for !s.IsTerminal() {
			s.Apply(pl[s.toMove].Choose(s))
		}
	}
	report(b, c0, "games/s")
}
