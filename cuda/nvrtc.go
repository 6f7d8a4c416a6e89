package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"unsafe"
)

// nvrtcAPI holds the NVRTC entry points (nvrtcResult is int32,
// nvrtcProgram is uintptr).
type nvrtcAPI struct {
	nvrtcVersion              func(major, minor *int32) int32
	nvrtcGetNumSupportedArchs func(n *int32) int32
	nvrtcGetSupportedArchs    func(archs *int32) int32
	nvrtcCreateProgram        func(prog *uintptr, src, name string, numHeaders int32, headers, includeNames unsafe.Pointer) int32
	nvrtcCompileProgram       func(prog uintptr, numOptions int32, options unsafe.Pointer) int32
	nvrtcGetProgramLogSize    func(prog uintptr, n *uintptr) int32
	nvrtcGetProgramLog        func(prog uintptr, log *byte) int32
	nvrtcGetPTXSize           func(prog uintptr, n *uintptr) int32
	nvrtcGetPTX               func(prog uintptr, ptx *byte) int32
	nvrtcGetCUBINSize         func(prog uintptr, n *uintptr) int32
	nvrtcGetCUBIN             func(prog uintptr, cubin *byte) int32
	nvrtcDestroyProgram       func(prog *uintptr) int32
}

func (a *nvrtcAPI) symbols() []symbol {
	return []symbol{
		{&a.nvrtcVersion, []string{"nvrtcVersion"}},
		{&a.nvrtcGetNumSupportedArchs, []string{"nvrtcGetNumSupportedArchs"}},
		{&a.nvrtcGetSupportedArchs, []string{"nvrtcGetSupportedArchs"}},
		{&a.nvrtcCreateProgram, []string{"nvrtcCreateProgram"}},
		{&a.nvrtcCompileProgram, []string{"nvrtcCompileProgram"}},
		{&a.nvrtcGetProgramLogSize, []string{"nvrtcGetProgramLogSize"}},
		{&a.nvrtcGetProgramLog, []string{"nvrtcGetProgramLog"}},
		{&a.nvrtcGetPTXSize, []string{"nvrtcGetPTXSize"}},
		{&a.nvrtcGetPTX, []string{"nvrtcGetPTX"}},
		{&a.nvrtcGetCUBINSize, []string{"nvrtcGetCUBINSize"}},
		{&a.nvrtcGetCUBIN, []string{"nvrtcGetCUBIN"}},
		{&a.nvrtcDestroyProgram, []string{"nvrtcDestroyProgram"}},
	}
}

func (l *Libs) loadNVRTC(env searchEnv) error {
	h, path, err := openLib(specNVRTC, env)
	if err != nil {
		return err
	}
	api := &nvrtcAPI{}
	if err := bindAll(h, path, api.symbols()); err != nil {
		return err
	}
	var maj, mnr int32
	if err := nvrtcCheck("nvrtcVersion", api.nvrtcVersion(&maj, &mnr)); err != nil {
		return err
	}
	l.NVRTCPath, l.NVRTCVersion, l.nvrtc = path, [2]int{int(maj), int(mnr)}, api
	return nil
}

func nvrtcCheck(call string, r int32) error {
	if r == 0 {
		return nil
	}
	return &Error{Call: call, Code: int(r), Name: NVRTCResultName(int(r))}
}

// SupportedArchs returns the virtual architectures NVRTC can compile for
// (e.g. 75, 80, 86, 89, 90, 100, 120), ascending.
func (l *Libs) SupportedArchs() ([]int, error) {
	if l.nvrtc == nil {
		return nil, fmt.Errorf("cuda: NVRTC unavailable: %w", l.NVRTCErr)
	}
	var n int32
	if err := nvrtcCheck("nvrtcGetNumSupportedArchs", l.nvrtc.nvrtcGetNumSupportedArchs(&n)); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, errors.New("cuda: NVRTC reports no supported architectures")
	}
	a := make([]int32, n)
	if err := nvrtcCheck("nvrtcGetSupportedArchs", l.nvrtc.nvrtcGetSupportedArchs(&a[0])); err != nil {
		return nil, err
	}
	out := make([]int, n)
	for i, v := range a {
		out[i] = int(v)
	}
	slices.Sort(out)
	return out, nil
}

// Target is what NVRTC compiles for.
type Target struct {
	Arch  int  // e.g. 90 for compute capability 9.0
	Cubin bool // true: real architecture sm_XX, output CUBIN; false: virtual compute_XX, output PTX
}

