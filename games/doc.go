// Package games defines Canopy's game API: a small core interface every game
// implements, optional capabilities found by type assertion, a dense action
// mask, and a registry that builds games from spec strings such as
// "connect4" or "hex:size=11".
//
// The design follows OpenSpiel's spiel.h. A Game is an immutable description
// (rules, options, tensor shapes); a State is one position of it. Players are
// numbered 0..NumPlayers-1; the pseudo-players ChancePlayer,
// SimultaneousPlayer and TerminalPlayer mark states where no single real
// player moves.
//
// Actions are dense integer ids in [0, Game.NumActions()). The legal actions
// of a state are written into a caller-owned Mask, so searching a tree never
// allocates for move generation.
//
// Hot paths (Legal, Apply, CloneInto, Hash, IsTerminal) must not allocate;
// the conformance suite in package gametest pins that for every game.
//
// Games are safe for concurrent use. States are not: each goroutine works on
// its own State and copies with CloneInto.
//
// What this package is not for: search, agents, networks. The agent
// interface lives beside this API in package agent (same layer, importing
// this one), so that game packages may register agents of their own;
// search and networks live in higher layers (see ARCHITECTURE.md) and only
// depend on these APIs.
package games
