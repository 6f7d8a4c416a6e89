package games

import "math/rand/v2"

// ZobristKeys returns n pseudo-random 64-bit keys derived from seed with
// SplitMix64. Games use a fixed seed per game so hashes are stable across
// runs and machines (they may be stored in self-play files).
func ZobristKeys(seed uint64, n int) []uint64 {
	keys := make([]uint64, n)
	x := seed
	for i := range keys {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		keys[i] = z ^ (z >> 31)
	}
	return keys
}

// NewRand returns the project's standard reproducible generator (PCG)
// for seed. Every command that takes --seed derives its generators here.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0xda3e39cb94b95bdb))
}

// DeriveSeed mixes a base seed with an index (SplitMix64 finaliser), so
// streams for different games, seats and purposes are independent.
func DeriveSeed(seed, i uint64) uint64 {
	z := seed + 0x9e3779b97f4a7c15*(i+1)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
