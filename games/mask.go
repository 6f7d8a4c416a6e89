package games

import (
	"iter"
	"math/bits"
	"math/rand/v2"
)

// Mask is a dense bitset over action ids. Make one per game with NewMask and
// reuse it; its methods never allocate (All's iterator aside, which the
// compiler keeps on the stack when ranged over directly).
type Mask []uint64

// NewMask returns an empty mask able to hold action ids in [0, n).
func NewMask(n int) Mask { return make(Mask, (n+63)/64) }

// Clear removes every action.
func (m Mask) Clear() { clear(m) }

// Set adds a.
func (m Mask) Set(a Action) { m[a>>6] |= 1 << (uint(a) & 63) }

// Unset removes a.
func (m Mask) Unset(a Action) { m[a>>6] &^= 1 << (uint(a) & 63) }

// Has reports whether a is in the mask. Out-of-range ids are absent.
func (m Mask) Has(a Action) bool {
	i := int(a >> 6)
	return a >= 0 && i < len(m) && m[i]&(1<<(uint(a)&63)) != 0
}

// Count returns the number of actions in the mask.
func (m Mask) Count() int {
	n := 0
	for _, w := range m {
		n += bits.OnesCount64(w)
	}
	return n
}

// Empty reports whether the mask holds no action.
func (m Mask) Empty() bool {
	for _, w := range m {
		if w != 0 {
			return false
		}
	}
	return true
}

// First returns the smallest action in the mask, or NoAction.
func (m Mask) First() Action {
	for i, w := range m {
		if w != 0 {
			return Action(i<<6 + bits.TrailingZeros64(w))
		}
	}
	return NoAction
}

// Nth returns the k-th smallest action (0-based), or NoAction if the mask
// holds k or fewer actions.
func (m Mask) Nth(k int) Action {
	for i, w := range m {
		c := bits.OnesCount64(w)
		if k >= c {
			k -= c
			continue
		}
		return Action(i<<6 + SelectBit(w, k))
	}
	return NoAction
}

// Random returns a uniformly chosen action of the mask, or NoAction when it
// is empty.
func (m Mask) Random(rng *rand.Rand) Action {
	n := m.Count()
	if n == 0 {
		return NoAction
	}
	return m.Nth(rng.IntN(n))
}

// CopyFrom makes m equal to src (same length).
func (m Mask) CopyFrom(src Mask) { copy(m, src) }

// All iterates over the actions in ascending order.
func (m Mask) All() iter.Seq[Action] {
	return func(yield func(Action) bool) {
		for i, w := range m {
			for w != 0 {
				if !yield(Action(i<<6 + bits.TrailingZeros64(w))) {
					return
				}
				w &= w - 1
			}
		}
	}
}

// AppendTo appends the actions in ascending order to dst.
func (m Mask) AppendTo(dst []Action) []Action {
	for i, w := range m {
		for w != 0 {
			dst = append(dst, Action(i<<6+bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	return dst
}
