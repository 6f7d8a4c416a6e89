package sushigo

import "github.com/canopy-go/canopy/games"

// HeuristicValue implements games.Heuristic: the score of the
// sushigo-heuristic agent, in points: the change of the heuristic value of
// player's position when it takes a (see heuristicValue; other players'
// picks of the trick are left out). At a simultaneous node player is the
// player choosing; in the sequential view it is the player to move. Zero
// for chance and terminal nodes, players out of range and illegal actions.
// It does not modify s and does not allocate.
func (s *State) HeuristicValue(player int, a games.Action) float64 {
	if player < 0 || player >= int(s.c.np) || !s.c.isLegal(player, a) {
		return 0
	}
	return gain(&s.c, player, a, true)
}

// Heuristic is HeuristicValue for any state: 0 for states of other games.
func Heuristic(s games.State, player int, a games.Action) float64 {
	st, ok := s.(*State)
	if !ok {
		return 0
	}
	return st.HeuristicValue(player, a)
}

// The capability is checked at compile time.
var _ games.Heuristic = (*State)(nil)
