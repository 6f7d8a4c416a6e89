package sequence

import (
	"math/bits"

	"github.com/canopy-go/canopy/games"
)

// Line measures for study 000's shaped rewards (its section 3.1: +0.05 per
// unit of growth of the longest run, +0.1 for blocking an open four). The
// rl package reads them through its LineState interface.

// runCont[d] holds the squares whose neighbour one step further in
// direction d is on the board (no wrap around an edge).
var runCont = func() (c [4]bitboard) {
	for sq := range numSquares {
		r, col := sq/10, sq%10
		ok := [4]bool{col <= 8, r <= 8, r <= 8 && col <= 8, r <= 8 && col >= 1}
		for d := range 4 {
			if ok[d] {
				c[d].set(sq)
			}
		}
	}
	return c
}()

// LongestRun returns the length of player's longest contiguous line of
// chips in any of the four directions, the wild corners counted as the
// player's (as the greedy baseline counts them), so it is at least 1. A run
// may be longer than five.
func (s *State) LongestRun(player int) int {
	b := s.chips[player].or(corners)
	best := 0
	for d := range 4 {
		// y holds the squares that start a run of n squares of b going
		// one step at a time in direction d.
		y, n := b, 0
		for !y.isEmpty() {
			n++
			y = y.shr(dirStep[d]).and(b).and(runCont[d])
		}
		best = max(best, n)
	}
	return best
}

// BlocksFive reports whether action m of the player to move puts a chip on
// the one empty square of an opponent's open four: a five-square window
// whose other four squares are that opponent's chips or wild corners and
// which, completed, would count as a new sequence for it (sharing at most
// one chip with its completed sequences). Exchanges, passes, one-eyed
// jack removals and actions that are not placements of the hand's cards
// report false. The state is not modified.
func (s *State) BlocksFive(m games.Action) bool {
	if s.phase != phPlay || m == PassAction || m < 0 || int(m) >= NumActions {
		return false
	}
	p := int(s.player)
	slot, sq := int(m)/numSquares, int(m)%numSquares
	if slot >= int(s.hn[p]) || kindClass(s.hand[p][slot]) == kindOneEyed || !s.empty().has(sq) {
		return false
	}
	for q := range s.g.players {
		if q == p {
			continue
		}
		own := s.chips[q].or(corners)
		for d := range 4 {
			starts := windowsAt[d][sq]
			for j, w := range starts.words() {
				for w != 0 {
					start := j<<6 + bits.TrailingZeros64(w)
					w &= w - 1
					win := window[d][start]
					rest := win
					rest.unset(sq)
					if rest.andNot(own).isEmpty() && win.and(s.locked[q]).count() <= 1 {
						return true
					}
				}
			}
		}
	}
	return false
}
