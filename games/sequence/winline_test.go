package sequence

import (
	"testing"

	"github.com/canopy-go/canopy/games"
)

// Random games to the end: a won game's line is at least four squares (a
// sequence of five, a corner perhaps left out), every one of them a chip
// of the winner in the winner's own observation; a drawn or unfinished
// game has none.
func TestWinningLine(t *testing.T) {
	g := New(2, true)
	obs := make([]float32, games.ObservationSize(g))
	won := 0
	for seed := range uint64(20) {
		s := g.NewInitialState().(*State)
		rng := games.NewRand(seed)
		mask := games.NewMask(g.NumActions())
		for !s.IsTerminal() {
			if s.WinningLine() != nil {
				t.Fatal("a line before the end")
			}
			if s.CurrentPlayer() == games.ChancePlayer {
				s.Apply(s.SampleChance(rng))
				continue
			}
			s.Legal(mask)
			s.Apply(mask.Random(rng))
		}
		w := s.Winner()
		line := s.WinningLine()
		if w < 0 {
			if line != nil {
				t.Errorf("seed %d: no winner, line %v", seed, line)
			}
			continue
		}
		won++
		if len(line) < 4 {
			t.Errorf("seed %d: line %v of fewer than 4 squares", seed, line)
		}
		s.Observation(w, obs)
		for _, sq := range line {
			if obs[sq] != 1 {
				t.Errorf("seed %d: square %d of the line is not the winner's", seed, sq)
			}
		}
	}
	if won == 0 {
		t.Error("no random game was won: nothing checked")
	}
}
