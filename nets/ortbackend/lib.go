package ortbackend

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"
)

// minAPIVersion is the ORT_API_VERSION this package asks OrtApiBase.GetApi
// for. A library older than ONNX Runtime 1.15 returns NULL and is refused.
// (API version N is ONNX Runtime 1.N; 15 is the first with
// GetBuildInfoString, the newest entry in apiIndex.)
const minAPIVersion = 15

// apiIndex numbers the entries of struct OrtApi (onnxruntime_c_api.h) this
// package calls: entry i is the function pointer at byte offset 8*i of the
// table GetApi returns. The table only ever grows at its end, so an index
// is valid in every library whose API version is at least the one noted
// (the version the entry appeared in). The numbers were counted from the
// published header of API version 24 (the entries of struct OrtApi in
// order: ORT_API2_STATUS, ORT_CLASS_RELEASE and plain function pointers,
// 415 in all; entries 0-275 are the same, in the same order, in the
// header of API version 17) and are checked against the library in the
// tests by calling them.
type apiIndex int

const (
	apiGetErrorCode                     apiIndex = 1   // 1.0
	apiGetErrorMessage                  apiIndex = 2   // 1.0
	apiCreateEnv                        apiIndex = 3   // 1.0
	apiCreateSession                    apiIndex = 7   // 1.0
	apiRun                              apiIndex = 9   // 1.0
	apiCreateSessionOptions             apiIndex = 10  // 1.0
	apiSetSessionExecutionMode          apiIndex = 13  // 1.0
	apiSetSessionLogSeverityLevel       apiIndex = 22  // 1.0
	apiSetSessionGraphOptimizationLevel apiIndex = 23  // 1.0
	apiSetIntraOpNumThreads             apiIndex = 24  // 1.0
	apiSetInterOpNumThreads             apiIndex = 25  // 1.0
	apiSessionGetInputCount             apiIndex = 30  // 1.0
	apiSessionGetOutputCount            apiIndex = 31  // 1.0
	apiSessionGetInputTypeInfo          apiIndex = 33  // 1.0
	apiSessionGetOutputTypeInfo         apiIndex = 34  // 1.0
	apiSessionGetInputName              apiIndex = 36  // 1.0
	apiSessionGetOutputName             apiIndex = 37  // 1.0
	apiCreateTensorWithDataAsOrtValue   apiIndex = 49  // 1.0
	apiCastTypeInfoToTensorInfo         apiIndex = 55  // 1.0
	apiGetOnnxTypeFromTypeInfo          apiIndex = 56  // 1.0
	apiGetTensorElementType             apiIndex = 60  // 1.0
	apiGetDimensionsCount               apiIndex = 61  // 1.0
	apiGetDimensions                    apiIndex = 62  // 1.0
	apiCreateCpuMemoryInfo              apiIndex = 69  // 1.0
	apiAllocatorFree                    apiIndex = 76  // 1.0
	apiGetAllocatorWithDefaultOptions   apiIndex = 78  // 1.0
	apiReleaseEnv                       apiIndex = 92  // 1.0
	apiReleaseStatus                    apiIndex = 93  // 1.0
	apiReleaseMemoryInfo                apiIndex = 94  // 1.0
	apiReleaseSession                   apiIndex = 95  // 1.0
	apiReleaseValue                     apiIndex = 96  // 1.0
	apiReleaseTypeInfo                  apiIndex = 98  // 1.0
	apiReleaseSessionOptions            apiIndex = 100 // 1.0
	apiGetAvailableProviders            apiIndex = 125 // 1.3
	apiReleaseAvailableProviders        apiIndex = 126 // 1.3
	apiAddSessionConfigEntry            apiIndex = 130 // 1.5
	apiAppendTensorRTV2                 apiIndex = 170 // 1.10: SessionOptionsAppendExecutionProvider_TensorRT_V2
	apiCreateTensorRTProviderOptions    apiIndex = 171 // 1.10
	apiUpdateTensorRTProviderOptions    apiIndex = 172 // 1.10
	apiReleaseTensorRTProviderOptions   apiIndex = 174 // 1.10
	apiAppendCUDAV2                     apiIndex = 204 // 1.11: SessionOptionsAppendExecutionProvider_CUDA_V2
	apiCreateCUDAProviderOptions        apiIndex = 205 // 1.11
	apiUpdateCUDAProviderOptions        apiIndex = 206 // 1.11
	apiReleaseCUDAProviderOptions       apiIndex = 208 // 1.11
	apiGetBuildInfoString               apiIndex = 254 // 1.15; returns const char*, not a status
	apiCount                                     = 255 // entries read from the table
)

