package solver

// table is a fixed-size transposition table with exact keys. A position key
// (49 bits, connect4.Position.Key) is scrambled by an odd multiplier modulo
// 2^49, a bijection; the top tableBits of the result pick the slot and the
// other checkBits are stored in it, so a hit proves the key is the same.
// Each slot is one uint32: the check bits above a 7-bit value (0 = empty).
// It never allocates after creation.
type table struct {
	slots *[tableSize]uint32
}

const (
	keyBits   = 49
	tableBits = 24
	tableSize = 1 << tableBits
	checkBits = keyBits - tableBits // 25: check + 7-bit value fit in 32 bits
	valueBits = 7
	keyMask   = 1<<keyBits - 1
	// mixer is an odd constant (so multiplication mod 2^49 is invertible).
	mixer = 0x9e3779b97f4a7c15
)

func (t table) reset() { clear(t.slots[:]) }

func slot(key uint64) (idx uint64, check uint32) {
	h := (key * mixer) & keyMask
	return h >> checkBits, uint32(h & (1<<checkBits - 1))
}

// put stores val (1..127) for key, replacing whatever the slot held.
func (t table) put(key uint64, val uint8) {
	idx, check := slot(key)
	t.slots[idx&(tableSize-1)] = check<<valueBits | uint32(val)
}

// get returns the value stored for key, or 0 if none.
func (t table) get(key uint64) uint8 {
	idx, check := slot(key)
	e := t.slots[idx&(tableSize-1)]
	if e>>valueBits != check {
		return 0
	}
	return uint8(e & (1<<valueBits - 1))
}

// prefetch starts loading key's slot into the cache; the loads of all
// children of a node then overlap with each other and with move ordering
// instead of stalling one by one in the recursion.
func (t table) prefetch(key uint64) {
	idx, _ := slot(key)
	prefetch(&t.slots[idx&(tableSize-1)])
}
