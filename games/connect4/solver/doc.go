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
// per goroutine. It is not for other games or board sizes, and it has no
// opening book: positions with few stones can take minutes.
package solver
