package solver

import (
	"github.com/canopy-go/canopy/games/connect4"
)

// Score bounds of a position that cannot be won on the next move.
const (
	// MinScore is the lowest possible score: losing to the opponent's
	// fourth stone, -(22-4) = -(42/2) + 3.
	MinScore = -(connect4.Cells)/2 + 3
	// MaxScore is the highest possible score: winning with one's fourth
	// stone, 22-4 = (42+1)/2 - 3.
	MaxScore = (connect4.Cells+1)/2 - 3
	// Illegal marks a full column in Analyze's result.
	Illegal = -1000
)

// Table value encoding: upper bounds as v-MinScore+1 in [1, 37], lower
// bounds as v+MaxScore-2*MinScore+2 in [38, 74]; 0 means no entry.
const (
	upperOffset = 1 - MinScore
	lowerOffset = MaxScore - 2*MinScore + 2
	lowerStart  = MaxScore - MinScore + 1 // values above are lower bounds
)

// columnOrder explores the centre first.
var columnOrder = [connect4.Width]int{3, 2, 4, 1, 5, 0, 6}

// columnMasks[i] is the mask of column columnOrder[i].
var columnMasks = func() (m [connect4.Width]uint64) {
	for i, c := range columnOrder {
		m[i] = connect4.ColumnMask(c)
	}
	return m
}()

// Solver solves Connect Four positions exactly. Its transposition table
// keeps what it learnt between calls (entries are exact bounds, valid for
// any later position). Not safe for concurrent use.
type Solver struct {
	tt    table
	nodes uint64
}

// New returns a solver with an empty 64 MiB transposition table.
func New() *Solver {
	s := &Solver{}
	s.tt.slots = allocSlots(s)
	return s
}

// Reset empties the transposition table and the node counter.
func (s *Solver) Reset() {
	s.tt.reset()
	s.nodes = 0
}

// Nodes returns the number of positions searched since New or Reset.
func (s *Solver) Nodes() uint64 { return s.nodes }

// Solve returns the exact score of p for the player to move (see the
// package comment). When the last mover already has four in a row, it
// returns the corresponding loss for the player to move, and 0 for a full
// board.
func (s *Solver) Solve(p connect4.Position) int {
	n := p.Moves()
	if p.LastMoverWon() {
		return -(connect4.Cells/2 + 1 - (n+1)/2)
	}
	if n == connect4.Cells {
		return 0
	}
	if p.CanWinNext() {
		return (connect4.Cells + 1 - n) / 2
	}
	lo := -(connect4.Cells - n) / 2
	hi := (connect4.Cells + 1 - n) / 2
	for lo < hi { // iterative narrowing with null windows
		med := lo + (hi-lo)/2
		if med <= 0 && lo/2 < med {
			med = lo / 2
		} else if med >= 0 && hi/2 > med {
			med = hi / 2
		}
		if r := s.negamax(p, med, med+1); r <= med {
			hi = r
		} else {
			lo = r
		}
	}
	return lo
}

// Analyze returns the score of every column for the player to move (see
// ScoreMove).
func (s *Solver) Analyze(p connect4.Position) [connect4.Width]int {
	var out [connect4.Width]int
	for col := range connect4.Width {
		out[col] = s.ScoreMove(p, col)
	}
	return out
}

// ScoreMove returns the score of playing col (0..6) in p from the mover's
// view, the negated score of the position after it, or Illegal when the
// column is full or the game is over.
func (s *Solver) ScoreMove(p connect4.Position, col int) int {
	switch {
	case col < 0 || col >= connect4.Width || !p.CanPlay(col) || p.LastMoverWon() || p.Moves() == connect4.Cells:
		return Illegal
	case p.IsWinningMove(col):
		return (connect4.Cells + 1 - p.Moves()) / 2
	}
	p.Play(col)
	return -s.Solve(p)
}

// negamax returns the score of p within the window (alpha, beta): the exact
// score when it lies inside, otherwise a bound on the same side as the
// window edge it crossed. p must not be over, and the player to move must
// not be able to win at once.
func (s *Solver) negamax(p connect4.Position, alpha, beta int) int {
	s.nodes++
	possible := p.PossibleNonLosingMoves()
	n := p.Moves()
	if possible == 0 {
		return -(connect4.Cells - n) / 2 // every move lets the opponent win
	}
	if n >= connect4.Cells-2 {
		return 0 // neither player can win any more
	}
	if lo := -(connect4.Cells - 2 - n) / 2; alpha < lo {
		alpha = lo // the opponent cannot win with its next move
		if alpha >= beta {
			return alpha
		}
	}
	if hi := (connect4.Cells - 1 - n) / 2; beta > hi {
		beta = hi // we cannot win with our next move
		if alpha >= beta {
			return beta
		}
	}
	key := p.Key()
	if v := int(s.tt.get(key)); v != 0 {
		if v > lowerStart {
			if lo := v - lowerOffset; alpha < lo {
				alpha = lo
				if alpha >= beta {
					return alpha
				}
			}
		} else if hi := v - upperOffset; beta > hi {
			beta = hi
			if alpha >= beta {
				return beta
			}
		}
	}

	// Order moves: most winning cells created first, centre first on ties
	// (insertion sort; equal scores keep the later-added, more central,
	// move nearer the end, which is taken first).
	var moves [connect4.Width]uint64
	var scores [connect4.Width]int
	cnt := 0
	for i := connect4.Width - 1; i >= 0; i-- {
		move := possible & columnMasks[i]
		if move == 0 {
			continue
		}
		s.tt.prefetch(childKey(p, move))
		sc := p.MoveScore(move)
		j := cnt
		for ; j > 0 && scores[j-1] > sc; j-- {
			moves[j], scores[j] = moves[j-1], scores[j-1]
		}
		moves[j], scores[j] = move, sc
		cnt++
	}
	for j := cnt - 1; j >= 0; j-- {
		q := p
		q.PlayMove(moves[j])
		score := -s.negamax(q, -beta, -alpha)
		if score >= beta {
			s.tt.put(key, uint8(clampScore(score)+lowerOffset))
			return score
		}
		if score > alpha {
			alpha = score
		}
	}
	s.tt.put(key, uint8(clampScore(alpha)+upperOffset))
	return alpha
}

// childKey is the key of p after move, without building the position.
func childKey(p connect4.Position, move uint64) uint64 {
	return p.Current() ^ p.Mask() + (p.Mask() | move)
}

// clampScore brings a bound into [MinScore, MaxScore] for the table. Every
// true score lies in that range (a win needs four stones), so the clamped
// bound stays valid; windows near the start of the game can carry bounds
// just outside it.
func clampScore(v int) int {
	return min(max(v, MinScore), MaxScore)
}
