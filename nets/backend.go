package nets

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/canopy-go/canopy/kernels"
	"github.com/canopy-go/canopy/spec"
)

// Backends are opened by spec strings, parsed with package spec:
//
//	auto                      the highest-priority backend that opens here ("" too)
//	cpu:threads=2             the CPU on 2 threads (this backend's own budget, Net.SetThreads)
//	cpu:conv=winograd         the CPU, 3x3 convolutions by Winograd (F(3x4,3x3) or F(2x2,3x3): Net.SetConvAlgorithm)
//	cpu:precision=bf16        the CPU, 3x3 convolutions with bfloat16 operands (AVX-512 BF16)
//	cuda:device=0,precision=fp16,graphs=true   (package nets/cudabackend)
//	random:seed=0             no arithmetic: uniform logits, value 0
//
// Each backend declares its keys (BackendInfo.Options), so unknown keys and
// bad values are rejected before anything opens, with an *OptionError that
// names the key and its allowed values. OpenBackendSpec returns a Choice
// saying what opened and why; its errors match ErrUnknownBackend,
// ErrBadBackendOption or ErrBackendUnavailable.

// Backend evaluates a policy-value network on batches. It is built around
// the batch: the caller fills input with batch planar observations
// (inputSize floats each) and gets batch x policySize policy logits and
// batch values in [-1, 1] in memory it owns (batch x ValueSize values for
// a backend with a per-player value head: see ValueSizer).
//
// Thread safety: a Backend may be called from one goroutine at a time
// unless its documentation says otherwise (batchers and multiplexers that
// merge many searchers' requests sit in front of it).
type Backend interface {
	// Name is the registered name ("cpu", "cuda", ...).
	Name() string
	// Shape returns the per-sample input and policy lengths.
	Shape() (inputSize, policySize int)
	// PreferredBatch is the batch size with the best throughput per row.
	PreferredBatch() int
	// MaxBatch is the largest batch Evaluate accepts.
	MaxBatch() int
	// Evaluate runs batch samples (1 <= batch <= MaxBatch). Slices shorter
	// than the batch needs are an error. ctx cancellation is checked
	// before the work starts.
	Evaluate(ctx context.Context, batch int, input, policy, value []float32) error
}

// ValueSizer is implemented by backends whose value output has more
// than one entry per row: a net with a per-player value head
// (Config.ValuePlayers) gives ValueSize() values per row, mover first,
// and Evaluate's value slice then holds batch x ValueSize values, row r
// at value[r*ValueSize:(r+1)*ValueSize]. A backend that does not
// implement it has the scalar head (one value per row). Wrappers
// (batchers, caches, timers) forward it; see ValueSize.
type ValueSizer interface {
	ValueSize() int
}

// ValueSize returns b's value outputs per row: b.ValueSize() when b
// implements ValueSizer, else 1.
func ValueSize(b Backend) int {
	if v, ok := b.(ValueSizer); ok {
		return max(v.ValueSize(), 1)
	}
	return 1
}

// InputRegistrar is implemented by backends that read inputs faster from
// host memory prepared for them: the cuda backend page-locks a registered
// buffer, so that its copy engine reads the rows straight from it instead
// of Evaluate first copying them to a staging buffer of its own. A caller
// that passes rows of one long-lived buffer to many Evaluate calls (the
// batcher's ring) registers that buffer once and unregisters it before
// dropping it; inputs elsewhere still work, through the staging copy.
// Registering may fail (a driver's limit on locked memory): the caller
// then just goes on unregistered. UnregisterInput after the backend's
// Close returns nil. Buffers from PageAligned suit the cuda backend.
type InputRegistrar interface {
	RegisterInput(buf []float32) error
	UnregisterInput(buf []float32) error
}

