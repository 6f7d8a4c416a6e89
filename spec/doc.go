// Package spec parses the short configuration strings Canopy uses to name
// games and agents on the command line, such as "hex:size=11" or
// "mcts:sel=ucb1tuned,c=0.7,sims=2000".
//
// A spec is a name, optionally followed by a colon and a comma-separated list
// of key=value options. Keys are case-sensitive identifiers; values are raw
// strings interpreted by typed getters. Getters record the keys they consume,
// so after a constructor has read every option it knows, Unused reports the
// options nobody asked for (usually a typo the user should hear about).
//
// Spec values are not safe for concurrent use.
//
// Registry is the table of named entries that specs name (games, agents,
// network backends), one implementation behind the three registries;
// Suggest is the "did you mean" of every misspelled name.
package spec
