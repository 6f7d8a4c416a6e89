//go:build !linux

package solver

// allocSlots allocates the table on the Go heap.
func allocSlots(*Solver) *[tableSize]uint32 { return new([tableSize]uint32) }
