package connect4

import (
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/cputime"
)

// benchStates returns states along a random game (mid-game mix).
func benchStates() []*State {
	rng := games.NewRand(5)
	var out []*State
	for len(out) < 64 {
		s := New().NewState()
		for !s.IsTerminal() {
			out = append(out, s.Clone().(*State))
			s.Legal(legalScratch)
			s.Apply(legalScratch.Random(rng))
		}
	}
	return out
}

var legalScratch = games.NewMask(Width)

func BenchmarkApply(b *testing.B) {
	states := benchStates()
	mask := games.NewMask(Width)
	var work State
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		src := states[i&63]
		i++
		work = *src
		work.Legal(mask)
		work.Apply(mask.First())
	}
}

func BenchmarkLegal(b *testing.B) {
	states := benchStates()
	mask := games.NewMask(Width)
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		states[i&63].Legal(mask)
		i++
	}
}

func BenchmarkCloneInto(b *testing.B) {
	states := benchStates()
	var dst games.State = New().NewState()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		states[i&63].CloneInto(dst)
		i++
	}
}

func BenchmarkHash(b *testing.B) {
	states := benchStates()
	var sink uint64
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		sink ^= states[i&63].Hash()
		i++
	}
	_ = sink
}

// BenchmarkPlayout measures random games per second from the empty board:
// "generic" through games.RandomPlayout (interface calls, a mask per move),
// "bitboard" through State.RandomPlayout.
func BenchmarkPlayout(b *testing.B) {
	b.Run("generic", func(b *testing.B) {
		rng := games.NewRand(1)
		mask := games.NewMask(Width)
		var s games.State = New().NewState()
		start := New().NewState()
		b.ReportAllocs()
		cpu0 := cputime.Seconds()
		for b.Loop() {
			start.CloneInto(s)
			games.RandomPlayout(s, rng, mask, nil)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
		b.ReportMetric(float64(b.N)/(cputime.Seconds()-cpu0), "games/cpu-s")
	})
	b.Run("bitboard", func(b *testing.B) {
		rng := games.NewRand(1)
		var s State
		b.ReportAllocs()
		cpu0 := cputime.Seconds()
		for b.Loop() {
			s = State{}
			s.RandomPlayout(rng)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
		b.ReportMetric(float64(b.N)/(cputime.Seconds()-cpu0), "games/cpu-s")
	})
}
