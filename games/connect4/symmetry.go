package connect4

import "github.com/canopy-go/canopy/games"

// mirror is Connect Four's one symmetry besides the identity: the
// left-right reflection, column c <-> column Width-1-c, on both planes of
// the observation and on the action ids (which are columns). Gravity,
// lines of four and the turn order are unchanged by it.
var mirror = func() []games.Symmetry {
	s, err := games.NewBoardSymmetry("mirror", theGame.ObservationShape(), Width,
		func(r, c int) (int, int) { return r, Width - 1 - c },
		func(a games.Action) games.Action { return Width - 1 - a })
	if err != nil {
		panic(err) // the maps above are permutations
	}
	return []games.Symmetry{s}
}()

// Symmetries implements games.Symmetric: the left-right mirror.
func (*Game) Symmetries() []games.Symmetry { return mirror }