// C enum values of onnxruntime_c_api.h used here.
const (
	ortLoggingLevelWarning = 2  // OrtLoggingLevel ORT_LOGGING_LEVEL_WARNING
	ortLoggingLevelError   = 3  // ORT_LOGGING_LEVEL_ERROR
	ortEnableAll           = 99 // GraphOptimizationLevel ORT_ENABLE_ALL
	ortSequential          = 0  // ExecutionMode ORT_SEQUENTIAL
	ortArenaAllocator      = 1  // OrtAllocatorType OrtArenaAllocator
	ortMemTypeDefault      = 0  // OrtMemType OrtMemTypeDefault
	onnxTypeTensor         = 1  // ONNXType ONNX_TYPE_TENSOR
	onnxFloat              = 1  // ONNXTensorElementDataType ..._FLOAT
)

// errorCodeNames are the OrtErrorCode names, by value.
var errorCodeNames = []string{"ORT_OK", "ORT_FAIL", "ORT_INVALID_ARGUMENT", "ORT_NO_SUCHFILE", "ORT_NO_MODEL",
	"ORT_ENGINE_ERROR", "ORT_RUNTIME_EXCEPTION", "ORT_INVALID_PROTOBUF", "ORT_MODEL_LOADED", "ORT_NOT_IMPLEMENTED",
	"ORT_INVALID_GRAPH", "ORT_EP_FAIL", "ORT_MODEL_LOAD_CANCELED", "ORT_MODEL_REQUIRES_COMPILATION", "ORT_NOT_FOUND"}

// Lib is a loaded libonnxruntime: its path, version, build and execution
// providers, and the C API function table. A Lib is never unloaded
// (ONNX Runtime's own threads and static state make dlclose unsafe), and
// it is safe for concurrent use: it is immutable after Load.
type Lib struct {
	Path      string   // the file that was loaded
	Version   string   // OrtApiBase.GetVersionString, e.g. "1.30.0"
	Build     string   // GetBuildInfoString
	Providers []string // GetAvailableProviders, e.g. [CPUExecutionProvider]

	fn [apiCount]uintptr
}

// Error is a failed ONNX Runtime call: the C function, the OrtErrorCode
// name and ONNX Runtime's message.
type Error struct {
	Call    string // e.g. "CreateSession"
	Code    string // e.g. "ORT_NO_SUCHFILE"
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("onnxruntime %s: %s: %s", e.Call, e.Code, strings.TrimSpace(e.Message))
}

// call runs API entry i and turns a non-NULL OrtStatus* into an *Error
// (the status is released). Like ccall it is go:uintptrescapes: a
// uintptr(unsafe.Pointer(&x)) in its argument list moves x to the heap
// and keeps it alive for the call. (Without the mark, x could stay on the
// goroutine's stack, which moves when the stack grows on the way down to
// the C call, and C would write to the old copy.)
//
//go:uintptrescapes
func (l *Lib) call(name string, i apiIndex, args ...uintptr) error {
	st := ccall(l.fn[i], args...)
	if st == 0 {
		return nil
	}
	code := int(int32(ccall(l.fn[apiGetErrorCode], st)))
	msg := cString(ccall(l.fn[apiGetErrorMessage], st))
	ccall(l.fn[apiReleaseStatus], st)
	c := fmt.Sprintf("code %d", code)
	if code >= 0 && code < len(errorCodeNames) {
		c = errorCodeNames[code]
	}
	return &Error{Call: name, Code: c, Message: msg}
}

// release calls a Release* entry on p when p is not NULL.
func (l *Lib) release(i apiIndex, p uintptr) {
	if p != 0 {
		ccall(l.fn[i], p)
	}
}

// HasProvider reports whether the library was built with the execution
// provider name ("CUDAExecutionProvider", ...).
func (l *Lib) HasProvider(name string) bool {
	for _, p := range l.Providers {
		if p == name {
			return true
		}
	}
	return false
}

