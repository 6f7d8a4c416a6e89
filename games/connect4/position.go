package connect4

import (
	"fmt"
	"math/bits"
)

// Board geometry. The board is stored column by column, Pascal Pons' layout:
// bit col*7+row (row 0 at the bottom) is one cell; bit col*7+6 of every
// column is a sentinel that is always empty, so shifts by 6, 7 and 8 (the
// three line directions besides vertical) never wrap a line from one column
// into the next.
const (
	Width  = 7
	Height = 6
	// Cells is the number of cells and the maximum game length.
	Cells = Width * Height

	colStride = Height + 1
	// BottomMask has the bottom cell of every column.
	BottomMask uint64 = 1 | 1<<7 | 1<<14 | 1<<21 | 1<<28 | 1<<35 | 1<<42
	// BoardMask has every playable cell (sentinel row excluded).
	BoardMask uint64 = BottomMask * (1<<Height - 1)
	// topMask has the top playable cell of every column.
	topMask uint64 = BottomMask << (Height - 1)
)

// ColumnMask returns the cells of column col (0..6).
func ColumnMask(col int) uint64 { return (1<<Height - 1) << (col * colStride) }

// Position is a Connect Four position as two bitboards, in the layout
// described at BottomMask: Current holds the stones of the player to move,
// Mask all stones. The zero value is the empty board. It is a small value
// type: copy it to branch a search. It does not know whether the game is
// already over (see LastMoverWon); its methods assume the caller stops
// playing once someone has four in a row.
type Position struct {
	current uint64
	mask    uint64
	moves   int
}

// Current returns the stones of the player to move.
func (p Position) Current() uint64 { return p.current }

// Mask returns all stones on the board.
func (p Position) Mask() uint64 { return p.mask }

// Moves returns the number of stones played.
func (p Position) Moves() int { return p.moves }

// Key returns a 49-bit number that identifies the position exactly:
// Current+Mask sets, per column, one bit above the top stone and the
// mover's stones below it, so no two positions share a key (and the key
// encodes whose turn it is through the stone count).
func (p Position) Key() uint64 { return p.current + p.mask }

// CanPlay reports whether column col (0..6) has room.
func (p Position) CanPlay(col int) bool { return p.mask&(topMask&ColumnMask(col)) == 0 }

// Play drops a stone of the player to move in column col, which must be
// playable (CanPlay).
func (p *Position) Play(col int) {
	p.PlayMove((p.mask + BottomMask) & ColumnMask(col))
}

// PlayMove plays the single-bit move, one of the bits of Possible().
func (p *Position) PlayMove(move uint64) {
	p.current ^= p.mask
	p.mask |= move
	p.moves++
}

// Possible returns the cells where a stone can be dropped now (one per
// non-full column).
func (p Position) Possible() uint64 { return (p.mask + BottomMask) & BoardMask }

// IsWinningMove reports whether playing column col (playable) makes four in
// a row for the player to move.
func (p Position) IsWinningMove(col int) bool {
	return p.WinningPositions()&p.Possible()&ColumnMask(col) != 0
}

// CanWinNext reports whether the player to move can win with this move.
func (p Position) CanWinNext() bool { return p.WinningPositions()&p.Possible() != 0 }

// WinningPositions returns the empty cells (reachable or not) that would
// complete four in a row for the player to move.
func (p Position) WinningPositions() uint64 { return winningCells(p.current, p.mask) }

// OpponentWinningPositions returns the empty cells that would complete four
// in a row for the opponent.
func (p Position) OpponentWinningPositions() uint64 { return winningCells(p.current^p.mask, p.mask) }

// PossibleNonLosingMoves returns the moves (bits of Possible) that do not
// let the opponent win at once: when the opponent threatens to win, only the
// block remains (none when there are two threats), and cells just below an
// opponent threat are excluded. Call it only when the player to move cannot
// win at once.
func (p Position) PossibleNonLosingMoves() uint64 {
	possible := p.Possible()
	opp := p.OpponentWinningPositions()
	if forced := possible & opp; forced != 0 {
		if forced&(forced-1) != 0 {
			return 0 // two threats: cannot block both
		}
		possible = forced
	}
	return possible &^ (opp >> 1)
}

