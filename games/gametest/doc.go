// Package gametest is the conformance suite every game's tests run, in the
// spirit of OpenSpiel's RandomSimTest: it plays seeded random games and at
// every state checks clones, notation and action-text round trips, hashes,
// legal masks against ApplyChecked, observation and information-state
// tensors, returns, termination, undo, multi-action bookkeeping,
// determinization (the resampled state looks the same to the observer, its
// Board included), board drawings (games.Boarder: shapes and ranges) and
// the no-allocation promise of the hot paths.
//
// A game's test calls it in a few lines:
//
//	func TestConformance(t *testing.T) {
//		gametest.Run(t, games.MustNew("connect4"), gametest.Options{Games: 200})
//	}
//
//	func FuzzNotation(f *testing.F) { gametest.FuzzNotation(f, games.MustNew("connect4")) }
package gametest
