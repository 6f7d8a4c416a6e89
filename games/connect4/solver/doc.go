// Package solver is a perfect Connect Four solver in the style of Pascal
// Pons' (http://blog.gamesolver.org): negamax with alpha-beta on bitboards,
// an exact-keyed transposition table storing upper and lower bounds, move
// ordering by centre distance and by the number of winning cells a move
// creates, pruning of moves that lose at once, and a null-window search
// that narrows the score interval (iterative narrowing).
//
// Scores follow Pons' convention, from the view of the player to move:
// 0 is a draw; a win scores 22 minus the number of stones the winner has
// played when the game ends (winning sooner scores higher); a loss is the
// negative of the opponent's win score.
//
// It also registers the agent "solver" (Connect Four only) that plays an
// optimal move, breaking ties among equally scored moves at random with
// the agent's seed.
//
// A Solver owns a 64 MiB table and is not safe for concurrent use; use one
// per goroutine. Exact scores of positions with few stones take long
// (seconds to minutes below about 12 stones, hours for the empty board).
// Their outcomes (win, draw, loss) do not: the binary carries an opening
// book (OpeningBook: the outcome of every position after BookPly = 8
// plies, made with this solver by genbook and checked against John
// Tromp's 8-ply database), from which Book.Outcome answers any position
// with at most 8 stones at once. The solver agent uses it by default.
// It is not for other games or board sizes.
package solver