// cptr turns an address that C handed out into an unsafe.Pointer without
// the uintptr -> unsafe.Pointer conversion vet and checkptr object to: the
// memory is C's, so the Go collector neither moves nor frees it.
func cptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }

// cString copies the NUL-terminated C string at p ("" for NULL).
func cString(p uintptr) string {
	if p == 0 {
		return ""
	}
	n := 0
	for *(*byte)(cptr(p + uintptr(n))) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(cptr(p)), n))
}

// cWord reads the pointer-sized word at C address p.
func cWord(p uintptr) uintptr { return *(*uintptr)(cptr(p)) }

// goCString returns s as a NUL-terminated byte slice for C; the caller
// keeps it alive (runtime.KeepAlive) while C uses it.
func goCString(s string) []byte { return append([]byte(s), 0) }

// EnvLib names the environment variable holding the path of
// libonnxruntime.so, or of the folder holding it.
const EnvLib = "CANOPY_ORT_LIB"

// libNames are the file names tried in each folder, preferred first.
var libNames = []string{"libonnxruntime.so.1", "libonnxruntime.so", "libonnxruntime.dylib"}

// CacheDir is a folder, relative to the repository root, where a copy of
// the library may be put; the search looks for it in the current
// directory and its parents. `make ort` puts the library in the user's
// cache instead (UserCacheSubdir), which clones of the repository share.
const CacheDir = ".cache/ort"

// UserCacheSubdir is where `make ort` puts the library below the user's
// cache folder ($XDG_CACHE_HOME, else $HOME/.cache).
const UserCacheSubdir = "canopy/ort"

// searchEnv is what the library search reads from the outside world;
// tests replace it.
type searchEnv struct {
	getenv func(string) string
	getwd  func() (string, error)
	exists func(string) bool
	open   func(string) (uintptr, error)
}

func osSearchEnv() searchEnv {
	return searchEnv{
		getenv: os.Getenv,
		getwd:  os.Getwd,
		exists: func(p string) bool { _, err := os.Stat(p); return err == nil },
		open:   dlopen,
	}
}

// candidates lists the paths to try, in order: $CANOPY_ORT_LIB (a file,
// or a folder holding one of libNames); .cache/ort/ in the current
// directory and each parent; canopy/ort in the user's cache folder (where
// `make ort` puts it); the dynamic loader's own search (bare names:
// LD_LIBRARY_PATH, ld.so.cache); $ORT_HOME/lib (or $ONNXRUNTIME_DIR/lib);
// /usr/local/lib, /usr/lib/x86_64-linux-gnu, /usr/lib, /opt/onnxruntime/lib.
// When CANOPY_ORT_LIB is set, only it is tried: a library named on purpose
// must not be replaced silently by another one.
func candidates(env searchEnv) []string {
	inDir := func(d string) []string {
		out := make([]string, len(libNames))
		for i, n := range libNames {
			out[i] = filepath.Join(d, n)
		}
		return out
	}
	if v := strings.TrimSpace(env.getenv(EnvLib)); v != "" {
		if env.exists(filepath.Join(v, ".")) && !strings.Contains(filepath.Base(v), ".so") && !strings.HasSuffix(v, ".dylib") {
			return inDir(v)
		}
		return []string{v}
	}
	var out []string
	if wd, err := env.getwd(); err == nil {
		for d := wd; ; {
			out = append(out, inDir(filepath.Join(d, CacheDir))...)
			up := filepath.Dir(d)
			if up == d {
				break
			}
			d = up
		}
	}
	cache := env.getenv("XDG_CACHE_HOME")
	if cache == "" {
		if h := env.getenv("HOME"); h != "" {
			cache = filepath.Join(h, ".cache")
		}
	}
	if cache != "" {
		out = append(out, inDir(filepath.Join(cache, UserCacheSubdir))...)
	}
	out = append(out, libNames...)
	for _, e := range []string{"ORT_HOME", "ONNXRUNTIME_DIR"} {
		if h := env.getenv(e); h != "" {
			out = append(out, inDir(filepath.Join(h, "lib"))...)
		}
	}
	for _, d := range []string{"/usr/local/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib", "/opt/onnxruntime/lib"} {
		out = append(out, inDir(d)...)
	}
	return out
}

