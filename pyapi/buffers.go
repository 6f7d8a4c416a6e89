package pyapi

import (
	"unsafe"
)

// Python's arrays arrive as byte slices over numpy's memory; these views
// reinterpret them. Numpy aligns its allocations to at least 16 bytes;
// a misaligned or wrongly sized buffer is a ValueError naming it.

// bufSpec names one buffer an object needs: its name (as Python's
// argument), element size and element count.
type bufSpec struct {
	name string
	size int // bytes per element
	n    int // elements
}

// checkBufs checks bufs against want, in order.
func checkBufs(kind string, bufs [][]byte, want []bufSpec) error {
	if len(bufs) != len(want) {
		return valueErrorf("%s takes %d buffers, got %d", kind, len(want), len(bufs))
	}
	for i, w := range want {
		b := bufs[i]
		if len(b) != w.size*w.n {
			return valueErrorf("%s: buffer %s has %d bytes, want %d elements of %d bytes = %d (allocate it with the shape and dtype the package documents)",
				kind, w.name, len(b), w.n, w.size, w.size*w.n)
		}
		if len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%uintptr(w.size) != 0 {
			return valueErrorf("%s: buffer %s is not aligned to %d bytes", kind, w.name, w.size)
		}
	}
	return nil
}

func f32s(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func i32s(b []byte) []int32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func i64s(b []byte) []int64 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// bools views a numpy bool array (one byte per element, 0 or 1: numpy
// writes no other value) as Go bools.
func bools(b []byte) []bool {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*bool)(unsafe.Pointer(&b[0])), len(b))
}