// MoveScore counts the winning cells the player to move would have after
// playing move (a bit of Possible): the move-ordering heuristic.
func (p Position) MoveScore(move uint64) int {
	return bits.OnesCount64(winningCells(p.current|move, p.mask))
}

// LastMoverWon reports whether the player who made the last move has four
// in a row.
func (p Position) LastMoverWon() bool { return HasFour(p.current ^ p.mask) }

// Stones returns player's stones (0 = first player).
func (p Position) Stones(player int) uint64 {
	if p.moves&1 == player {
		return p.current
	}
	return p.current ^ p.mask
}

// String returns a compact board picture (used in test failures).
func (p Position) String() string {
	b := make([]byte, 0, Height*(Width+1))
	x, o := p.Stones(0), p.Stones(1)
	for row := Height - 1; row >= 0; row-- {
		for col := range Width {
			bit := uint64(1) << (col*colStride + row)
			switch {
			case x&bit != 0:
				b = append(b, 'X')
			case o&bit != 0:
				b = append(b, 'O')
			default:
				b = append(b, '.')
			}
		}
		b = append(b, '\n')
	}
	return string(b)
}

// HasFour reports whether the stones in b contain four in a row
// (vertically, horizontally or diagonally).
func HasFour(b uint64) bool {
	// Horizontal.
	m := b & (b >> colStride)
	if m&(m>>(2*colStride)) != 0 {
		return true
	}
	// Diagonal /.
	m = b & (b >> (colStride + 1))
	if m&(m>>(2*(colStride+1))) != 0 {
		return true
	}
	// Diagonal \.
	m = b & (b >> (colStride - 1))
	if m&(m>>(2*(colStride-1))) != 0 {
		return true
	}
	// Vertical.
	m = b & (b >> 1)
	return m&(m>>2) != 0
}

// winningCells returns the empty cells of the board that would complete an
// alignment of four for the stones in pos.
func winningCells(pos, mask uint64) uint64 {
	// Vertical: three stones right below.
	r := (pos << 1) & (pos << 2) & (pos << 3)

	// Horizontal and both diagonals: for each direction, the cell can be
	// the 1st, 2nd, 3rd or 4th of the four.
	r |= lineCells(pos, colStride)
	r |= lineCells(pos, colStride-1)
	r |= lineCells(pos, colStride+1)
	return r & (BoardMask ^ mask)
}

// lineCells returns the cells that complete four for pos along the
// direction of shift d (inlined with a constant d).
func lineCells(pos uint64, d uint) uint64 {
	p := (pos << d) & (pos << (2 * d))
	r := p & (pos << (3 * d))
	r |= p & (pos >> d)
	p = (pos >> d) & (pos >> (2 * d))
	r |= p & (pos << d)
	r |= p & (pos >> (3 * d))
	return r
}

// ParsePosition plays a move sequence in Pons' notation (columns "1".."7",
// one digit per move) from the empty board. It rejects non-digits, full
// columns and moves after a win, naming the offending 1-based position in
// the string.
func ParsePosition(moves string) (Position, error) {
	var p Position
	err := playSequence(moves, func(col int) { p.Play(col) }, &p)
	return p, err
}

// playSequence validates moves against p (which it advances through play)
// and reports the first problem.
func playSequence(moves string, play func(col int), p *Position) error {
	won := false
	for i := 0; i < len(moves); i++ {
		c := moves[i]
		if c < '1' || c > '7' {
			return fmt.Errorf("connect4: %q at position %d of %q is not a column 1..7", moves[i:i+1], i+1, moves)
		}
		if won {
			return fmt.Errorf("connect4: move %c at position %d of %q comes after the game was won", c, i+1, moves)
		}
		col := int(c - '1')
		if !p.CanPlay(col) {
			return fmt.Errorf("connect4: move %c at position %d of %q: column %c is full", c, i+1, moves, c)
		}
		play(col)
		won = p.LastMoverWon()
	}
	return nil
}
