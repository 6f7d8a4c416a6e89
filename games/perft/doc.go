// Package perft counts move sequences (Count) and distinct positions
// (Distinct) per ply for any sequential game of the games API, the way
// chess engines pin their move generators against published counts.
//
// It is for testing move generators and for `canopy perft`, not a search.
// Distinct tells positions apart by an exact key (PositionKeyer) or the
// full-state notation, never by the 64-bit Zobrist hash, whose collisions
// would silently change the counts.
//
// The functions are safe for concurrent use on different states.
package perft
