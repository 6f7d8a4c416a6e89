//go:build linux && amd64

package kernels

import (
	"syscall"
	"unsafe"
)

// amxPermit asks Linux for the AMX tile state (arch_prctl
// ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, kernel 5.16 and later) and
// reports whether this process now has it. The permission is per
// process; the kernel refuses it when a thread's signal stack is too
// small for the larger signal frame (Go's are 32 KiB, enough).
func amxPermit() bool {
	const (
		archGetXcompPerm  = 0x1022
		archReqXcompPerm  = 0x1023
		xfeatureXtiledata = 18
	)
	if _, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0); errno != 0 {
		return false
	}
	var mask uint64
	if _, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archGetXcompPerm, uintptr(unsafe.Pointer(&mask)), 0); errno != 0 {
		return false
	}
	return mask&(1<<xfeatureXtiledata) != 0
}
