package sequence

import "github.com/canopy-go/canopy/games"

// HeuristicValue implements games.Heuristic with the greedy baseline's
// score (GreedyScore, the scorer of the sequence-greedy agent) of action a
// for the player to move: run points 1/5/10/100 for runs of 2/3/4/5 through
// the square, 1e9 for exchanging a dead card (it does not use up the turn),
// 0 for passing and outside the play phase. player is not used (Sequence is
// sequential; the mover's hand decides). It reads the mover's hand, so a
// search calls it on determinized states. It does not modify s and does
// not allocate.
func (s *State) HeuristicValue(player int, a games.Action) float64 {
	return s.GreedyScore(a)
}

// The capability is checked at compile time.
var _ games.Heuristic = (*State)(nil)
