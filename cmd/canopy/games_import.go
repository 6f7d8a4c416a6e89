package main

// The canopy command knows every game.
import _ "github.com/canopy-go/canopy/games/all"

// ... and ships trained networks (net=default for their games).
import _ "github.com/canopy-go/canopy/nets/zoo"
