package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Opaque handles. A zero Stream is the legacy default stream.
type (
	DevicePtr uint64  // CUdeviceptr
	Stream    uintptr // CUstream
	Event     uintptr // CUevent
	Module    uintptr // CUmodule
	Function  uintptr // CUfunction
	GraphExec uintptr // CUgraphExec
)

// Device attributes (CUdevice_attribute values from cuda.h).
const (
	attrMultiprocessorCount = 16
	attrComputeCapMajor     = 75
	attrComputeCapMinor     = 76
)

// Stream and capture flags from cuda.h.
const (
	streamNonBlocking      = 1 // CU_STREAM_NON_BLOCKING
	captureModeThreadLocal = 1 // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
	eventDefault           = 0 // CU_EVENT_DEFAULT (timing enabled)
	legacyStream           = 0 // the legacy default stream's handle
)

// DeviceInfo describes an opened GPU.
type DeviceInfo struct {
	Ordinal       int    `json:"ordinal"`
	Name          string `json:"name"`
	Major         int    `json:"cc_major"` // compute capability
	Minor         int    `json:"cc_minor"`
	SMs           int    `json:"sms"`
	TotalMem      uint64 `json:"total_mem_bytes"`
	DriverVersion int    `json:"driver_version"`
}

// Arch is the compute capability as one number (9.0 -> 90).
func (i DeviceInfo) Arch() int { return i.Major*10 + i.Minor }

// Device is one GPU with its primary context current on a dedicated,
// locked OS thread. Its methods are safe for concurrent use.
type Device struct {
	libs *Libs
	info DeviceInfo
	dev  int32
	ctx  uintptr

	work      chan func()
	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
	c         *Ctx
}

// Ctx gives access to the device's API on the device thread. It is only
// valid inside the closure passed to Device.Do.
type Ctx struct {
	d    *Device
	args Args // scratch for Launch callers that want it (see Ctx.Args)
}

// DeviceCount loads the driver and returns the number of CUDA devices.
func DeviceCount() (int, error) {
	l, err := Load()
	if err != nil {
		return 0, err
	}
	var n int32
	if err := l.check("cuDeviceGetCount", l.drv.cuDeviceGetCount(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Open loads the libraries and opens device ordinal: it retains the primary
// context and starts the device thread.
func Open(ordinal int) (*Device, error) {
	l, err := Load()
	if err != nil {
		return nil, err
	}
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: device %d does not exist (%d devices)", ordinal, n)
	}
	d := &Device{libs: l, work: make(chan func()), closed: make(chan struct{})}
	d.c = &Ctx{d: d}
	ready := make(chan error, 1)
	go d.loop(ordinal, ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return d, nil
}

// loop is the device thread: it locks itself to an OS thread, makes the
// primary context current and runs submitted closures until Close.
func (d *Device) loop(ordinal int, ready chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	l := d.libs
	err := func() error {
		if err := l.check("cuDeviceGet", l.drv.cuDeviceGet(&d.dev, int32(ordinal))); err != nil {
			return err
		}
		if err := l.check("cuDevicePrimaryCtxRetain", l.drv.cuDevicePrimaryCtxRetain(&d.ctx, d.dev)); err != nil {
			return err
		}
		if err := l.check("cuCtxSetCurrent", l.drv.cuCtxSetCurrent(d.ctx)); err != nil {
			l.drv.cuDevicePrimaryCtxRelease(d.dev)
			return err
		}
		return d.queryInfo(ordinal)
	}()
	ready <- err
	if err != nil {
		return
	}
	for f := range d.work {
		f()
	}
	// Closing: release the context on this thread.
	d.closeErr = l.check("cuDevicePrimaryCtxRelease_v2", l.drv.cuDevicePrimaryCtxRelease(d.dev))
	close(d.closed)
}

func (d *Device) queryInfo(ordinal int) error {
	l := d.libs
	var name [256]byte
	if err := l.check("cuDeviceGetName", l.drv.cuDeviceGetName(&name[0], int32(len(name)), d.dev)); err != nil {
		return err
	}
	attr := func(a int32) (int, error) {
		var v int32
		err := l.check("cuDeviceGetAttribute", l.drv.cuDeviceGetAttribute(&v, a, d.dev))
		return int(v), err
	}
	var mem uintptr
	if err := l.check("cuDeviceTotalMem_v2", l.drv.cuDeviceTotalMem(&mem, d.dev)); err != nil {
		return err
	}
	maj, err1 := attr(attrComputeCapMajor)
	mnr, err2 := attr(attrComputeCapMinor)
	sms, err3 := attr(attrMultiprocessorCount)
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	d.info = DeviceInfo{Ordinal: ordinal, Name: goString(&name[0]), Major: maj, Minor: mnr, SMs: sms,
		TotalMem: uint64(mem), DriverVersion: l.DriverVersion}
	return nil
}

// Info describes the device.
func (d *Device) Info() DeviceInfo { return d.info }

// Libs returns the loaded libraries.
func (d *Device) Libs() *Libs { return d.libs }

// ErrClosed is returned by Do after Close.
var ErrClosed = errors.New("cuda: device is closed")

// Do runs f on the device thread with the context current and returns its
// error. A panic in f is recovered and returned as an error. Calls from
// many goroutines run one at a time in submission order. f must not call
// Do (that would deadlock).
func (d *Device) Do(f func(c *Ctx) error) (err error) {
	done := make(chan struct{})
	job := func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("cuda: panic on device thread: %v", r)
			}
		}()
		err = f(d.c)
	}
	select {
	case <-d.closed:
		return ErrClosed
	default:
	}
	defer func() {
		if recover() != nil { // send on closed channel: Close raced with Do
			err = ErrClosed
		}
	}()
	d.work <- job
	<-done
	return err
}

