package sushigo

import "testing"

// pairTable against its definition: for every set of present types, the
// chopsticks actions of exactly the pairs of distinct present types.
func TestPairTable(t *testing.T) {
	for present := range 1 << NumCards {
		var want [2]uint64
		for a := range NumCards {
			for b := a + 1; b < NumCards; b++ {
				if present&(1<<a) != 0 && present&(1<<b) != 0 {
					id := pairAct[a][b]
					want[id>>6] |= 1 << (uint(id) & 63)
				}
			}
		}
		if pairTable[present] != want {
			t.Fatalf("pairTable[%#x] = %x, want %x", present, pairTable[present], want)
		}
	}
}