// PageAligned returns n float32s of Go memory that start on a 4 KiB
// boundary and own the rest of their last page (cap, not len, reaches its
// end), as an InputRegistrar's page locking wants: locking works on whole
// pages, and no other Go object shares them.
func PageAligned(n int) []float32 {
	const page = 4096 / 4
	whole := (n + page - 1) / page * page
	raw := make([]float32, whole+page)
	skip := 0
	if r := uintptr(unsafe.Pointer(&raw[0])) % 4096; r != 0 {
		skip = int(4096-r) / 4
	}
	return raw[skip : skip+n : skip+whole]
}

// BackendOptions configure a backend. Zero fields take the backend's
// defaults.
type BackendOptions struct {
	// MaxBatch bounds the batch size (memory is reserved for it).
	MaxBatch int
	// Device selects a device for accelerator backends (ignored by cpu).
	// A device key in the backend spec overrides it.
	Device int
	// Params holds the key=value options of the backend spec, already
	// checked against the options the backend declared (keys as declared,
	// enumerated values in their declared spelling). OpenBackendSpec fills
	// it from the spec and replaces whatever the caller put there; a
	// factory called directly may get nil.
	Params map[string]string
}

// Param returns the spec option key and whether the spec gave it.
func (o BackendOptions) Param(key string) (string, bool) {
	v, ok := o.Params[key]
	return v, ok
}

// BackendFactory opens a backend for net. A factory whose backend cannot
// run on this machine (no device, no driver) returns an error made with
// Unavailable, so that "auto" and callers can tell it from a failure.
type BackendFactory func(net *Net, opts BackendOptions) (Backend, error)

// BackendOption declares one key of a backend's spec
// ("name:key=value,..."). A value is accepted when it is one of Values
// (compared without regard to case), when Text is set and it is not
// empty, or, when Values is empty and Text is not set, when it is an
// integer in [Min, Max].
type BackendOption struct {
	Key    string
	Values []string // the accepted values of an enumerated option
	Min    int      // bounds of an integer option (Values empty)
	Max    int
	// Text makes the option free text, such as a file path (which cannot
	// hold a ',': the spec separator).
	Text    bool
	Default string // what applies when the key is absent, for help texts
	Help    string // one line
}

// Allowed describes the accepted values: "fp32|tf32", "1..64" or "TEXT".
func (o BackendOption) Allowed() string {
	if o.Text {
		return "TEXT"
	}
	if len(o.Values) > 0 {
		return strings.Join(o.Values, "|")
	}
	return fmt.Sprintf("%d..%d", o.Min, o.Max)
}

