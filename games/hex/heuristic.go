package hex

import "github.com/canopy-go/canopy/games"

// scorer is the one-ply two-distance evaluation shared by the hexdist
// agent and State.HeuristicValue, with its scratch space (about 6 KiB: the
// reduced graph, two distance maps and the position after the move). The
// zero value is ready to use. It does not allocate and is not safe for
// concurrent use.
type scorer struct {
	ev     evaluator
	after  State
	dA, dB [maxCells]int32
}

// score evaluates action a for the player to move in s (not terminal):
// the opponent's potential minus the mover's potential after a (see
// HexDist), or winScore when a wins at once. s is not modified.
func (sc *scorer) score(s *State, a games.Action) int {
	p := s.CurrentPlayer()
	sc.ev.g = s.g
	sc.after = *s
	sc.after.Apply(a)
	if sc.after.winner == int8(p) {
		return winScore
	}
	own := sc.ev.potential(&sc.after.stones, p, &sc.dA, &sc.dB)
	opp := sc.ev.potential(&sc.after.stones, 1-p, &sc.dA, &sc.dB)
	return opp - own
}

// HeuristicValue implements games.Heuristic with the hexdist agent's score
// of legal action a for the player to move: opponent's potential minus own
// potential after a, in two-distance units (a potential is at most Far),
// and 1<<20 for a move that wins at once. player is not used (Hex is
// sequential). 0 once the game is over. Each call evaluates two potentials
// in scratch space on the stack: it does not allocate and may run
// concurrently on distinct states.
func (s *State) HeuristicValue(player int, a games.Action) float64 {
	if s.IsTerminal() {
		return 0
	}
	var sc scorer
	return float64(sc.score(s, a))
}

// The capability is checked at compile time.
var _ games.Heuristic = (*State)(nil)
