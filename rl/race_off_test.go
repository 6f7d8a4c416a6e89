//go:build !race

package rl

// raceEnabled: the race detector is on (allocation counts do not hold).
const raceEnabled = false
