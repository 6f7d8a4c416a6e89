// Package connect4d implements Connect4d, the multi-action testbed of the
// MegaZero study: d stacked Connect Four boards (7 columns x 6 rows) where a
// turn is d atomic actions, the k-th dropping one stone into sub-board k.
//
// Rules (shared/data/connect4d/RULES.md): only 3-D lines of four win, i.e.
// lines whose sub-board index and row both change at every step; in
// (board, row, column) steps the six directions are (1,+1,0), (1,-1,0),
// (1,+1,+1), (1,+1,-1), (1,-1,+1), (1,-1,-1). Lines inside one board, lines of
// constant height and pure-depth lines never win. The game ends as soon as a
// stone completes a winning line, even mid-turn. It is drawn when the board
// to play in has no free column (all boards fill together, so after 42
// turns).
//
// Spec: "connect4d" or "connect4d:d=5" (d in 2..8, default 5).
//
// Representation: per player one uint64 per board in the Pons layout (bit
// col*7+row, row 6 of each column a sentinel that is never set). Action ids
// are board*7+column. Player 0 ('x') moves first; player p moves in turns
// t with t%2 == p.
//
// Notation (State.String): d boards separated by spaces; each board is its
// six rows from top to bottom separated by '/', 'x' and 'o' for the stones of
// players 0 and 1 and digits for runs of empty cells (FEN style), e.g. the
// empty d=2 position is "7/7/7/7/7/7 7/7/7/7/7/7". Whose turn it is and the
// step within the turn follow from the stone counts. Actions print as the
// board number and the column letter: "0d", "3a".
//
// Observation: shape [3, 6, 7*d]: the d boards side by side (board b in
// columns 7b..7b+6, row 0 of the tensor is the top row); plane 0 the
// viewer's stones, plane 1 the opponent's, plane 2 ones over the board to
// play in (all zero at terminal states).
//
// States also implement games.Undoer and games.Drawer.
//
// What this package is not for: search or agents (the generic onestep agent
// plays it; see package agent). States are not safe for concurrent use; the
// Game is.
package connect4d
