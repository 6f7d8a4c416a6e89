package gametest

import (
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/cputime"
)

// BenchPlayout measures games.RandomPlayout from the initial state of g and
// reports games/s, games/cpu-s and actions/game. It needs no game-specific
// code, so every game gets the same comparable figure.
func BenchPlayout(b *testing.B, g games.Game) {
	init, s := g.NewInitialState(), g.NewInitialState()
	rng := games.NewRand(1)
	m := games.NewMask(g.NumActions())
	joint := make([]games.Action, g.NumPlayers())
	b.ReportAllocs()
	moves := 0
	cpu0 := cputime.Seconds()
	for b.Loop() {
		init.CloneInto(s)
		moves += games.RandomPlayout(s, rng, m, joint)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
	if cpu := cputime.Seconds() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu, "games/cpu-s")
	}
	b.ReportMetric(float64(moves)/float64(b.N), "actions/game")
}

// recordGame plays one seeded random game of a sequential game and returns
// its actions.
func recordGame(g games.Game, seed uint64) []games.Action {
	rng := games.NewRand(seed)
	m := games.NewMask(g.NumActions())
	s := g.NewInitialState()
	var out []games.Action
	for !s.IsTerminal() {
		s.Legal(m)
		a := m.Random(rng)
		out = append(out, a)
		s.Apply(a)
	}
	return out
}

// BenchApply replays one recorded random game of the sequential game g:
// the cost of Apply (the game's win test included) per action, plus one
// CloneInto per game, reported as ns/apply and cpu-ns/apply.
func BenchApply(b *testing.B, g games.Game) {
	acts := recordGame(g, 3)
	init, s := g.NewInitialState(), g.NewInitialState()
	b.ReportAllocs()
	cpu0 := cputime.Seconds()
	for b.Loop() {
		init.CloneInto(s)
		for _, a := range acts {
			s.Apply(a)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(acts)), "ns/apply")
	b.ReportMetric((cputime.Seconds()-cpu0)*1e9/float64(b.N*len(acts)), "cpu-ns/apply")
}

// BenchLegal measures Legal on the states of one recorded random game of
// the sequential game g (ns/legal and cpu-ns/legal).
func BenchLegal(b *testing.B, g games.Game) {
	acts := recordGame(g, 3)
	var states []games.State
	s := g.NewInitialState()
	for _, a := range acts {
		states = append(states, s.Clone())
		s.Apply(a)
	}
	m := games.NewMask(g.NumActions())
	b.ReportAllocs()
	cpu0 := cputime.Seconds()
	for b.Loop() {
		for _, st := range states {
			st.Legal(m)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(states)), "ns/legal")
	b.ReportMetric((cputime.Seconds()-cpu0)*1e9/float64(b.N*len(states)), "cpu-ns/legal")
}

// BenchHash measures State.Hash on a mid-game state of g (after up to 60
// random steps, stopping at the first simultaneous node).
func BenchHash(b *testing.B, g games.Game) {
	s := g.NewInitialState()
	rng := games.NewRand(3)
	m := games.NewMask(g.NumActions())
	for range 60 {
		if s.IsTerminal() || s.CurrentPlayer() == games.SimultaneousPlayer {
			break
		}
		s.Legal(m)
		s.Apply(m.Random(rng))
	}
	b.ReportAllocs()
	var h uint64
	for b.Loop() {
		h ^= s.Hash()
	}
	hashSink = h
}

var hashSink uint64
