package sequence

import (
	"encoding/binary"
	"math/bits"

	"github.com/canopy-go/canopy/games"
)

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
	var blocked bitboard
	for q := range s.g.players {
		if q != player {
			blocked = blocked.or(s.chips[q])
		}
	}
	free := allSquares.andNot(blocked.or(s.deadSquares()))
	v := 256 * float64(s.seqs[player])
	for d := range 4 {
		v += windowScore(own, free, startMask[d], dirStep[d])
	}
	return v
}

// windowScore returns the sum of 4^(k-1) over the windows in the direction
// of step st (startMask m) whose five squares are all in free, k being the
// number of their squares in own, 1 to 4. It works on all windows at once: bit i of a word
// pair below stands for the window starting at square i. open marks the
// windows with five free squares (as fives does); the own squares of each
// window are summed in bit-sliced binary, ones + 2*twos + 4*fours, by full
// adders over the five shifted copies of own. The bitboards are unpacked
// into scalars.
func windowScore(own, free, m bitboard, st uint) float64 {
	shr := func(lo, hi uint64, n uint) (uint64, uint64) {
		return lo>>(n&63) | hi<<((64-n)&63), hi >> (n & 63)
	}
	fl, fh := free.lo, free.hi
	f1l, f1h := shr(fl, fh, st)
	yl, yh := fl&f1l, fh&f1h
	y2l, y2h := shr(yl, yh, 2*st)
	f4l, f4h := shr(fl, fh, 4*st)
	openL, openH := yl&y2l&f4l&m.lo, yh&y2h&f4h&m.hi

	x0l, x0h := own.lo, own.hi
	x1l, x1h := shr(x0l, x0h, st)
	x2l, x2h := shr(x0l, x0h, 2*st)
	x3l, x3h := shr(x0l, x0h, 3*st)
	x4l, x4h := shr(x0l, x0h, 4*st)
	count := func(x uint64) float64 { return float64(bits.OnesCount64(x)) }
	var v float64
	for w := range 2 {
		x0, x1, x2, x3, x4, open := x0l, x1l, x2l, x3l, x4l, openL
		if w == 1 {
			x0, x1, x2, x3, x4, open = x0h, x1h, x2h, x3h, x4h, openH
		}
		a, ca := x0^x1^x2, x0&x1|x2&(x0|x1)
		b, cb := x3^x4, x3&x4
		ones, c1 := a^b, a&b
		twos, fours := ca^cb^c1, ca&cb|c1&(ca|cb)
		lo := open &^ fours // k <= 3
		v += count(lo&ones&^twos) + 4*count(lo&^ones&twos) + 16*count(lo&ones&twos) +
			64*count(open&fours&^ones) // k = 4 (k = 5 has ones set)
	}
	return v
}

// deadSquares returns the empty squares no remaining card can fill: both
// copies of the card they show are in the discard pile (a played card is
// discarded, and so is an exchanged dead one), so neither is left in the
// deck or a hand. In games with jacks it is empty.
func (s *State) deadSquares() bitboard {
	if s.g.jacks {
		return bitboard{}
	}
	// Four kinds at a time (numKinds is a multiple of 4): a count of 2, at
	// most 2 copies, is the byte's bit 1.
	var dead bitboard
	for i := 0; i < numKinds; i += 4 {
		for w := binary.LittleEndian.Uint32(s.discard[i:i+4]) & 0x02020202; w != 0; w &= w - 1 {
			dead = dead.or(faceSquares[i+bits.TrailingZeros32(w)/8])
		}
	}
	return dead.and(s.empty())
}

var _ = [1]struct{}{}[numKinds%4] // deadSquares reads whole groups of four kinds

// The capability is checked at compile time.
var _ games.StateValuer = (*State)(nil)