// check returns the canonical form of v, or a reason it is not accepted.
func (o BackendOption) check(v string) (string, string) {
	if o.Text {
		if v == "" {
			return "", "empty (a value is required)"
		}
		return v, ""
	}
	if len(o.Values) > 0 {
		for _, a := range o.Values {
			if strings.EqualFold(v, a) {
				return a, ""
			}
		}
		return "", fmt.Sprintf("%q is not one of %s%s", v, o.Allowed(), spec.Suggest(v, o.Values))
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < o.Min || n > o.Max {
		return "", fmt.Sprintf("%q is not an integer in %s", v, o.Allowed())
	}
	return strconv.Itoa(n), ""
}

// BackendInfo describes a registered backend: the registry's entry, also
// what help texts list.
type BackendInfo struct {
	Name string
	// Priority orders "auto": higher first. cpu has 0, accelerators more,
	// stand-ins (random) less.
	Priority int
	Summary  string          // one line for help texts
	Options  []BackendOption // the keys its spec takes, in help order
	Open     BackendFactory
}

// Option returns the declared option key.
func (b BackendInfo) Option(key string) (BackendOption, bool) {
	for _, o := range b.Options {
		if o.Key == key {
			return o, true
		}
	}
	return BackendOption{}, false
}

func (b BackendInfo) keys() string {
	ks := make([]string, len(b.Options))
	for i, o := range b.Options {
		ks[i] = o.Key
	}
	return strings.Join(ks, ", ")
}

// backends holds the backends by name (spec.Registry: the same table as
// the games' and the agents').
var backends = spec.NewRegistry[BackendInfo]("backend")

// RegisterBackendInfo adds a backend to the registry. "auto" tries
// backends from the highest priority down and keeps the first that opens;
// the CPU backend has priority 0, so accelerators register with higher
// ones. A duplicate or reserved name, a nil factory or an option without a
// key panics (programming errors caught at init). Safe for concurrent use.
func RegisterBackendInfo(info BackendInfo) {
	if _, dup := backends.Lookup(info.Name); dup || info.Name == "auto" || info.Name == "" || strings.ContainsAny(info.Name, ":,= ") {
		panic("nets: duplicate or reserved backend name " + strconv.Quote(info.Name))
	}
	if info.Open == nil {
		panic("nets: backend " + info.Name + " registered without a factory")
	}
	for _, o := range info.Options {
		if o.Key == "" || (len(o.Values) == 0 && o.Min > o.Max) {
			panic("nets: backend " + info.Name + ": malformed option " + strconv.Quote(o.Key))
		}
	}
	info.Options = slices.Clone(info.Options)
	backends.Register(info.Name, info)
}

// BackendInfos returns the registered backends, highest priority first
// (ties by name).
func BackendInfos() []BackendInfo {
	infos := backends.All()
	sort.SliceStable(infos, func(i, j int) bool {
		if infos[i].Priority != infos[j].Priority {
			return infos[i].Priority > infos[j].Priority
		}
		return infos[i].Name < infos[j].Name
	})
	return infos
}

// LookupBackend returns the registered backend name.
func LookupBackend(name string) (BackendInfo, bool) { return backends.Lookup(name) }

// Backends returns the registered names, highest priority first.
func Backends() []string {
	infos := BackendInfos()
	names := make([]string, len(infos))
	for i, r := range infos {
		names[i] = r.Name
	}
	return names
}

// Errors of OpenBackendSpec and ParseBackendSpec, matched with errors.Is.
var (
	// ErrUnknownBackend: the spec names no registered backend (the
	// message lists the available ones).
	ErrUnknownBackend = errors.New("unknown backend")
	// ErrBackendUnavailable: the backend is registered but cannot run on
	// this machine (no device, no driver); "auto" passes over it.
	ErrBackendUnavailable = errors.New("backend unavailable")
	// ErrBadBackendOption: the spec is malformed, or gives a key the
	// backend does not take or a value outside the key's allowed values
	// (the error is an *OptionError).
	ErrBadBackendOption = errors.New("bad backend option")
)

// OptionError reports a bad backend spec option. It matches
// ErrBadBackendOption.
type OptionError struct {
	Backend string // the backend's name ("" when the spec is malformed)
	Key     string // the option at fault ("" when the spec is malformed)
	// Reason says what is wrong and what is allowed, e.g. `"fp8" is not
	// one of fp32|tf32|fp16|bf16`.
	Reason string
}

func (e *OptionError) Error() string {
	if e.Key == "" {
		return "nets: bad backend spec: " + e.Reason
	}
	return fmt.Sprintf("nets: backend %s: option %s: %s", e.Backend, e.Key, e.Reason)
}

// Is makes errors.Is(err, ErrBadBackendOption) hold.
func (e *OptionError) Is(target error) bool { return target == ErrBadBackendOption }

// unavailableError is the error Unavailable returns.
type unavailableError struct{ reason error }

func (e *unavailableError) Error() string        { return e.reason.Error() }
func (e *unavailableError) Unwrap() error        { return e.reason }
func (e *unavailableError) Is(target error) bool { return target == ErrBackendUnavailable }

// Unavailable marks reason as the cause of a backend that cannot run on
// this machine: the result has reason's message, matches
// ErrBackendUnavailable and unwraps to reason. Factories return it.
func Unavailable(reason error) error {
	if reason == nil {
		reason = errors.New("no reason given")
	}
	return &unavailableError{reason}
}

// BackendSpec is a parsed backend spec: "auto", "name" or
// "name:key=value,...".
type BackendSpec struct {
	// Name is a registered backend or "auto" ("" parses as auto).
	Name string
	// Params are the options, checked against the backend's declared
	// options: keys as declared, enumerated values in their declared
	// spelling, integers in decimal.
	Params map[string]string
}

// String returns the canonical spec: the name, then the options sorted by
// key.
func (s BackendSpec) String() string {
	if len(s.Params) == 0 {
		return s.Name
	}
	kv := make([]string, 0, len(s.Params))
	for _, k := range slices.Sorted(maps.Keys(s.Params)) {
		kv = append(kv, k+"="+s.Params[k])
	}
	return s.Name + ":" + strings.Join(kv, ",")
}

// ParseBackendSpec parses and checks a backend spec against the registry.
// Errors match ErrUnknownBackend (the message lists the available
// backends) or ErrBadBackendOption (an *OptionError naming the key and its
// allowed values). "auto" takes no options.
func ParseBackendSpec(s string) (BackendSpec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return BackendSpec{Name: "auto"}, nil
	}
	sp, err := spec.Parse(s)
	if err != nil {
		return BackendSpec{}, &OptionError{Reason: err.Error()}
	}
	bs := BackendSpec{Name: sp.Name}
	var info BackendInfo
	if sp.Name != "auto" {
		var ok bool
		if info, ok = LookupBackend(sp.Name); !ok {
			return BackendSpec{}, fmt.Errorf("nets: %w %q%s (available: auto, %s)", ErrUnknownBackend, sp.Name, spec.Suggest(sp.Name, append([]string{"auto"}, Backends()...)), strings.Join(Backends(), ", "))
		}
	}
	for _, k := range sp.Keys() {
		o, ok := info.Option(k)
		if !ok {
			reason := "unknown (" + sp.Name + " takes no options)"
			if len(info.Options) > 0 {
				reason = "unknown" + spec.Suggest(k, strings.Split(info.keys(), ", ")) + " (" + sp.Name + " takes " + info.keys() + ")"
			}
			return BackendSpec{}, &OptionError{Backend: sp.Name, Key: k, Reason: reason}
		}
		v, bad := o.check(sp.String(k, ""))
		if bad != "" {
			return BackendSpec{}, &OptionError{Backend: sp.Name, Key: k, Reason: bad}
		}
		if bs.Params == nil {
			bs.Params = map[string]string{}
		}
		bs.Params[k] = v
	}
	return bs, nil
}

