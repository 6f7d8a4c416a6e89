package ortbackend

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"
)

// Tensor describes one input or output of a model: its name and shape as
// the model declares it, with -1 for a dimension the model leaves free
// (the batch).
type Tensor struct {
	Name  string
	Shape []int64
}

// rowSize is the number of values per batch row: the product of the
// dimensions after the first.
func (t Tensor) rowSize() int64 {
	n := int64(1)
	for _, d := range t.Shape[1:] {
		n *= d
	}
	return n
}

func (t Tensor) String() string {
	d := make([]string, len(t.Shape))
	for i, v := range t.Shape {
		d[i] = fmt.Sprint(v)
		if v < 0 {
			d[i] = "B"
		}
	}
	return fmt.Sprintf("%s [%s]", t.Name, strings.Join(d, ","))
}

// Provider names an execution provider choice of the backend spec.
type Provider string

const (
	CPU      Provider = "cpu"      // ONNX Runtime's own CPU kernels (every build)
	CUDA     Provider = "cuda"     // CUDAExecutionProvider (GPU builds)
	TensorRT Provider = "tensorrt" // TensorrtExecutionProvider, CUDA for what TensorRT leaves
)

// ortName is the provider's name in GetAvailableProviders.
func (p Provider) ortName() string {
	switch p {
	case CUDA:
		return "CUDAExecutionProvider"
	case TensorRT:
		return "TensorrtExecutionProvider"
	}
	return "CPUExecutionProvider"
}

// session is an ONNX Runtime session on one model with its environment
// and options: every handle this package creates for a model, released
// by close in the reverse order of creation.
type session struct {
	lib      *Lib
	env      uintptr // OrtEnv*
	opts     uintptr // OrtSessionOptions*
	sess     uintptr // OrtSession*
	mem      uintptr // OrtMemoryInfo* (CPU)
	alloc    uintptr // OrtAllocator* (the default one: not released)
	cnames   []uintptr
	inputs   []Tensor
	outputs  []Tensor
	provider Provider
	// trtProfile holds the TensorRT optimisation profile options
	// (trt_profile_{min,max,opt}_shapes), or nil.
	trtProfile map[string]string
}

// trtProfile returns TensorRT's profile options for a model whose one
// input has a free batch axis: batches 1 to maxBatch, tuned for
// preferredBatch (at most maxBatch). It returns nil (no profile: TensorRT
// then builds engines per shape as they come) when the model does not
// fit that or the input's name cannot be written in the option's
// "name:1x2x3" syntax.
func trtProfile(inputs []Tensor, maxBatch int) map[string]string {
	if len(inputs) != 1 || len(inputs[0].Shape) < 2 || inputs[0].Shape[0] != -1 || maxBatch < 1 ||
		strings.ContainsAny(inputs[0].Name, ":,") {
		return nil
	}
	t := inputs[0]
	shape := func(b int) string {
		d := []string{fmt.Sprint(b)}
		for _, v := range t.Shape[1:] {
			if v <= 0 {
				return ""
			}
			d = append(d, fmt.Sprint(v))
		}
		return t.Name + ":" + strings.Join(d, "x")
	}
	if shape(1) == "" {
		return nil
	}
	return map[string]string{"trt_profile_min_shapes": shape(1), "trt_profile_max_shapes": shape(maxBatch),
		"trt_profile_opt_shapes": shape(min(preferredBatch, maxBatch))}
}

