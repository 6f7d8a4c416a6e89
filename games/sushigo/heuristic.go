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

// The capability is checked at compile time.
var _ games.Heuristic = (*State)(nil)

// StateValue implements games.StateValuer, in points: player's running
// score (completed rounds) plus heuristicValue of this round's position
// (the table at face value with partial credit for unfinished sets and
// open wasabi, the maki standings as if scored now, the pudding standings
// projected), the state evaluation of study 003's Algorithm 1. At the end
// of the game it is the final score with the pudding standings counted
// once. Zero for players out of range.
func (s *State) StateValue(player int) float64 {
	if player < 0 || player >= int(s.c.np) {
		return 0
	}
	if s.c.over() {
		return float64(s.c.score[player])
	}
	return float64(s.c.score[player]) + heuristicValue(&s.c, player)
}

// The capability is checked at compile time.
var _ games.StateValuer = (*State)(nil)