// Close stops the device thread and releases the primary context. Memory
// and modules still allocated are freed by the driver with the context.
func (d *Device) Close() error {
	d.closeOnce.Do(func() {
		close(d.work)
		<-d.closed
	})
	return d.closeErr
}

// Device returns the device this Ctx belongs to.
func (c *Ctx) Device() *Device { return c.d }

func (c *Ctx) check(call string, r int32) error { return c.d.libs.check(call, r) }

// Synchronize waits for all work on the context.
func (c *Ctx) Synchronize() error {
	return c.check("cuCtxSynchronize", c.d.libs.drv.cuCtxSynchronize())
}

// Alloc allocates bytes of device memory (uninitialised).
func (c *Ctx) Alloc(bytes int) (DevicePtr, error) {
	if bytes <= 0 {
		return 0, fmt.Errorf("cuda: Alloc(%d): size must be positive", bytes)
	}
	var p uint64
	if err := c.check("cuMemAlloc_v2", c.d.libs.drv.cuMemAlloc(&p, uintptr(bytes))); err != nil {
		return 0, fmt.Errorf("%w (%d bytes)", err, bytes)
	}
	return DevicePtr(p), nil
}

// Free releases device memory (a zero pointer is ignored).
func (c *Ctx) Free(p DevicePtr) error {
	if p == 0 {
		return nil
	}
	return c.check("cuMemFree_v2", c.d.libs.drv.cuMemFree(uint64(p)))
}

// HostBuffer is page-locked host memory, the only host memory async copies
// may use (the GPU reads it by DMA after the call returns, so it must not
// be Go memory the runtime could reuse): from AllocHost, or Go memory
// page-locked by RegisterHost, which the buffer keeps referenced.
type HostBuffer struct {
	p     unsafe.Pointer
	bytes int
	goMem []float32 // RegisterHost's memory (nil for AllocHost's)
}

// AllocHost allocates bytes of pinned host memory.
func (c *Ctx) AllocHost(bytes int) (*HostBuffer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("cuda: AllocHost(%d): size must be positive", bytes)
	}
	var p unsafe.Pointer
	if err := c.check("cuMemAllocHost_v2", c.d.libs.drv.cuMemAllocHost(&p, uintptr(bytes))); err != nil {
		return nil, err
	}
	return &HostBuffer{p: p, bytes: bytes}, nil
}

