package cuda

import (
	"fmt"
	"math"
	"unsafe"
)

// MaxKernelArgs bounds the number of arguments of one kernel launch.
const MaxKernelArgs = 24

// Args marshals kernel arguments for cuLaunchKernel, whose kernelParams is
// a void** array: entry i points to the value of argument i, and the
// driver copies sizeof(param i) bytes from there at launch time.
//
// Each value sits in its own 8-byte slot of vals, stored little-endian in
// the slot's low bytes, so a pointer to the slot is a valid pointer to an
// int32, uint32, float32 (4 bytes read) or a CUdeviceptr / uint64 (8 bytes
// read) argument. The pointer array ptrs is filled by pointers() right
// before each launch from the Args' own address, so an Args that was
// copied by value never hands the driver pointers into the original.
//
// Memory safety: Args must stay alive and unmoved during the launch call.
// Go's heap is not moving; the launch passes &ptrs[0] through purego's
// reflect-based call, which makes every Args escape to the heap, and
// Ctx.Launch keeps it alive with runtime.KeepAlive until the driver has
// returned (the driver copies the values before cuLaunchKernel returns, so
// the Args may be reused for the next launch at once). The slots hold no
// Go pointers, and ptrs points only into the same object, which is how the
// GC sees it, so no pointer to Go memory is hidden from the collector.
type Args struct {
	vals [MaxKernelArgs]uint64
	ptrs [MaxKernelArgs]unsafe.Pointer
	n    int
	err  error
}

// Reset empties a for reuse.
func (a *Args) Reset() { a.n, a.err = 0, nil }

// Len is the number of arguments added.
func (a *Args) Len() int { return a.n }

func (a *Args) add(v uint64) *Args {
	if a.n >= MaxKernelArgs {
		if a.err == nil {
			a.err = fmt.Errorf("cuda: more than %d kernel arguments", MaxKernelArgs)
		}
		return a
	}
	a.vals[a.n] = v
	a.n++
	return a
}

// Ptr adds a device pointer argument (T* in the kernel).
func (a *Args) Ptr(p DevicePtr) *Args { return a.add(uint64(p)) }

// Int32 adds an int argument.
func (a *Args) Int32(v int32) *Args { return a.add(uint64(uint32(v))) }

// Int adds an int argument from a Go int; values outside int32 are an
// error reported at launch.
func (a *Args) Int(v int) *Args {
	if v < math.MinInt32 || v > math.MaxInt32 {
		if a.err == nil {
			a.err = fmt.Errorf("cuda: kernel argument %d = %d does not fit a C int", a.n, v)
		}
	}
	return a.Int32(int32(v))
}

// Uint32 adds an unsigned int argument.
func (a *Args) Uint32(v uint32) *Args { return a.add(uint64(v)) }

// Int64 adds a long long argument.
func (a *Args) Int64(v int64) *Args { return a.add(uint64(v)) }

// Float32 adds a float argument.
func (a *Args) Float32(v float32) *Args { return a.add(uint64(math.Float32bits(v))) }

// pointers fills ptrs with the address of each value slot and returns
// &ptrs[0] (the void** kernelParams), or nil when there are no arguments.
func (a *Args) pointers() (unsafe.Pointer, error) {
	if a.err != nil {
		return nil, a.err
	}
	if a.n == 0 {
		return nil, nil
	}
	for i := 0; i < a.n; i++ {
		a.ptrs[i] = unsafe.Pointer(&a.vals[i])
	}
	return unsafe.Pointer(&a.ptrs[0]), nil
}

// Grid1D returns the block count for n threads in blocks of block threads,
// capped at maxBlocks (kernels use grid-stride loops, so a capped grid
// still covers n).
func Grid1D(n, block, maxBlocks int) int {
	if n <= 0 {
		return 1
	}
	g := (n + block - 1) / block
	return max(1, min(g, maxBlocks))
}
