package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"
)

// driverAPI holds the driver entry points. Every C int / enum is int32,
// CUdevice is int32, CUdeviceptr is uint64, size_t is uintptr and every
// opaque handle (CUcontext, CUstream, ...) is uintptr. Each field's comment
// names the symbol bound, which is the name Error.Call reports.
type driverAPI struct {
	cuInit                     func(flags uint32) int32
	cuDriverGetVersion         func(v *int32) int32
	cuDeviceGetCount           func(n *int32) int32
	cuDeviceGet                func(dev *int32, ordinal int32) int32
	cuDeviceGetName            func(name *byte, n int32, dev int32) int32
	cuDeviceTotalMem           func(bytes *uintptr, dev int32) int32 // cuDeviceTotalMem_v2
	cuDeviceGetAttribute       func(v *int32, attr int32, dev int32) int32
	cuDevicePrimaryCtxRetain   func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease  func(dev int32) int32 // cuDevicePrimaryCtxRelease_v2
	cuCtxSetCurrent            func(ctx uintptr) int32
	cuCtxSynchronize           func() int32
	cuMemAlloc                 func(p *uint64, size uintptr) int32                              // cuMemAlloc_v2
	cuMemFree                  func(p uint64) int32                                             // cuMemFree_v2
	cuMemAllocHost             func(p *unsafe.Pointer, size uintptr) int32                      // cuMemAllocHost_v2
	cuMemFreeHost              func(p unsafe.Pointer) int32                                     // cuMemFreeHost
	cuMemHostRegister          func(p unsafe.Pointer, size uintptr, flags uint32) int32         // cuMemHostRegister_v2
	cuMemHostUnregister        func(p unsafe.Pointer) int32                                     // cuMemHostUnregister
	cuMemcpyHtoD               func(dst uint64, src unsafe.Pointer, n uintptr) int32            // cuMemcpyHtoD_v2
	cuMemcpyDtoH               func(dst unsafe.Pointer, src uint64, n uintptr) int32            // cuMemcpyDtoH_v2
	cuMemcpyHtoDAsync          func(dst uint64, src unsafe.Pointer, n uintptr, s uintptr) int32 // cuMemcpyHtoDAsync_v2
	cuMemcpyDtoHAsync          func(dst unsafe.Pointer, src uint64, n uintptr, s uintptr) int32 // cuMemcpyDtoHAsync_v2
	cuMemsetD32Async           func(dst uint64, v uint32, n uintptr, s uintptr) int32
	cuStreamCreate             func(s *uintptr, flags uint32) int32
	cuStreamDestroy            func(s uintptr) int32 // cuStreamDestroy_v2
	cuStreamSynchronize        func(s uintptr) int32
	cuEventCreate              func(e *uintptr, flags uint32) int32
	cuEventDestroy             func(e uintptr) int32 // cuEventDestroy_v2
	cuEventRecord              func(e, s uintptr) int32
	cuEventSynchronize         func(e uintptr) int32
	cuEventElapsedTime         func(ms *float32, start, end uintptr) int32
	cuModuleLoadData           func(m *uintptr, image unsafe.Pointer) int32
	cuModuleUnload             func(m uintptr) int32
	cuModuleGetFunction        func(f *uintptr, m uintptr, name string) int32
	cuLaunchKernel             func(f uintptr, gx, gy, gz, bx, by, bz, shmem uint32, s uintptr, params, extra unsafe.Pointer) int32
	cuStreamBeginCapture       func(s uintptr, mode int32) int32 // cuStreamBeginCapture_v2
	cuStreamEndCapture         func(s uintptr, g *uintptr) int32
	cuGraphInstantiateWithFlag func(exec *uintptr, g uintptr, flags uint64) int32 // cuGraphInstantiateWithFlags
	cuGraphLaunch              func(exec, s uintptr) int32
	cuGraphExecDestroy         func(exec uintptr) int32
	cuGraphDestroy             func(g uintptr) int32
	cuGetErrorName             func(r int32, s **byte) int32
	cuGetErrorString           func(r int32, s **byte) int32
}

// symbol is one entry point to bind: the Go function variable and the C
// names to try in order (the first found is used).
type symbol struct {
	fptr  any
	names []string
}

