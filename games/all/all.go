// Package all blank-imports every game of Canopy (and the game-specific
// agents that live beside them) so that importing it registers them all
// with games.New and agent.New. Commands and tests that want "every game"
// import this package; libraries import only the games they need.
package all

import (
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/connect4/solver"
	_ "github.com/canopy-go/canopy/games/connect4d"
	_ "github.com/canopy-go/canopy/games/hex"
	_ "github.com/canopy-go/canopy/games/nim"
	_ "github.com/canopy-go/canopy/games/sequence"
	_ "github.com/canopy-go/canopy/games/strands"
	_ "github.com/canopy-go/canopy/games/sushigo"
	_ "github.com/canopy-go/canopy/games/tetrislink"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)
