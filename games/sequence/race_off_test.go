//go:build !race

package sequence

// raceEnabled is true under -race, where the tests play fewer games.
const raceEnabled = false
