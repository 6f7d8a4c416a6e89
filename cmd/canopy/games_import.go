package main

// The canopy command knows every game.
import _ "github.com/canopy-go/canopy/games/all"

// ... and ships trained networks (net=default for their games).
import _ "github.com/canopy-go/canopy/nets/zoo"

// ... and the turn-level searches of multi-action games (mcts-v, mcts-bb, emcts).
import _ "github.com/canopy-go/canopy/search/multi"