// ChooseTarget picks the compilation target for a device of compute
// capability deviceArch given NVRTC's supported architectures: a CUBIN for
// the device itself when NVRTC supports it, else PTX for the newest
// supported architecture below it (the driver JIT-compiles PTX for newer
// GPUs). A device older than every supported architecture is an error.
func ChooseTarget(deviceArch int, supported []int) (Target, error) {
	best := -1
	for _, a := range supported {
		if a == deviceArch {
			return Target{Arch: a, Cubin: true}, nil
		}
		if a < deviceArch && a > best {
			best = a
		}
	}
	if best < 0 {
		return Target{}, fmt.Errorf("cuda: NVRTC supports architectures %v, none at or below the device's sm_%d", supported, deviceArch)
	}
	return Target{Arch: best}, nil
}

// NVRTCOptions returns the compiler options for t. Fast math is off so that
// expf/tanhf keep full float precision (the CPU reference comparison
// depends on it); FMA contraction stays on (NVRTC's default).
func NVRTCOptions(t Target) []string {
	arch := fmt.Sprintf("--gpu-architecture=compute_%d", t.Arch)
	if t.Cubin {
		arch = fmt.Sprintf("--gpu-architecture=sm_%d", t.Arch)
	}
	return []string{arch, "--std=c++17", "--fmad=true"}
}

// cStringArray builds a const char* const* array for C. The returned
// keep value owns the memory and must stay alive (runtime.KeepAlive)
// until the C call returns.
func cStringArray(ss []string) (arr unsafe.Pointer, keep any) {
	if len(ss) == 0 {
		return nil, nil
	}
	bufs := make([][]byte, len(ss))
	ptrs := make([]*byte, len(ss))
	for i, s := range ss {
		bufs[i] = cString(s)
		ptrs[i] = &bufs[i][0]
	}
	return unsafe.Pointer(&ptrs[0]), [2]any{bufs, ptrs}
}

// CompileError is a failed NVRTC compilation with the compiler's log.
type CompileError struct {
	Name, Log string
	Options   []string
	Err       error
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("cuda: NVRTC could not compile %s with %v: %v\n%s", e.Name, e.Options, e.Err, e.Log)
}

func (e *CompileError) Unwrap() error { return e.Err }

// Compile compiles CUDA C++ source with NVRTC for t and returns the CUBIN
// (t.Cubin) or NUL-terminated PTX, and the compiler log. It does not use
// the disk cache (see CompileCached). Safe for concurrent use (NVRTC
// programs are independent).
func (l *Libs) Compile(name, src string, t Target) (image []byte, log string, err error) {
	api := l.nvrtc
	if api == nil {
		return nil, "", fmt.Errorf("cuda: NVRTC unavailable: %w", l.NVRTCErr)
	}
	var prog uintptr
	if err := nvrtcCheck("nvrtcCreateProgram", api.nvrtcCreateProgram(&prog, src, name, 0, nil, nil)); err != nil {
		return nil, "", err
	}
	defer api.nvrtcDestroyProgram(&prog)
	opts := NVRTCOptions(t)
	arr, keep := cStringArray(opts)
	cerr := nvrtcCheck("nvrtcCompileProgram", api.nvrtcCompileProgram(prog, int32(len(opts)), arr))
	runtime.KeepAlive(keep)
	var n uintptr
	if api.nvrtcGetProgramLogSize(prog, &n) == 0 && n > 1 {
		b := make([]byte, n)
		if api.nvrtcGetProgramLog(prog, &b[0]) == 0 {
			log = string(b[:n-1])
		}
	}
	if cerr != nil {
		return nil, log, &CompileError{Name: name, Log: log, Options: opts, Err: cerr}
	}
	sizeFn, getFn, what := api.nvrtcGetPTXSize, api.nvrtcGetPTX, "PTX"
	if t.Cubin {
		sizeFn, getFn, what = api.nvrtcGetCUBINSize, api.nvrtcGetCUBIN, "CUBIN"
	}
	if err := nvrtcCheck("nvrtcGet"+what+"Size", sizeFn(prog, &n)); err != nil {
		return nil, log, err
	}
	if n == 0 {
		return nil, log, fmt.Errorf("cuda: NVRTC produced an empty %s for %s", what, name)
	}
	image = make([]byte, n)
	if err := nvrtcCheck("nvrtcGet"+what, getFn(prog, &image[0])); err != nil {
		return nil, log, err
	}
	return image, log, nil
}