// Skipped is a backend that "auto" tried and passed over.
type Skipped struct {
	Name string
	Err  error // matches ErrBackendUnavailable when it cannot run here
}

// Choice records what OpenBackendSpec opened and why.
type Choice struct {
	// Requested is the parsed spec ("auto" for automatic choice).
	Requested BackendSpec
	// Backend is the name of the backend opened.
	Backend string
	// Skipped lists, in order, the backends "auto" tried before Backend.
	Skipped []Skipped
	// Detail is how the backend computes (its Describe), if it says; not
	// part of String.
	Detail string
}

// Describer is implemented by backends that can say in a phrase how they
// compute (kernels, threads, algorithms, number format), for logs and
// benchmark reports. OpenBackendSpec puts it in the Choice.
type Describer interface {
	Describe() string
}

// String says in exactly one line what was chosen and why, e.g.
// "cuda unavailable: no CUDA driver: libcuda.so.1 not found (tried: ...); using cpu".
func (c Choice) String() string {
	var b strings.Builder
	for _, s := range c.Skipped {
		what := "failed"
		if errors.Is(s.Err, ErrBackendUnavailable) {
			what = "unavailable"
		}
		fmt.Fprintf(&b, "%s %s: %s; ", s.Name, what, s.Err)
	}
	switch {
	case c.Requested.Name != "auto":
		fmt.Fprintf(&b, "using %s (requested)", c.Requested)
	case len(c.Skipped) == 0:
		fmt.Fprintf(&b, "using %s (auto: the highest-priority backend)", c.Backend)
	default:
		fmt.Fprintf(&b, "using %s", c.Backend)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// OpenBackendSpec opens the backend that spec names for net (see
// ParseBackendSpec). "auto" (or "") tries the registered backends from the
// highest priority down and opens the first that works, recording in the
// Choice why the others were passed over. opts.Params is replaced by the
// spec's options.
//
// Errors match ErrUnknownBackend, ErrBadBackendOption,
// ErrBackendUnavailable (a named backend that cannot run here), or are
// the backend's own failure.
func OpenBackendSpec(s string, net *Net, opts BackendOptions) (Backend, Choice, error) {
	bs, err := ParseBackendSpec(s)
	if err != nil {
		return nil, Choice{}, err
	}
	c := Choice{Requested: bs}
	opts.Params = bs.Params
	if bs.Name != "auto" {
		info, _ := LookupBackend(bs.Name)
		b, err := info.Open(net, opts)
		if err != nil {
			return nil, c, openError(info.Name, err)
		}
		c.Backend, c.Detail = b.Name(), describe(b)
		return b, c, nil
	}
	var errs []error
	for _, info := range BackendInfos() {
		b, err := info.Open(net, opts)
		if err == nil {
			c.Backend, c.Detail = b.Name(), describe(b)
			return b, c, nil
		}
		c.Skipped = append(c.Skipped, Skipped{info.Name, err})
		errs = append(errs, openError(info.Name, err))
	}
	return nil, c, fmt.Errorf("nets: no backend could be opened: %w", errors.Join(errs...))
}

// describe returns b's Describe, or "" when it has none.
func describe(b Backend) string {
	if d, ok := b.(Describer); ok {
		return d.Describe()
	}
	return ""
}

// openError names the backend in an unavailability error (which stays
// wrapped). Other errors name their backend already ("nets: cpu backend:
// ...", "cudabackend: ...") and pass through.
func openError(name string, err error) error {
	if errors.Is(err, ErrBackendUnavailable) {
		return fmt.Errorf("nets: backend %s unavailable: %w", name, err)
	}
	return err
}

// OpenBackend is OpenBackendSpec without the Choice: name is a backend
// spec ("auto", "cpu", "cuda:precision=fp16", ...).
func OpenBackend(name string, net *Net, opts BackendOptions) (Backend, error) {
	b, _, err := OpenBackendSpec(name, net, opts)
	return b, err
}

// CPU backend defaults.
const (
	cpuPreferredBatch = 32
	cpuMaxBatch       = 1024
	cpuMaxThreads     = 64 // kernels' own bound
)

// cpuBackend evaluates on the CPU with Net.Forward (SIMD GEMM kernels,
// threads set by its threads= option, else the kernels' default). It is
// safe for concurrent use: calls
// are serialised by a mutex, since they share the net's scratch memory.
type cpuBackend struct {
	mu       sync.Mutex
	net      *Net
	maxBatch int
}

func init() {
	RegisterBackendInfo(BackendInfo{
		Name:     "cpu",
		Priority: 0,
		Summary:  "the network on the CPU (AVX2/AVX-512 GEMM kernels); always available",
		Options: []BackendOption{{Key: "threads", Min: 1, Max: cpuMaxThreads, Default: "min(GOMAXPROCS, 8)",
			Help: "kernel threads: a batch is split over them, each slice running the whole network, and a single large kernel call too; this backend's own budget (other networks in the process keep theirs)"},
			{Key: "conv", Values: append([]string{"auto"}, convNames...), Default: "auto",
				Help: "3x3 convolution algorithm of inference (Net.SetConvAlgorithm); winograd: F(2x2,3x3), or F(3x4,3x3) in float32 where it pays (the Connect Four board); auto: winograd with the SIMD kernels (faster than im2col there: docs/BENCHMARKS.md), im2col with the generic ones (see AutoConvAlgorithm)"},
			{Key: "precision", Values: precisionNames, Default: "fp32",
				Help: "number format of inference (Net.SetPrecision); bf16: 3x3 convolutions with bfloat16 operands and float32 sums (by the conv algorithm), on AMX tiles or AVX-512 BF16 (VDPBF16PS) where the CPU has them (on AMX 1.3-2.6x the evaluations/s of fp32; VDPBF16PS alone is slower than fp32 on Intel's cores: docs/BENCHMARKS.md) and in slow portable code where not"}},
		Open: func(net *Net, opts BackendOptions) (Backend, error) {
			b, err := NewCPUBackend(net, opts)
			if err != nil {
				return nil, err
			}
			if v, ok := opts.Param("threads"); ok {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return nil, &OptionError{Backend: "cpu", Key: "threads", Reason: fmt.Sprintf("%q is not an integer in 1..%d", v, cpuMaxThreads)}
				}
				net.SetThreads(n)
			}
			a := AutoConvAlgorithm()
			if v, ok := opts.Param("conv"); ok && v != "auto" {
				if a, err = ParseConvAlgorithm(v); err != nil {
					return nil, &OptionError{Backend: "cpu", Key: "conv", Reason: err.Error()}
				}
			}
			net.SetConvAlgorithm(a)
			prec := FP32
			if v, ok := opts.Param("precision"); ok {
				if prec, err = ParsePrecision(v); err != nil {
					return nil, &OptionError{Backend: "cpu", Key: "precision", Reason: err.Error()}
				}
			}
			net.SetPrecision(prec)
			return b, nil
		},
	})
}

// NewCPUBackend wraps net (which the backend then owns: do not call its
// Forward elsewhere) and reserves scratch for opts.MaxBatch samples
// (default 1024).
func NewCPUBackend(net *Net, opts BackendOptions) (Backend, error) {
	if net == nil {
		return nil, errors.New("nets: cpu backend needs a network")
	}
	mb := opts.MaxBatch
	if mb <= 0 {
		mb = cpuMaxBatch
	}
	net.Reserve(mb)
	return &cpuBackend{net: net, maxBatch: mb}, nil
}

// CPUScratchBytes is the inference scratch, in bytes, that a cpu backend
// on net reserves for batches of up to maxBatch rows (Net.Reserve): the
// activations of one row times maxBatch. Callers use it to refuse a
// batch size the machine cannot hold before anything is allocated. It
// may be called before the backend is opened (the net must not be in use
// by another goroutine).
func CPUScratchBytes(net *Net, maxBatch int) float64 {
	if maxBatch <= 0 {
		maxBatch = cpuMaxBatch
	}
	if net.inf.slot == nil {
		net.planSlots()
	}
	per := 0
	for _, p := range net.inf.per {
		per += p
	}
	return 4 * float64(per) * float64(maxBatch)
}

func (b *cpuBackend) Name() string { return "cpu" }
func (b *cpuBackend) Shape() (int, int) {
	return b.net.InputSize(), b.net.PolicySize()
}
func (b *cpuBackend) PreferredBatch() int { return min(cpuPreferredBatch, b.maxBatch) }
func (b *cpuBackend) MaxBatch() int       { return b.maxBatch }

// Describe says which kernels, how many threads, which 3x3 convolution
// algorithm and which number format the backend computes with, and warns
// when bfloat16 runs the portable code.
func (b *cpuBackend) Describe() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	prec := "float32"
	if b.net.Precision() == BF16 {
		prec = "bfloat16 on the " + kernels.BF16Kernels() + " kernels"
		if kernels.BF16Kernels() == "generic" {
			prec += " (portable code, no AVX-512 BF16 kernels in use: hundreds of times slower than float32)"
		}
	}
	return fmt.Sprintf("%s kernels on %d thread(s), 3x3 convolutions by %s in %s", kernels.Current(), b.net.Threads(), b.net.ConvAlgorithm(), prec)
}

