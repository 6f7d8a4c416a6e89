package main

// The canopy command knows every game.
import _ "github.com/canopy-go/canopy/games/all"