// NotFoundError says that no ONNX Runtime library could be loaded.
type NotFoundError struct {
	Tried []string // "path: reason" per attempt, in order
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no ONNX Runtime library: libonnxruntime.so not found (%d paths tried; set %s to its path, or run `make ort` in the repository to fetch the CPU build from npm's onnxruntime-node)",
		len(e.Tried), EnvLib)
}

// ErrNoLibrary is matched (errors.Is) by the error of Load when no
// library was found, as opposed to one that loads but is unusable.
var ErrNoLibrary = errors.New("no ONNX Runtime library")

func (e *NotFoundError) Is(target error) bool { return target == ErrNoLibrary }

// loaded caches Load's result per search outcome: a shared library is
// loaded once per process and never unloaded, so this cache is the one
// piece of process-wide state here (it mirrors the loader's own table).
var loaded struct {
	sync.Mutex
	byPath map[string]*Lib
}

// Load finds and loads libonnxruntime (see candidates for the order) and
// reads its C API table. Errors: *NotFoundError (errors.Is ErrNoLibrary)
// when none loads; an error naming the file and versions when the library
// is older than ONNX Runtime 1.15. Safe for concurrent use; a library
// already loaded is returned again.
func Load() (*Lib, error) { return load(osSearchEnv()) }

func load(env searchEnv) (*Lib, error) {
	var tried []string
	for _, c := range candidates(env) {
		if filepath.IsAbs(c) && !env.exists(c) {
			tried = append(tried, c+": no such file")
			continue
		}
		loaded.Lock()
		l, ok := loaded.byPath[c]
		loaded.Unlock()
		if ok {
			return l, nil
		}
		h, err := env.open(c)
		if err != nil || h == 0 {
			reason := "dlopen failed"
			if err != nil {
				reason = oneLine(err.Error())
			}
			tried = append(tried, c+": "+reason)
			continue
		}
		l, err = newLib(h, c)
		if err != nil {
			return nil, err
		}
		loaded.Lock()
		if loaded.byPath == nil {
			loaded.byPath = map[string]*Lib{}
		}
		if prev, ok := loaded.byPath[c]; ok {
			l = prev
		} else {
			loaded.byPath[c] = l
		}
		loaded.Unlock()
		return l, nil
	}
	return nil, &NotFoundError{Tried: tried}
}

// newLib reads the API table of the library at handle h.
func newLib(h uintptr, path string) (*Lib, error) {
	sym, err := dlsym(h, "OrtGetApiBase")
	if err != nil {
		return nil, fmt.Errorf("ortbackend: %s is not ONNX Runtime: no OrtGetApiBase symbol (%v)", path, err)
	}
	base := ccall(sym)
	if base == 0 {
		return nil, fmt.Errorf("ortbackend: %s: OrtGetApiBase returned NULL", path)
	}
	// struct OrtApiBase { GetApi; GetVersionString; }
	getAPI, getVersion := cWord(base), cWord(base+8)
	l := &Lib{Path: path, Version: cString(ccall(getVersion))}
	tbl := ccall(getAPI, minAPIVersion)
	if tbl == 0 {
		return nil, fmt.Errorf("ortbackend: %s is ONNX Runtime %s, which does not offer C API version %d: Canopy needs ONNX Runtime 1.%d or newer",
			path, l.Version, minAPIVersion, minAPIVersion)
	}
	for i := range l.fn {
		l.fn[i] = cWord(tbl + uintptr(i)*8)
	}
	l.Build = cString(ccall(l.fn[apiGetBuildInfoString])) // const char* GetBuildInfoString(void)
	var list uintptr
	var n int32
	if err := l.call("GetAvailableProviders", apiGetAvailableProviders, uintptr(unsafe.Pointer(&list)), uintptr(unsafe.Pointer(&n))); err != nil {
		return nil, fmt.Errorf("ortbackend: %s: %w", path, err)
	}
	for i := range int(n) {
		l.Providers = append(l.Providers, cString(cWord(list+uintptr(i)*8)))
	}
	if err := l.call("ReleaseAvailableProviders", apiReleaseAvailableProviders, list, uintptr(n)); err != nil {
		return nil, fmt.Errorf("ortbackend: %s: %w", path, err)
	}
	return l, nil
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}
