// Package tetrislink implements Tetris Link, the board game of dropping
// tetrominoes into a 10-column by 20-row upright grid, for 2 to 4 players,
// exactly as /work/shared/data/tetrislink/RULES.md states: no dice, each
// player chooses freely among its remaining pieces (5 each of I, O, T, S, L),
// pieces fall straight down, +1 point per piece in a same-colour group of at
// least 3 pieces, -1 per empty square covered by a drop (at most -2 per
// turn), a player who cannot place a piece is skipped, and the game ends when
// nobody can place one.
//
// It also holds what is specific to this game: the study's four-feature
// heuristic agents (registered as "heuristic"), a fast random-playout path
// and a first-player statistics helper. Game logs (actions and scores after
// every turn) use the format shared by every game, arena.Log, read and
// written by `canopy play --log` and `canopy replay --log/--write-log`.
//
// Representation. The board is 20 row bitmasks of 10 bits (bit c = column c,
// row 0 = bottom) for all pieces plus one set per player; column heights are
// kept incrementally, so the landing row of a drop is
// max over the piece's columns of (height - the piece's bottom offset there).
// Because heights only grow, a placement that stops fitting never fits again:
// the set of placements that fit the board (ignoring whose pieces remain) is
// kept as a 190-bit mask and only recomputed when a column reaches row 17, so
// Legal is three AND operations. Groups are tracked with a union-find over
// pieces (union by size, no path compression, so Undo can roll it back).
//
// Action ids: orientation*10 + column, 19 orientations (I0-I1, O0, T0-T3,
// S0-S3, L0-L7, see pieces.go) x 10 drop columns = 190 ids; the column is that
// of the piece's leftmost cell. Action text: shape letter, orientation index
// within the shape, '@', column 1..10, e.g. "T2@5".
//
// Returns (State.Returns): each player gets (players with a lower final
// score - players with a higher one) / (players - 1): +1/-1/0 with two
// players; in general in [-1, 1], summing to zero. The raw running scores
// come from State.Scores (games.Scorer). Observation: [6*players, 20, 10],
// see State.Observation. Notation: "players=N;" then the actions, e.g.
// "players=2;I0@1 T2@5" (skips are forced, so not written). States also
// implement games.Undoer and games.Drawer.
//
// What it is not for: generic search or arena code (those live in higher
// layers and see this game only through the games API).
//
// Thread safety: a *Game is immutable and safe for concurrent use; a *State
// is not; agents are not.
package tetrislink