// RegisterHost page-locks Go memory, so that async copies read or write it
// directly (no staging copy through a buffer of AllocHost). buf should
// start on a page boundary and own the rest of its last page
// (nets.PageAligned makes such buffers): the driver locks whole pages. The returned buffer keeps buf referenced
// until FreeHost, which unlocks it; Go never moves heap memory, so the
// address stays valid. Registration is slow (milliseconds): do it once
// for a long-lived buffer.
func (c *Ctx) RegisterHost(buf []float32) (*HostBuffer, error) {
	if len(buf) == 0 {
		return nil, errors.New("cuda: RegisterHost: empty buffer")
	}
	p := unsafe.Pointer(&buf[0])
	if err := c.check("cuMemHostRegister_v2", c.d.libs.drv.cuMemHostRegister(p, uintptr(4*len(buf)), 0)); err != nil {
		return nil, err
	}
	return &HostBuffer{p: p, bytes: 4 * len(buf), goMem: buf}, nil
}

// FreeHost releases pinned memory (or unlocks RegisterHost's); h must not
// be used afterwards.
func (c *Ctx) FreeHost(h *HostBuffer) error {
	if h == nil || h.p == nil {
		return nil
	}
	var err error
	if h.goMem != nil {
		err = c.check("cuMemHostUnregister", c.d.libs.drv.cuMemHostUnregister(h.p))
	} else {
		err = c.check("cuMemFreeHost", c.d.libs.drv.cuMemFreeHost(h.p))
	}
	h.p, h.bytes, h.goMem = nil, 0, nil
	return err
}

// Contains reports whether s lies inside h and, if so, its byte offset
// (for CopyHtoDAsync and CopyDtoHAsync).
func (h *HostBuffer) Contains(s []float32) (off int, ok bool) {
	if h == nil || h.p == nil || len(s) == 0 {
		return 0, false
	}
	lo, p := uintptr(h.p), uintptr(unsafe.Pointer(&s[0]))
	if p < lo || p+uintptr(4*len(s)) > lo+uintptr(h.bytes) {
		return 0, false
	}
	return int(p - lo), true
}

// Float32s views the buffer as float32s (valid until FreeHost).
func (h *HostBuffer) Float32s() []float32 { return unsafe.Slice((*float32)(h.p), h.bytes/4) }

// Bytes is the buffer's size.
func (h *HostBuffer) Bytes() int { return h.bytes }

// CopyHtoD copies src (Go memory) to dst and returns when the data is on
// the device, so that work on any stream may read it.
//
// cuMemcpyHtoD from pageable memory runs on the legacy default stream and
// may return before its DMA has finished; non-blocking streams (all of
// this package's) do not wait for the legacy stream. CopyHtoD therefore
// synchronises the legacy stream after the copy. It is meant for setup
// (weights, test data); per-batch copies use CopyHtoDAsync from pinned
// memory on the stream that consumes them.
func (c *Ctx) CopyHtoD(dst DevicePtr, src []float32) error {
	if len(src) == 0 {
		return nil
	}
	err := c.check("cuMemcpyHtoD_v2", c.d.libs.drv.cuMemcpyHtoD(uint64(dst), unsafe.Pointer(&src[0]), uintptr(4*len(src))))
	runtime.KeepAlive(src)
	if err != nil {
		return err
	}
	return c.check("cuStreamSynchronize", c.d.libs.drv.cuStreamSynchronize(legacyStream))
}

// CopyDtoH copies len(dst) float32s from src synchronously. It runs on
// the legacy default stream, which does not wait for non-blocking
// streams: synchronise the stream that wrote src first.
func (c *Ctx) CopyDtoH(dst []float32, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	err := c.check("cuMemcpyDtoH_v2", c.d.libs.drv.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), uint64(src), uintptr(4*len(dst))))
	runtime.KeepAlive(dst)
	return err
}

