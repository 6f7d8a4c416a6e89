// Package hex implements the connection game Hex on n x n rhombus boards
// (n = 2..13) with an optional pie (swap) rule, registered as
//
//	hex:size=11,swap=false
//
// and two one-ply heuristic agents: "hexdist" (Anshelevich / Queenbee
// two-distance evaluation) and "hexpath" (plain shortest paths, study
// 001's "heuristic based on Dijkstra's shortest path algorithm").
//
// # Board, players, actions
//
// Cells are (row, column) with row 0 at the top and column 0 on the left.
// Cell (r, c) touches (r, c±1), (r-1, c), (r-1, c+1), (r+1, c) and
// (r+1, c-1); the other diagonal (r+1, c+1) is NOT adjacent. Player 0
// (Black, 'X', moves first) connects the top and bottom rows, player 1
// (White, 'O') connects the left and right columns. A full board always has
// exactly one winner, so Hex has no draws; returns are +1 / -1.
//
// The action id of cell (r, c) is r*n + c. With swap=true the id n*n is the
// swap action, legal only as the second move of the game (White's first).
// Action text is a column letter and a 1-based row number, "a1" being the
// top-left cell and "c2" column 2 (0-based), row 1 (0-based); "swap" is the
// swap action. ParseAction also accepts upper case.
//
// # Swap convention
//
// Players keep their roles (player 0 always connects top-bottom). Swapping
// removes Black's first stone at (r, c) and puts a White stone on the
// transposed cell (c, r); then Black (player 0) moves again. This is the
// "swap pieces" form of the standard pie rule and is equivalent to the
// players exchanging colours: transposition maps the top-bottom goal onto
// the left-right goal and preserves adjacency. The current player is always
// MoveNumber() % 2.
//
// # Notation
//
// State.String is the move list separated by single spaces ("a1 c3 swap b2"),
// empty for the initial position. Game.ParseState accepts any whitespace
// between moves and rejects unknown or occupied cells, moves after the game
// has ended, and a misplaced or disabled swap with an error naming the move.
//
// # Observation
//
// Shape [3, n, n], rows then columns as on the board (no transposition for
// White): plane 0 holds the viewer's stones, plane 1 the opponent's, and
// plane 2 is all ones when the viewer is player 0 (connects top-bottom) and
// all zeros when the viewer is player 1 (connects left-right), so a network
// can tell which goal the "own" stones pursue.
//
// # Implementation
//
// Stones are two bitsets over action ids ([3]uint64), so Legal is three
// word operations. Each state carries an array-backed union-find (path
// halving) over the cells with, per root, two flags for the edges its
// group touches; Apply links the new stone to its own neighbours, merges
// the flags and detects a win when the new group touches both edges.
// CloneInto is a plain struct copy (no pointers besides the game). States
// do not implement games.Undoer: union-find cannot cheaply undo.
//
// State.RandomPlayoutWinner is the specialised playout: it deals the empty
// cells at random (the player to move gets ceil(e/2) of them) and decides
// the full board with one row-by-row sweep of Black's stones. This has the
// same winner distribution as a move-by-move uniform playout, because the
// winner of a filled Hex board is the winner of the game (and exactly one
// player connects on a full board). MCTS keeps using Apply for moves in the
// tree.
//
// Measured with `go test -run '^$' -bench . ./games/hex` (CPU time per
// operation, reported as cpu-ns/op, on the project's 2-core Xeon while
// shared with other jobs): deciding a full 11x11 board takes about 0.12 us
// with the row sweep, 2.2 us with a bit-parallel flood fill over the
// bitsets and 4.6 us by building the union-find stone by stone; per move,
// the incremental union-find costs about 0.04 us against 0.45 us for a
// flood fill after every move. RandomPlayoutWinner runs about 1.0 million
// 11x11 playouts per CPU-second, the generic games.RandomPlayout about 70
// thousand.
//
// What this package is not for: general-purpose search (package search) or
// strong play; hexdist and hexpath are baseline opponents, not a Hex engine.
//
// Games are immutable and safe for concurrent use; States and agents are not.
package hex