func (a *driverAPI) symbols() []symbol {
	return []symbol{
		{&a.cuInit, []string{"cuInit"}},
		{&a.cuDriverGetVersion, []string{"cuDriverGetVersion"}},
		{&a.cuDeviceGetCount, []string{"cuDeviceGetCount"}},
		{&a.cuDeviceGet, []string{"cuDeviceGet"}},
		{&a.cuDeviceGetName, []string{"cuDeviceGetName"}},
		{&a.cuDeviceTotalMem, []string{"cuDeviceTotalMem_v2"}},
		{&a.cuDeviceGetAttribute, []string{"cuDeviceGetAttribute"}},
		{&a.cuDevicePrimaryCtxRetain, []string{"cuDevicePrimaryCtxRetain"}},
		{&a.cuDevicePrimaryCtxRelease, []string{"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}},
		{&a.cuCtxSetCurrent, []string{"cuCtxSetCurrent"}},
		{&a.cuCtxSynchronize, []string{"cuCtxSynchronize"}},
		{&a.cuMemAlloc, []string{"cuMemAlloc_v2"}},
		{&a.cuMemFree, []string{"cuMemFree_v2"}},
		{&a.cuMemAllocHost, []string{"cuMemAllocHost_v2"}},
		{&a.cuMemFreeHost, []string{"cuMemFreeHost"}},
		{&a.cuMemHostRegister, []string{"cuMemHostRegister_v2"}},
		{&a.cuMemHostUnregister, []string{"cuMemHostUnregister"}},
		{&a.cuMemcpyHtoD, []string{"cuMemcpyHtoD_v2"}},
		{&a.cuMemcpyDtoH, []string{"cuMemcpyDtoH_v2"}},
		{&a.cuMemcpyHtoDAsync, []string{"cuMemcpyHtoDAsync_v2"}},
		{&a.cuMemcpyDtoHAsync, []string{"cuMemcpyDtoHAsync_v2"}},
		{&a.cuMemsetD32Async, []string{"cuMemsetD32Async"}},
		{&a.cuStreamCreate, []string{"cuStreamCreate"}},
		{&a.cuStreamDestroy, []string{"cuStreamDestroy_v2"}},
		{&a.cuStreamSynchronize, []string{"cuStreamSynchronize"}},
		{&a.cuEventCreate, []string{"cuEventCreate"}},
		{&a.cuEventDestroy, []string{"cuEventDestroy_v2"}},
		{&a.cuEventRecord, []string{"cuEventRecord"}},
		{&a.cuEventSynchronize, []string{"cuEventSynchronize"}},
		{&a.cuEventElapsedTime, []string{"cuEventElapsedTime", "cuEventElapsedTime_v2"}},
		{&a.cuModuleLoadData, []string{"cuModuleLoadData"}},
		{&a.cuModuleUnload, []string{"cuModuleUnload"}},
		{&a.cuModuleGetFunction, []string{"cuModuleGetFunction"}},
		{&a.cuLaunchKernel, []string{"cuLaunchKernel"}},
		{&a.cuStreamBeginCapture, []string{"cuStreamBeginCapture_v2"}},
		{&a.cuStreamEndCapture, []string{"cuStreamEndCapture"}},
		{&a.cuGraphInstantiateWithFlag, []string{"cuGraphInstantiateWithFlags"}},
		{&a.cuGraphLaunch, []string{"cuGraphLaunch"}},
		{&a.cuGraphExecDestroy, []string{"cuGraphExecDestroy"}},
		{&a.cuGraphDestroy, []string{"cuGraphDestroy"}},
		{&a.cuGetErrorName, []string{"cuGetErrorName"}},
		{&a.cuGetErrorString, []string{"cuGetErrorString"}},
	}
}

// bindAll binds every symbol from lib or reports the first that is missing.
func bindAll(lib uintptr, path string, syms []symbol) error {
	for _, s := range syms {
		found := false
		for _, n := range s.names {
			sym, err := dlsym(lib, n)
			if err == nil && sym != 0 {
				registerFunc(s.fptr, sym)
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("cuda: %s has no symbol %s (library too old?)", path, s.names[0])
		}
	}
	return nil
}

// Libs is the set of loaded NVIDIA libraries. The driver is required;
// NVRTC and cuBLAS are optional and their load errors are kept.
type Libs struct {
	DriverPath    string
	DriverVersion int // cuDriverGetVersion: 1000*major + 10*minor (13000 = 13.0)
	NVRTCPath     string
	NVRTCVersion  [2]int // major, minor
	NVRTCErr      error  // why NVRTC is unavailable, or nil
	// NVRTCChoice says which NVRTC was chosen for the driver and why,
	// naming those passed over and the builtins library loaded beside it.
	NVRTCChoice   string
	CublasPath    string
	CublasVersion int   // cublasGetProperty major*10000+minor*100+patch
	CublasErr     error // why cuBLAS is unavailable, or nil

	drv    driverAPI
	nvrtc  *nvrtcAPI
	cublas *cublasAPI
}

var (
	loadOnce sync.Once
	loaded   *Libs
	loadErr  error
)

func defaultEnv() searchEnv {
	return searchEnv{
		getenv: os.Getenv,
		glob:   filepath.Glob,
		exists: func(p string) bool { _, err := os.Stat(p); return err == nil },
		open:   dlopen,
	}
}

// Load finds and loads the libraries (once per process; later calls return
// the first result) and initialises the driver. Its error for a machine
// without a driver matches ErrNoDriver and lists every path tried.
func Load() (*Libs, error) {
	loadOnce.Do(func() { loaded, loadErr = load(defaultEnv()) })
	return loaded, loadErr
}

func load(env searchEnv) (*Libs, error) {
	l := &Libs{}
	h, path, err := openLib(specDriver, env)
	if err != nil {
		return nil, err
	}
	l.DriverPath = path
	if err := bindAll(h, path, l.drv.symbols()); err != nil {
		return nil, err
	}
	if err := l.check("cuInit", l.drv.cuInit(0)); err != nil {
		return nil, err
	}
	var v int32
	if err := l.check("cuDriverGetVersion", l.drv.cuDriverGetVersion(&v)); err != nil {
		return nil, err
	}
	l.DriverVersion = int(v)
	l.NVRTCErr = l.loadNVRTC(env)
	l.CublasErr = l.loadCublas(env)
	return l, nil
}

// check turns a CUresult into nil or an *Error naming call.
func (l *Libs) check(call string, r int32) error {
	if r == 0 {
		return nil
	}
	e := &Error{Call: call, Code: int(r), Name: CUResultName(int(r))}
	if l.drv.cuGetErrorName != nil {
		var p *byte
		if l.drv.cuGetErrorName(r, &p) == 0 && p != nil {
			e.Name = goString(p)
		}
	}
	if l.drv.cuGetErrorString != nil {
		var p *byte
		if l.drv.cuGetErrorString(r, &p) == 0 && p != nil {
			e.Desc = goString(p)
		}
	}
	return e
}

// goString copies a NUL-terminated C string (at most 4096 bytes).
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for i := 0; i < 4096; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// cString returns s as a NUL-terminated byte slice (Go memory; keep it
// alive across the C call that reads it).
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}
