package sequence

import "github.com/canopy-go/canopy/games"

// StateValue implements games.StateValuer: a static evaluation of the
// position for player, for searches that cut rollouts off and score the
// position reached (study 000's eight-turn rollouts with cut=state). It
// counts the player's chances to make sequences:
//
//	x_p = 256 * (p's completed sequences)
//	    + sum over the board's 192 five-square windows open to p of 4^(k-1),
//
// where a window is open to p when it holds no chip of another player and
// none of its empty squares is dead, and k >= 1 is the number of its
// squares that are p's chips or wild corners (k = 5, a sequence already
// counted, and k = 0 add nothing). An empty square is dead when no card
// left in the deck or in a hand shows it (both copies played or
// discarded); with jacks in the game no square is dead (a two-eyed jack
// fills any). So an open four scores 64, an open three 16 and a completed
// sequence as much as four open fours. The searcher turns the difference
// between players into a value with tanh((x_p - x_q)/cutscale).
//
// It reads the hands, so searches call it on determinized states. It does
// not modify s, does not allocate and is safe to call concurrently on
// distinct states.
func (s *State) StateValue(player int) float64 {
	own := s.chips[player].or(corners)
	var others bitboard
	for q := range s.g.players {
		if q != player {
			others = others.or(s.chips[q])
		}
	}
	dead := s.deadSquares()
	v := 256 * float64(s.seqs[player])
	for _, w := range allWindows {
		if !w.and(others).isEmpty() || !w.and(dead).isEmpty() {
			continue
		}
		if k := w.and(own).count(); k >= 1 && k <= 4 {
			v += float64(int(1) << (2 * (k - 1)))
		}
	}
	return v
}

// deadSquares returns the empty squares no remaining card can fill: both
// copies of the card they show are gone from the deck and the hands. In
// games with jacks it is empty.
func (s *State) deadSquares() bitboard {
	if s.g.jacks {
		return bitboard{}
	}
	left := s.deck
	for p := range s.g.players {
		for _, k := range s.hand[p][:s.hn[p]] {
			left[k]++
		}
	}
	var live bitboard
	for k, n := range left {
		if n > 0 {
			live = live.or(faceSquares[k])
		}
	}
	return s.empty().andNot(live)
}

// The capability is checked at compile time.
var _ games.StateValuer = (*State)(nil)
