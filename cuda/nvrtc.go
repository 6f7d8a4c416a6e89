package cuda

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
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

// LoadNVRTC loads NVRTC alone (with its builtins), without a driver or a
// GPU, for compiling kernels on any machine (make cuda-compile-check). With
// no driver to match, the first NVRTC found (newest major version first)
// is taken. Only Compile, SupportedArchs and the NVRTC fields of the
// result are usable. Each call searches anew; Load is unaffected.
func LoadNVRTC() (*Libs, error) {
	l := &Libs{}
	if err := l.loadNVRTC(defaultEnv()); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Libs) loadNVRTC(env searchEnv) error {
	apis := map[uintptr]*nvrtcAPI{}
	version := func(h uintptr, path string) ([2]int, error) {
		api := &nvrtcAPI{}
		if err := bindAll(h, path, api.symbols()); err != nil {
			return [2]int{}, err
		}
		var maj, mnr int32
		if err := nvrtcCheck("nvrtcVersion", api.nvrtcVersion(&maj, &mnr)); err != nil {
			return [2]int{}, err
		}
		apis[h] = api
		return [2]int{int(maj), int(mnr)}, nil
	}
	h, path, ver, choice, err := openNVRTC(env, l.DriverVersion, version)
	if err != nil {
		return err
	}
	l.NVRTCPath, l.NVRTCVersion, l.NVRTCChoice, l.nvrtc = path, ver, choice, apis[h]
	return nil
}

// versionString formats a cuDriverGetVersion value (12040 -> "12.4").
func versionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// openNVRTC picks the NVRTC for a driver of driverVersion: the first
// library in search order (newest major version first) whose major version
// the driver supports, that is at most the driver's own (an NVRTC 13
// CUBIN or PTX does not load on a CUDA 12 driver). When every NVRTC that
// loads is newer, the first is used and the choice says that its output
// may not load. version binds a loaded library and returns its version.
// It then loads libnvrtc-builtins from the chosen library's folder
// (loadBuiltins). choice is one line saying what was chosen and why.
func openNVRTC(env searchEnv, driverVersion int, version func(h uintptr, path string) ([2]int, error)) (h uintptr, path string, ver [2]int, choice string, err error) {
	versions := map[uintptr][2]int{}
	accept := func(h uintptr, path string) string {
		v, err := version(h, path)
		if err != nil {
			return oneLine(err.Error())
		}
		versions[h] = v
		if driverVersion > 0 && v[0] > driverVersion/1000 {
			return fmt.Sprintf("NVRTC %d.%d is newer than the driver (CUDA %s)", v[0], v[1], versionString(driverVersion))
		}
		return ""
	}
	h, path, skipped, err := openLibWith(specNVRTC, env, accept)
	if err != nil {
		return 0, "", ver, "", err
	}
	ver, ok := versions[h]
	if !ok { // only libraries that fail to bind were found
		return 0, "", ver, "", fmt.Errorf("cuda: no usable NVRTC (%s)", strings.Join(skipped, "; "))
	}
	var b strings.Builder
	if driverVersion > 0 {
		fmt.Fprintf(&b, "%s (NVRTC %d.%d) for driver CUDA %s", path, ver[0], ver[1], versionString(driverVersion))
	} else {
		fmt.Fprintf(&b, "%s (NVRTC %d.%d), no driver loaded", path, ver[0], ver[1])
	}
	if driverVersion > 0 && ver[0] > driverVersion/1000 {
		b.WriteString(": no NVRTC the driver supports was found, its output may not load")
	}
	if len(skipped) > 0 && (driverVersion <= 0 || ver[0] <= driverVersion/1000) {
		fmt.Fprintf(&b, "; passed over %s", strings.Join(skipped, "; "))
	}
	if bp, berr := loadBuiltins(env, path, ver); bp != "" {
		fmt.Fprintf(&b, "; builtins %s", bp)
	} else if berr != nil {
		fmt.Fprintf(&b, "; builtins: %v", berr)
	}
	return h, path, ver, b.String(), nil
}

// loadBuiltins loads libnvrtc-builtins.so.MAJOR.MINOR from the folder of
// the NVRTC at nvrtcPath and returns its path. NVRTC dlopens that library
// by name when it compiles, which fails when the folder (one named in
// CANOPY_CUDA_LIBS, say) is not on the loader's path; a library already
// loaded under that name satisfies the request. A bare nvrtcPath (found
// by the loader's own search) needs nothing: "" and nil.
func loadBuiltins(env searchEnv, nvrtcPath string, ver [2]int) (string, error) {
	if !filepath.IsAbs(nvrtcPath) {
		return "", nil
	}
	dir := filepath.Dir(nvrtcPath)
	name := fmt.Sprintf("libnvrtc-builtins.so.%d.%d", ver[0], ver[1])
	cands := []string{filepath.Join(dir, name)}
	if m, err := env.glob(filepath.Join(dir, name+".*")); err == nil { // the full-version file
		sort.Sort(sort.Reverse(sort.StringSlice(m)))
		cands = append(cands, m...)
	}
	for _, c := range cands {
		if !strings.HasPrefix(filepath.Base(c), name) || !env.exists(c) {
			continue
		}
		h, err := env.open(c)
		if err == nil && h != 0 {
			return c, nil
		}
		if err != nil {
			return "", fmt.Errorf("%s: %s", c, oneLine(err.Error()))
		}
	}
	return "", fmt.Errorf("%s not found beside NVRTC (compiling needs it on the loader path)", name)
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
