// Package connect4 is Connect Four (7 columns x 6 rows) on bitboards, in
// Pascal Pons' layout (one 7-bit group per column, bit 6 an always-empty
// sentinel), registered as "connect4".
//
// Action ids are columns 0..6; their text and the state notation use Pons'
// digits "1".."7" (a state's notation is its move sequence, "" for the
// empty board). Observations are [2, 6, 7]: the viewer's stones, then the
// opponent's, row 0 at the bottom.
//
// Besides the games.State API (plus games.Undoer and games.Drawer), it
// exports the search-friendly Position value type (Play, Key, CanWinNext,
// PossibleNonLosingMoves, MoveScore, ...) used by the perfect solver in
// connect4/solver, and State.RandomPlayout, a bitboard playout loop for
// rollout-based search.
//
// It is not for other board sizes or variants (see connect4d for the
// stacked 3-D game), and it holds no search or solving code.
//
// Game values are immutable and safe for concurrent use; States are not.
package connect4
