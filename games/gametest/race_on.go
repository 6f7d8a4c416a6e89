//go:build race

package gametest

// raceEnabled is true when built with -race (allocation counts are then unreliable).
const raceEnabled = true