// CopyHtoDAsync copies bytes from pinned src (at byte offset off) to dst on s.
func (c *Ctx) CopyHtoDAsync(dst DevicePtr, src *HostBuffer, off, bytes int, s Stream) error {
	if off < 0 || bytes < 0 || off+bytes > src.bytes {
		return fmt.Errorf("cuda: CopyHtoDAsync: range [%d, %d) outside host buffer of %d bytes", off, off+bytes, src.bytes)
	}
	return c.check("cuMemcpyHtoDAsync_v2", c.d.libs.drv.cuMemcpyHtoDAsync(uint64(dst), unsafe.Add(src.p, off), uintptr(bytes), uintptr(s)))
}

// CopyDtoHAsync copies bytes from src to pinned dst (at byte offset off) on s.
func (c *Ctx) CopyDtoHAsync(dst *HostBuffer, off int, src DevicePtr, bytes int, s Stream) error {
	if off < 0 || bytes < 0 || off+bytes > dst.bytes {
		return fmt.Errorf("cuda: CopyDtoHAsync: range [%d, %d) outside host buffer of %d bytes", off, off+bytes, dst.bytes)
	}
	return c.check("cuMemcpyDtoHAsync_v2", c.d.libs.drv.cuMemcpyDtoHAsync(unsafe.Add(dst.p, off), uint64(src), uintptr(bytes), uintptr(s)))
}

// MemsetD32Async sets n 32-bit words at dst to v on s.
func (c *Ctx) MemsetD32Async(dst DevicePtr, v uint32, n int, s Stream) error {
	return c.check("cuMemsetD32Async", c.d.libs.drv.cuMemsetD32Async(uint64(dst), v, uintptr(n), uintptr(s)))
}

// NewStream creates a non-blocking stream (one that does not synchronise
// with the legacy default stream; graph capture needs such a stream).
func (c *Ctx) NewStream() (Stream, error) {
	var s uintptr
	err := c.check("cuStreamCreate", c.d.libs.drv.cuStreamCreate(&s, streamNonBlocking))
	return Stream(s), err
}

// DestroyStream destroys s.
func (c *Ctx) DestroyStream(s Stream) error {
	if s == 0 {
		return nil
	}
	return c.check("cuStreamDestroy_v2", c.d.libs.drv.cuStreamDestroy(uintptr(s)))
}

// SyncStream waits for s.
func (c *Ctx) SyncStream(s Stream) error {
	return c.check("cuStreamSynchronize", c.d.libs.drv.cuStreamSynchronize(uintptr(s)))
}

// NewEvent creates a timing event.
func (c *Ctx) NewEvent() (Event, error) {
	var e uintptr
	err := c.check("cuEventCreate", c.d.libs.drv.cuEventCreate(&e, eventDefault))
	return Event(e), err
}

// DestroyEvent destroys e.
func (c *Ctx) DestroyEvent(e Event) error {
	if e == 0 {
		return nil
	}
	return c.check("cuEventDestroy_v2", c.d.libs.drv.cuEventDestroy(uintptr(e)))
}

// Record records e on s.
func (c *Ctx) Record(e Event, s Stream) error {
	return c.check("cuEventRecord", c.d.libs.drv.cuEventRecord(uintptr(e), uintptr(s)))
}

// ElapsedMs waits for end and returns the milliseconds between two
// recorded events.
func (c *Ctx) ElapsedMs(start, end Event) (float32, error) {
	if err := c.check("cuEventSynchronize", c.d.libs.drv.cuEventSynchronize(uintptr(end))); err != nil {
		return 0, err
	}
	var ms float32
	err := c.check("cuEventElapsedTime", c.d.libs.drv.cuEventElapsedTime(&ms, uintptr(start), uintptr(end)))
	return ms, err
}

