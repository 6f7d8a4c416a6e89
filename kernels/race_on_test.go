//go:build race

package kernels

// raceEnabled is set when the race detector is on; sync.Pool then drops
// items on purpose, so allocation counts mean nothing.
const raceEnabled = true
