// Package agent defines the Agent interface, a registry that builds agents
// from spec strings ("random", "onestep", "mcts:sel=uct,sims=2000"), and the
// game-independent baseline agents random and onestep.
//
// An agent is built for one game and one seed; given the same seed and the
// same sequence of states it makes the same choices. Agents are not safe for
// concurrent use: an arena builds one agent per seat and game.
//
// Constructors receive an Env: the seed and the services a command shares
// between its agents (search/engine's network engine pool, which carries
// the command's backend). Nothing is found through package-level state;
// the registry itself is the only global, a table of constructors like
// database/sql's drivers, filled at init.
//
// This package sits beside the game API, in the games layer (OpenSpiel's
// spiel_bots.h beside spiel.h): it imports only package games and spec, so
// a game package can register its own agents (the Connect Four solver,
// Tetris Link heuristics, Sequence greedy, ...) next to the rules they read,
// unexported state included. Search and network agents register from the
// higher layers that implement them (search, search/multi, search/engine).
package agent