// ValueSize implements ValueSizer: the net's value outputs per row.
func (b *cpuBackend) ValueSize() int { return b.net.ValueSize() }

func (b *cpuBackend) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in, p := b.Shape()
	vs := b.net.ValueSize()
	if batch < 1 || batch > b.maxBatch {
		return fmt.Errorf("nets: cpu backend: batch %d outside [1, %d]", batch, b.maxBatch)
	}
	if len(input) < batch*in || len(policy) < batch*p || len(value) < batch*vs {
		return fmt.Errorf("nets: cpu backend: batch %d needs input %d, policy %d, value %d; got %d, %d, %d",
			batch, batch*in, batch*p, batch*vs, len(input), len(policy), len(value))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.net.Forward(batch, input, policy, value)
	return CheckFinite("cpu", batch, p, vs, policy, value)
}

// ErrNonFinite is matched (errors.Is) by the error of a backend whose
// outputs hold a NaN or an infinity: the weights overflow on that input,
// so the network is unusable and no search may go on with its numbers.
var ErrNonFinite = errors.New("network output is not finite")

// CheckFinite is what a backend runs on its outputs after each batch: nil
// when the batch rows' policy logits (policySize a row) and values
// (valueSize a row) are all finite, else an error matching ErrNonFinite
// that names backend and the first row with a NaN or an infinity. Every
// finite batch costs one multiply-add per value (allFinite).
func CheckFinite(backend string, batch, policySize, valueSize int, policy, value []float32) error {
	if valueSize > 1 {
		return checkFiniteRows(backend, batch, policySize, valueSize, policy, value)
	}
	return checkFinite(backend, batch, policySize, policy, value)
}