// LoadModule loads a CUBIN or NUL-terminated PTX image.
func (c *Ctx) LoadModule(image []byte) (Module, error) {
	if len(image) == 0 {
		return 0, errors.New("cuda: LoadModule: empty image")
	}
	var m uintptr
	err := c.check("cuModuleLoadData", c.d.libs.drv.cuModuleLoadData(&m, unsafe.Pointer(&image[0])))
	runtime.KeepAlive(image)
	return Module(m), err
}

// UnloadModule unloads m.
func (c *Ctx) UnloadModule(m Module) error {
	return c.check("cuModuleUnload", c.d.libs.drv.cuModuleUnload(uintptr(m)))
}

// Function looks up an extern "C" kernel in m.
func (c *Ctx) Function(m Module, name string) (Function, error) {
	var f uintptr
	if err := c.check("cuModuleGetFunction", c.d.libs.drv.cuModuleGetFunction(&f, uintptr(m), name)); err != nil {
		return 0, fmt.Errorf("%w (kernel %q)", err, name)
	}
	return Function(f), nil
}

// Dim3 is a grid or block size.
type Dim3 struct{ X, Y, Z int }

// Launch enqueues f on s with the given grid, block, dynamic shared memory
// and arguments (see Args for the memory rules). The driver copies the
// argument values before Launch returns, so args may be reused at once.
func (c *Ctx) Launch(f Function, grid, block Dim3, shmem int, s Stream, args *Args) error {
	fix := func(d Dim3) Dim3 {
		if d.Y == 0 {
			d.Y = 1
		}
		if d.Z == 0 {
			d.Z = 1
		}
		return d
	}
	grid, block = fix(grid), fix(block)
	var params unsafe.Pointer
	if args != nil {
		p, err := args.pointers()
		if err != nil {
			return err
		}
		params = p
	}
	r := c.d.libs.drv.cuLaunchKernel(uintptr(f), uint32(grid.X), uint32(grid.Y), uint32(grid.Z),
		uint32(block.X), uint32(block.Y), uint32(block.Z), uint32(shmem), uintptr(s), params, nil)
	runtime.KeepAlive(args)
	return c.check("cuLaunchKernel", r)
}

// Args returns the Ctx's scratch Args, reset. It is valid until the next
// call of Args on the device thread; it saves an allocation per launch.
func (c *Ctx) Args() *Args {
	c.args.Reset()
	return &c.args
}

// Capture records every operation that fn enqueues on s into a CUDA graph
// (no work runs during capture) and returns the instantiated graph. s must
// be a stream from NewStream. Replaying the graph with GraphLaunch repeats
// exactly those operations with the same pointers and sizes, which is why
// graphs are kept per fixed batch shape.
func (c *Ctx) Capture(s Stream, fn func() error) (GraphExec, error) {
	drv := &c.d.libs.drv
	if err := c.check("cuStreamBeginCapture_v2", drv.cuStreamBeginCapture(uintptr(s), captureModeThreadLocal)); err != nil {
		return 0, err
	}
	ferr := fn()
	var g uintptr
	eerr := c.check("cuStreamEndCapture", drv.cuStreamEndCapture(uintptr(s), &g))
	if ferr != nil || eerr != nil {
		if g != 0 {
			drv.cuGraphDestroy(g)
		}
		return 0, errors.Join(ferr, eerr)
	}
	defer drv.cuGraphDestroy(g) // the executable graph keeps what it needs
	var exec uintptr
	if err := c.check("cuGraphInstantiateWithFlags", drv.cuGraphInstantiateWithFlag(&exec, g, 0)); err != nil {
		return 0, err
	}
	return GraphExec(exec), nil
}

// GraphLaunch enqueues a captured graph on s.
func (c *Ctx) GraphLaunch(g GraphExec, s Stream) error {
	return c.check("cuGraphLaunch", c.d.libs.drv.cuGraphLaunch(uintptr(g), uintptr(s)))
}

// DestroyGraph frees a captured graph.
func (c *Ctx) DestroyGraph(g GraphExec) error {
	if g == 0 {
		return nil
	}
	return c.check("cuGraphExecDestroy", c.d.libs.drv.cuGraphExecDestroy(uintptr(g)))
}
