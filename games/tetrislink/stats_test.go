package tetrislink

import (
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
)

// Seat statistics of fast players on the concrete state, for the tests of
// the heuristic agent (agents_test.go).

// Player chooses moves on the concrete state (Heuristic is one).
type Player interface {
	Choose(s *State) games.Action
}

// RandomPlayer plays uniformly random legal actions.
type RandomPlayer struct{ Rng *rand.Rand }

// Choose implements Player.
func (r RandomPlayer) Choose(s *State) games.Action { return s.RandomLegal(r.Rng) }

// SeatStats summarises games by seat.
type SeatStats struct {
	Games int
	// Wins[p] counts games seat p won outright (sole highest score).
	Wins []int
	// Draws counts games whose highest score was shared.
	Draws int
	// MeanScore[p] is seat p's mean final score.
	MeanScore []float64
	// MeanMoves is the mean number of pieces placed per game.
	MeanMoves float64
}

// PlaySeatStats plays n games of g from the initial position, seat p
// played by newPlayer(p, seed') with a distinct seed per game and seat, and
// returns per-seat results. It is deterministic for a given seed.
func PlaySeatStats(g *Game, n int, seed uint64, newPlayer func(seat int, seed uint64) Player) SeatStats {
	np := g.players
	st := SeatStats{Games: n, Wins: make([]int, np), MeanScore: make([]float64, np)}
	s := g.NewState()
	pl := make([]Player, np)
	moves := 0
	for i := range n {
		s.Reset()
		for p := range pl {
			pl[p] = newPlayer(p, seed+uint64(i)*uint64(np)+uint64(p))
		}
		for !s.IsTerminal() {
			s.Apply(pl[s.toMove].Choose(s))
			moves++
		}
		best, nbest := s.score[0], 0
		for p := range np {
			st.MeanScore[p] += float64(s.score[p])
			switch {
			case s.score[p] > best:
				best, nbest = s.score[p], 1
			case s.score[p] == best:
				nbest++
			}
		}
		if nbest > 1 {
			st.Draws++
			continue
		}
		for p := range np {
			if s.score[p] == best {
				st.Wins[p]++
			}
		}
	}
	for p := range np {
		st.MeanScore[p] /= float64(max(n, 1))
	}
	st.MeanMoves = float64(moves) / float64(max(n, 1))
	return st
}