// checkFinite reports the first of batch rows whose policy logits
// (policySize each) or value is NaN or infinite, naming the backend and
// the row (0-based within the batch).
func checkFinite(backend string, batch, policySize int, policy, value []float32) error {
	if allFinite(value[:batch]) && allFinite(policy[:batch*policySize]) {
		return nil
	}
	for r := range batch {
		if v := value[r]; v != v || math.IsInf(float64(v), 0) {
			return fmt.Errorf("nets: %s backend: %w: row %d of %d has value %v (the weights overflow on this input; retrain or restore the network)",
				backend, ErrNonFinite, r, batch, v)
		}
		for i, v := range policy[r*policySize : (r+1)*policySize] {
			if v != v || math.IsInf(float64(v), 0) {
				return fmt.Errorf("nets: %s backend: %w: row %d of %d has policy logit %d = %v (the weights overflow on this input; retrain or restore the network)",
					backend, ErrNonFinite, r, batch, i, v)
			}
		}
	}
	return nil
}

// checkFiniteRows is checkFinite for rows of valueSize values each.
func checkFiniteRows(backend string, batch, policySize, valueSize int, policy, value []float32) error {
	if allFinite(value[:batch*valueSize]) && allFinite(policy[:batch*policySize]) {
		return nil
	}
	for r := range batch {
		for i, v := range value[r*valueSize : (r+1)*valueSize] {
			if v != v || math.IsInf(float64(v), 0) {
				return fmt.Errorf("nets: %s backend: %w: row %d of %d has value %d = %v (the weights overflow on this input; retrain or restore the network)",
					backend, ErrNonFinite, r, batch, i, v)
			}
		}
	}
	return checkFinite(backend, batch, policySize, policy, value[:batch*valueSize]) // the policy's row
}

// allFinite reports whether every x is finite (neither NaN nor an
// infinity). x*0 is 0 for a finite x and NaN otherwise, and IEEE
// arithmetic (which Go keeps: it does not fold x*0 to 0) carries a NaN
// through every sum, so the sums are NaN exactly when some x is not
// finite. One multiply-add per value on four independent sums: a row of
// Sequence's 700 logits costs 3.9k instructions instead of the 11.6k of
// testing each value (cachegrind), and every evaluation passes here.
func allFinite(xs []float32) bool {
	var a0, a1, a2, a3 float32
	for len(xs) >= 4 {
		a0 += xs[0] * 0
		a1 += xs[1] * 0
		a2 += xs[2] * 0
		a3 += xs[3] * 0
		xs = xs[4:]
	}
	for _, x := range xs {
		a0 += x * 0
	}
	s := a0 + a1 + a2 + a3
	return s == s
}
