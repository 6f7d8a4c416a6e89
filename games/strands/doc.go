// Package strands implements Strands on hexagonal boards of side 4, 5 and 6
// (37, 61, 91 cells), the variable-length multi-action testbed of the
// MegaZero study, and its baseline agent "strands-greedy".
//
// Rules (shared/data/strands/RULES.md): every cell carries a printed number
// 1..6. Black (player 0) opens with one stone on an empty cell marked 2.
// Then the players alternate, White first: a turn begins by taking any empty
// cell, whose number X becomes the turn's number, and continues until
// min(X, empty cells marked X when the turn began) cells marked X are
// covered (the first one included). The game ends when the board is full
// (after Board.Turns() turns: 17, 23, 34). The player whose sorted list of
// group sizes (6-neighbour groups, largest first) is lexicographically
// larger wins; when one list is a prefix of the other, the longer list wins
// ([18 1] beats [18]); identical lists draw. Returns are +1/-1/0.
//
// Boards are generated in code from cube coordinates (board.go) and checked
// cell by cell against MegaZero's board files in the tests. Cells are
// numbered in row-major order of the W x W array of those files (W =
// 2*side-1); the cell number is the action id. Stones are two [2]uint64
// bitsets; groups are found by a flood fill when the game ends.
//
// Multi-action bookkeeping: TurnNumber counts completed turns (turn 0 is
// Black's opening, player turn%2 moves); StepInTurn counts the stones placed
// in the current turn; before a turn's first stone EndsTurn is false unless
// every choice ends the turn at once (see games.MultiActionState).
//
// Notation: the rows of the array (on-board cells only, top row first,
// separated by '/'; x Black, o White, . empty), then "t=TURN", then for a
// turn in progress "pick=X placed=N". Example (side 4, after Black's
// opening at d3 and White's first stone on a 3):
// "..../...../..x.../......./....../...../.o.. t=1 pick=3 placed=1"
// (moves d3, b7).
// Actions print as column letter and row number in that array ("d3").
//
// Observation: shape [11, W, W] over the array: 0 the viewer's stones,
// 1 the opponent's, 2 on-board cells, 3..8 cells printed 1..6, 9 the cells
// the mover may take now, 10 a constant plane holding the stones still to
// place in the current turn divided by 6 (0 before a turn's first stone).
//
// Symmetries: the Game declares the eleven rotations and reflections of the
// hexagon (games.Symmetric, symmetry.go), so training augments Strands
// positions twelvefold.
//
// What this package is not for: search. States are not safe for concurrent
// use; Games and the Board tables are.
package strands