// openSession creates the environment, the session options (threads,
// provider) and the session for the model file, and reads the model's
// inputs and outputs. On error everything made so far is released.
func openSession(l *Lib, o Options) (*session, error) {
	s := &session{lib: l, provider: o.Provider}
	if o.Provider == TensorRT {
		// TensorRT builds an engine per input shape range: one profile
		// for batches 1..MaxBatch keeps a batcher's varying batches from
		// rebuilding it. The input's name and shape come from a CPU
		// session on the model.
		peek, err := openSession(l, Options{Model: o.Model, Provider: CPU, Threads: 1})
		if err != nil {
			return nil, err
		}
		s.trtProfile = trtProfile(peek.inputs, o.MaxBatch)
		peek.close()
	}
	if err := s.open(o.Model, o.Device, o.Threads, o.Spin); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// open does openSession's work on s; the caller releases s on error.
func (s *session) open(model string, device, threads int, spin bool) (err error) {
	l, p := s.lib, s.provider
	if _, err := os.Stat(model); err != nil {
		return fmt.Errorf("ortbackend: model %s: %w", model, unwrapPath(err))
	}
	logid := goCString("canopy")
	if err := l.call("CreateEnv", apiCreateEnv, ortLoggingLevelError, uintptr(unsafe.Pointer(&logid[0])), uintptr(unsafe.Pointer(&s.env))); err != nil {
		return err
	}
	if err := l.call("CreateSessionOptions", apiCreateSessionOptions, uintptr(unsafe.Pointer(&s.opts))); err != nil {
		return err
	}
	// Per-session thread pools (the default; no global pools are made):
	// threads intra-op workers, sequential execution of the graph's nodes.
	if err := l.call("SetIntraOpNumThreads", apiSetIntraOpNumThreads, s.opts, uintptr(threads)); err != nil {
		return err
	}
	if err := l.call("SetInterOpNumThreads", apiSetInterOpNumThreads, s.opts, 1); err != nil {
		return err
	}
	if err := l.call("SetSessionExecutionMode", apiSetSessionExecutionMode, s.opts, ortSequential); err != nil {
		return err
	}
	if err := l.call("SetSessionGraphOptimizationLevel", apiSetSessionGraphOptimizationLevel, s.opts, ortEnableAll); err != nil {
		return err
	}
	if err := l.call("SetSessionLogSeverityLevel", apiSetSessionLogSeverityLevel, s.opts, ortLoggingLevelError); err != nil {
		return err
	}
	if !spin {
		k, v := goCString("session.intra_op.allow_spinning"), goCString("0")
		if err := l.call("AddSessionConfigEntry", apiAddSessionConfigEntry, s.opts, uintptr(unsafe.Pointer(&k[0])), uintptr(unsafe.Pointer(&v[0]))); err != nil {
			return err
		}
	}
	if err := s.appendProvider(p, device); err != nil {
		return err
	}
	path := goCString(model)
	if err := l.call("CreateSession", apiCreateSession, s.env, uintptr(unsafe.Pointer(&path[0])), s.opts, uintptr(unsafe.Pointer(&s.sess))); err != nil {
		return fmt.Errorf("ortbackend: model %s: %w", model, err)
	}
	if err := l.call("CreateCpuMemoryInfo", apiCreateCpuMemoryInfo, ortArenaAllocator, ortMemTypeDefault, uintptr(unsafe.Pointer(&s.mem))); err != nil {
		return err
	}
	if err := l.call("GetAllocatorWithDefaultOptions", apiGetAllocatorWithDefaultOptions, uintptr(unsafe.Pointer(&s.alloc))); err != nil {
		return err
	}
	if s.inputs, err = s.tensors(true); err != nil {
		return fmt.Errorf("ortbackend: model %s: %w", model, err)
	}
	if s.outputs, err = s.tensors(false); err != nil {
		return fmt.Errorf("ortbackend: model %s: %w", model, err)
	}
	return nil
}

// unwrapPath drops the *PathError's own copy of the path (the caller
// names the model already).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ProviderError says that an execution provider could not be used here:
// the library lacks it, or appending it failed (its shared library, CUDA
// or TensorRT is missing, or no device). The backend reports it as
// unavailable.
type ProviderError struct {
	Provider Provider
	Reason   string
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("ortbackend: provider %s unavailable: %s", e.Provider, e.Reason)
}

// appendProvider adds the execution provider p on device to the session
// options (cpu needs nothing: ONNX Runtime always has it, last).
func (s *session) appendProvider(p Provider, device int) error {
	l := s.lib
	if p == CPU {
		return nil
	}
	if !l.HasProvider(p.ortName()) {
		return &ProviderError{p, fmt.Sprintf("this ONNX Runtime (%s, %s) was built without %s (it has %s); point %s at a GPU build of libonnxruntime (onnxruntime-gpu)",
			l.Version, l.Path, p.ortName(), strings.Join(l.Providers, ", "), EnvLib)}
	}
	keys := []string{"device_id"}
	vals := []string{fmt.Sprint(device)}
	if p == TensorRT && s.trtProfile != nil {
		for _, k := range []string{"trt_profile_min_shapes", "trt_profile_max_shapes", "trt_profile_opt_shapes"} {
			keys, vals = append(keys, k), append(vals, s.trtProfile[k])
		}
	}
	create, update, appendV2, release := apiCreateCUDAProviderOptions, apiUpdateCUDAProviderOptions, apiAppendCUDAV2, apiReleaseCUDAProviderOptions
	if p == TensorRT {
		create, update, appendV2, release = apiCreateTensorRTProviderOptions, apiUpdateTensorRTProviderOptions, apiAppendTensorRTV2, apiReleaseTensorRTProviderOptions
	}
	name := map[Provider]string{CUDA: "CUDA", TensorRT: "TensorRT"}[p]
	var po uintptr
	if err := l.call("Create"+name+"ProviderOptions", create, uintptr(unsafe.Pointer(&po))); err != nil {
		return &ProviderError{p, err.Error()}
	}
	defer l.release(release, po)
	// The key and value arrays hold the addresses of Go byte slices that
	// cs keeps alive; Go's collector does not move heap objects, and
	// ONNX Runtime copies the strings before Update returns.
	cs := make([][]byte, 0, 2*len(keys))
	kp, vp := make([]uintptr, len(keys)), make([]uintptr, len(keys))
	for i := range keys {
		k, v := goCString(keys[i]), goCString(vals[i])
		cs = append(cs, k, v)
		kp[i], vp[i] = uintptr(unsafe.Pointer(&k[0])), uintptr(unsafe.Pointer(&v[0]))
	}
	err := l.call("Update"+name+"ProviderOptions", update, po, uintptr(unsafe.Pointer(&kp[0])), uintptr(unsafe.Pointer(&vp[0])), uintptr(len(keys)))
	runtime.KeepAlive(cs)
	if err != nil {
		return &ProviderError{p, err.Error()}
	}
	if err := l.call("SessionOptionsAppendExecutionProvider_"+name, appendV2, s.opts, po); err != nil {
		return &ProviderError{p, err.Error()}
	}
	if p == TensorRT {
		// TensorRT leaves the nodes it cannot take to the next provider:
		// CUDA, then the CPU.
		return s.appendProvider(CUDA, device)
	}
	return nil
}

// tensors reads the model's inputs (or outputs): names and shapes. Only
// float32 tensors are accepted.
func (s *session) tensors(inputs bool) ([]Tensor, error) {
	l := s.lib
	kind, call, countIdx, nameIdx, typeIdx := "output", "SessionGetOutput", apiSessionGetOutputCount, apiSessionGetOutputName, apiSessionGetOutputTypeInfo
	if inputs {
		kind, call, countIdx, nameIdx, typeIdx = "input", "SessionGetInput", apiSessionGetInputCount, apiSessionGetInputName, apiSessionGetInputTypeInfo
	}
	var n uintptr
	if err := l.call(call+"Count", countIdx, s.sess, uintptr(unsafe.Pointer(&n))); err != nil {
		return nil, err
	}
	var out []Tensor
	for i := range n {
		var name uintptr
		if err := l.call(call+"Name", nameIdx, s.sess, i, s.alloc, uintptr(unsafe.Pointer(&name))); err != nil {
			return nil, err
		}
		s.cnames = append(s.cnames, name)
		t := Tensor{Name: cString(name)}
		var ti uintptr
		if err := l.call(call+"TypeInfo", typeIdx, s.sess, i, uintptr(unsafe.Pointer(&ti))); err != nil {
			return nil, err
		}
		err := s.readShape(ti, &t)
		l.release(apiReleaseTypeInfo, ti)
		if err != nil {
			return nil, fmt.Errorf("%s %d (%s): %w", kind, i, t.Name, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// cName returns the C string of the name of input (or output) i, as
// ONNX Runtime allocated it in tensors.
func (s *session) cName(input bool, i int) uintptr {
	if input {
		return s.cnames[i]
	}
	return s.cnames[len(s.inputs)+i]
}

// readShape fills t.Shape from the type info ti.
func (s *session) readShape(ti uintptr, t *Tensor) error {
	l := s.lib
	var onnxType int32
	if err := l.call("GetOnnxTypeFromTypeInfo", apiGetOnnxTypeFromTypeInfo, ti, uintptr(unsafe.Pointer(&onnxType))); err != nil {
		return err
	}
	if onnxType != onnxTypeTensor {
		return fmt.Errorf("not a tensor (ONNXType %d): Canopy's backends take and give float32 tensors", onnxType)
	}
	var info uintptr // owned by ti
	if err := l.call("CastTypeInfoToTensorInfo", apiCastTypeInfoToTensorInfo, ti, uintptr(unsafe.Pointer(&info))); err != nil {
		return err
	}
	var elem int32
	if err := l.call("GetTensorElementType", apiGetTensorElementType, info, uintptr(unsafe.Pointer(&elem))); err != nil {
		return err
	}
	if elem != onnxFloat {
		return fmt.Errorf("element type %d is not float32 (ONNX type 1): export the model in float32", elem)
	}
	var rank uintptr
	if err := l.call("GetDimensionsCount", apiGetDimensionsCount, info, uintptr(unsafe.Pointer(&rank))); err != nil {
		return err
	}
	if rank == 0 || rank > 8 {
		return fmt.Errorf("rank %d: want a batch axis and at most 7 more", rank)
	}
	t.Shape = make([]int64, rank)
	return l.call("GetDimensions", apiGetDimensions, info, uintptr(unsafe.Pointer(&t.Shape[0])), rank)
}

// close releases every handle; safe on a partly opened session and more
// than once.
func (s *session) close() {
	l := s.lib
	for _, p := range s.cnames {
		if p != 0 {
			l.call("AllocatorFree", apiAllocatorFree, s.alloc, p)
		}
	}
	s.cnames = nil
	l.release(apiReleaseMemoryInfo, s.mem)
	l.release(apiReleaseSession, s.sess)
	l.release(apiReleaseSessionOptions, s.opts)
	l.release(apiReleaseEnv, s.env)
	s.mem, s.sess, s.opts, s.env = 0, 0, 0, 0
}
