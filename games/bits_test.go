package games

import (
	"math/bits"
	"testing"
)

// SelectBit against the obvious scan, on edge words and random words.
func TestSelectBit(t *testing.T) {
	rng := NewRand(5)
	words := []uint64{1, 1 << 63, ^uint64(0), 0x8000000000000001, 0x00ff00ff00ff00ff, 0xf0}
	for range 2000 {
		words = append(words, rng.Uint64()&rng.Uint64())
	}
	for _, w := range words {
		k := 0
		for i := range 64 {
			if w>>i&1 == 0 {
				continue
			}
			if got := SelectBit(w, k); got != i {
				t.Fatalf("SelectBit(%#x, %d) = %d, want %d", w, k, got, i)
			}
			k++
		}
		if k != bits.OnesCount64(w) {
			t.Fatal("scan miscounted")
		}
	}
}
