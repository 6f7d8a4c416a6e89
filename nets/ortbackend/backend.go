package ortbackend

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/canopy-go/canopy/nets"
)

// Options configure Open. Zero fields take defaults.
type Options struct {
	// Model is the path of the ONNX model file (required).
	Model string
	// Provider is the execution provider (default CPU).
	Provider Provider
	// Device is the GPU ordinal of the cuda and tensorrt providers.
	Device int
	// Threads is the number of intra-op threads of this backend's session
	// (its own pool, not shared with other sessions or with package
	// kernels); default min(GOMAXPROCS, 8).
	Threads int
	// MaxBatch bounds the batch size (default 1024; 1 for a model whose
	// batch axis is fixed at 1).
	MaxBatch int
	// Spin lets the intra-op threads spin-wait for work, ONNX Runtime's
	// own default. Off, they park (session.intra_op.allow_spinning=0):
	// measured on a shared 2-core machine, spinning at 2 threads cost
	// about twice the CPU per evaluation and fewer evaluations/s
	// (docs/BENCHMARKS.md), and Canopy's searches need those cores.
	Spin bool
}

// Backend defaults.
const (
	defaultMaxBatch = 1024
	preferredBatch  = 32
	maxThreads      = 64
	maxDevice       = 255
)

// Backend runs an ONNX policy-value model with ONNX Runtime. It is safe
// for concurrent use: Evaluate calls are serialised by a mutex (ONNX
// Runtime's Run is thread-safe, but one Run at a time already keeps the
// session's intra-op threads busy, and the name and value arrays passed
// to Run are the backend's own). Close releases every ONNX Runtime
// handle; the backend does not rely on finalizers.
type Backend struct {
	mu       sync.Mutex
	s        *session
	opts     Options
	input    Tensor // the model's input
	policy   Tensor // the policy logits output
	value    Tensor // the value output ([B] or [B,1]; [B,P] for a per-player head)
	in, pol  int    // per-row input and policy sizes
	vsize    int    // values per row: 1, or net's ValueSize (nets.ValueSizer)
	maxBatch int

	// Arguments of Run, reused by every call (C pointers only: the names
	// are ONNX Runtime's strings, the values its OrtValue handles).
	inNames  [1]uintptr
	outNames [2]uintptr // policy, value
	inVals   [1]uintptr
	outVals  [2]uintptr
	inShape  []int64
	polShape []int64
	valShape []int64
	pin      runtime.Pinner
}

// Open loads ONNX Runtime (Load), opens a session on o.Model with the
// provider, and matches the model's input and outputs to a policy-value
// network: one float32 input [B, ...] and, among the outputs, the policy
// logits [B, A] and the value [B] or [B, 1] (told apart by size; by the
// names "policy" and "value" when sizes do not decide). When net is not
// nil the model must have its input and policy sizes (the game's).
func Open(net *nets.Net, o Options) (*Backend, error) {
	if o.Model == "" {
		return nil, errors.New("ortbackend: no model file: ort runs ONNX models (--backend ort:model=FILE.onnx)")
	}
	if o.Provider == "" {
		o.Provider = CPU
	}
	if o.Threads <= 0 {
		o.Threads = min(runtime.GOMAXPROCS(0), 8)
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = defaultMaxBatch
	}
	l, err := Load()
	if err != nil {
		return nil, err
	}
	s, err := openSession(l, o)
	if err != nil {
		return nil, err
	}
	b := &Backend{s: s, opts: o, vsize: 1}
	if net != nil {
		b.vsize = net.ValueSize() // a per-player value head: [B, players]
	}
	if err := b.match(net); err != nil {
		s.close()
		return nil, fmt.Errorf("ortbackend: model %s: %w", o.Model, err)
	}
	return b, nil
}

// match picks the model's input and outputs and checks them against net.
func (b *Backend) match(net *nets.Net) error {
	s := b.s
	if len(s.inputs) != 1 {
		return fmt.Errorf("has %d inputs (%s); want one, the observation batch [B, C, H, W]", len(s.inputs), tensorList(s.inputs))
	}
	b.input = s.inputs[0]
	if err := checkBatchAxis(b.input); err != nil {
		return fmt.Errorf("input %w", err)
	}
	b.in = int(b.input.rowSize())
	if net != nil && b.in != net.InputSize() {
		return fmt.Errorf("input %s takes %d values per position; the network it stands in for takes %d (export the model for this game and encoding)",
			b.input, b.in, net.InputSize())
	}
	var vals, pols []int
	for i, t := range s.outputs {
		if err := checkBatchAxis(t); err != nil {
			return fmt.Errorf("output %w", err)
		}
		switch n := int(t.rowSize()); {
		case n == b.vsize && len(t.Shape) <= 2:
			vals = append(vals, i)
		case net == nil || n == net.PolicySize():
			pols = append(pols, i)
		}
	}
	vi, err := pick(s.outputs, vals, "value", b.vsize)
	if err != nil {
		return err
	}
	pi, err := pick(s.outputs, pols, "policy", b.vsize)
	if err != nil {
		if net != nil {
			return fmt.Errorf("%w (the game has %d actions)", err, net.PolicySize())
		}
		return err
	}
	b.value, b.policy = s.outputs[vi], s.outputs[pi]
	b.pol = int(b.policy.rowSize())
	b.maxBatch = b.opts.MaxBatch
	if b.input.Shape[0] == 1 {
		b.maxBatch = 1
	}
	b.inNames[0] = s.cName(true, 0)
	b.outNames = [2]uintptr{s.cName(false, pi), s.cName(false, vi)}
	b.inShape = append([]int64(nil), b.input.Shape...)
	b.polShape = append([]int64(nil), b.policy.Shape...)
	b.valShape = append([]int64(nil), b.value.Shape...)
	return nil
}

// checkBatchAxis accepts a tensor whose first axis is free (the batch) or
// 1, and whose other axes are fixed.
func checkBatchAxis(t Tensor) error {
	if len(t.Shape) < 1 {
		return fmt.Errorf("%s has no batch axis", t)
	}
	if d := t.Shape[0]; d != -1 && d != 1 {
		return fmt.Errorf("%s has a fixed batch of %d: export it with a dynamic batch axis (torch.onnx.export(..., dynamic_axes={name: {0: \"batch\"}}))", t, d)
	}
	for _, d := range t.Shape[1:] {
		if d <= 0 {
			return fmt.Errorf("%s has a free axis after the batch: export it with fixed sizes except the batch", t)
		}
	}
	return nil
}

// pick chooses one of the outputs idx for role ("policy" or "value"):
// the only one, or the only one whose name contains role. vsize is the
// values per row wanted.
func pick(outs []Tensor, idx []int, role string, vsize int) (int, error) {
	want := "one value per position ([B] or [B,1])"
	if vsize > 1 {
		want = fmt.Sprintf("one value per player ([B,%d]: the network has a per-player value head)", vsize)
	}
	if role == "policy" {
		want = "the policy logits ([B, actions])"
	}
	switch len(idx) {
	case 1:
		return idx[0], nil
	case 0:
		return 0, fmt.Errorf("no output fits %s: outputs are %s", want, tensorList(outs))
	}
	found := -1
	for _, i := range idx {
		if strings.Contains(strings.ToLower(outs[i].Name), role) {
			if found >= 0 {
				found = -2
				break
			}
			found = i
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("%d outputs fit %s (%s) and names do not decide: name exactly one of them with %q", len(idx), want, tensorList(outs), role)
	}
	return found, nil
}

func tensorList(ts []Tensor) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

func (b *Backend) Name() string        { return "ort" }
func (b *Backend) Shape() (int, int)   { return b.in, b.pol }
func (b *Backend) PreferredBatch() int { return min(preferredBatch, b.maxBatch) }
func (b *Backend) MaxBatch() int       { return b.maxBatch }

// ValueSize implements nets.ValueSizer: 1, or the players of a per-player
// value head (values row-major, the mover first).
func (b *Backend) ValueSize() int { return b.vsize }

// Library is the ONNX Runtime library the backend runs on.
func (b *Backend) Library() *Lib { return b.s.lib }

// Model returns the model's input and the outputs used as policy and value.
func (b *Backend) Model() (input, policy, value Tensor) { return b.input, b.policy, b.value }

// Describe says which library, provider, threads and model the backend
// runs.
func (b *Backend) Describe() string {
	l := b.s.lib
	what := fmt.Sprintf("%d intra-op thread(s)", b.opts.Threads)
	if b.opts.Spin {
		what += " (spinning)"
	}
	if b.opts.Provider != CPU {
		what = fmt.Sprintf("device %d", b.opts.Device)
	}
	return fmt.Sprintf("ONNX Runtime %s (%s), provider %s on %s, model %s: %s -> %s, %s",
		l.Version, l.Path, b.opts.Provider, what, b.opts.Model, b.input, b.policy, b.value)
}

// Evaluate runs batch rows. The tensors are made over the caller's
// slices (no copies): input, policy and value are pinned (runtime.Pinner)
// for the duration of Run, which reads and writes them directly.
func (b *Backend) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if batch < 1 || batch > b.maxBatch {
		return fmt.Errorf("ortbackend: batch %d outside [1, %d]", batch, b.maxBatch)
	}
	if len(input) < batch*b.in || len(policy) < batch*b.pol || len(value) < batch*b.vsize {
		return fmt.Errorf("ortbackend: batch %d needs input %d, policy %d, value %d; got %d, %d, %d",
			batch, batch*b.in, batch*b.pol, batch*b.vsize, len(input), len(policy), len(value))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.s.sess == 0 {
		return errors.New("ortbackend: Evaluate after Close")
	}
	err := b.run(batch, input, policy, value)
	if err != nil {
		return err
	}
	return checkFinite(batch, b.pol, b.vsize, policy, value)
}

// run makes the three tensors over the pinned slices, runs the session
// and releases the tensors. Called with mu held.
func (b *Backend) run(batch int, input, policy, value []float32) error {
	l, s := b.s.lib, b.s
	b.pin.Pin(&input[0])
	b.pin.Pin(&policy[0])
	b.pin.Pin(&value[0])
	defer b.pin.Unpin()
	b.inShape[0], b.polShape[0], b.valShape[0] = int64(batch), int64(batch), int64(batch)
	defer func() {
		for _, v := range [...]*uintptr{&b.inVals[0], &b.outVals[0], &b.outVals[1]} {
			l.release(apiReleaseValue, *v)
			*v = 0
		}
	}()
	if err := b.tensor(&b.inVals[0], input[:batch*b.in], b.inShape); err != nil {
		return err
	}
	if err := b.tensor(&b.outVals[0], policy[:batch*b.pol], b.polShape); err != nil {
		return err
	}
	if err := b.tensor(&b.outVals[1], value[:batch*b.vsize], b.valShape); err != nil {
		return err
	}
	err := l.call("Run", apiRun, s.sess, 0,
		uintptr(unsafe.Pointer(&b.inNames[0])), uintptr(unsafe.Pointer(&b.inVals[0])), 1,
		uintptr(unsafe.Pointer(&b.outNames[0])), 2, uintptr(unsafe.Pointer(&b.outVals[0])))
	if err != nil {
		return fmt.Errorf("ortbackend: batch %d: %w", batch, err)
	}
	return nil
}

// tensor makes an OrtValue over data (which must stay pinned while the
// value lives) with shape, into *out.
func (b *Backend) tensor(out *uintptr, data []float32, shape []int64) error {
	return b.s.lib.call("CreateTensorWithDataAsOrtValue", apiCreateTensorWithDataAsOrtValue, b.s.mem,
		uintptr(unsafe.Pointer(&data[0])), uintptr(4*len(data)),
		uintptr(unsafe.Pointer(&shape[0])), uintptr(len(shape)), onnxFloat, uintptr(unsafe.Pointer(out)))
}

// Close releases the session, its options, the memory info and the
// environment. Safe to call more than once; Evaluate fails afterwards.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.s.close()
	return nil
}

// valueSlack is how far outside [-1, 1] a value may stray (rounding in a
// tanh) before the model is refused.
const valueSlack = 1e-5

// ErrValueRange is matched (errors.Is) by the error of Evaluate when the
// model's value leaves [-1, 1]: its value head does not end in tanh (or
// gives something else, such as a win probability or a score).
var ErrValueRange = errors.New("model value outside [-1, 1]")

// checkFinite reports the first row whose outputs are NaN or infinite, or
// whose value is outside [-1, 1] (beyond valueSlack).
func checkFinite(batch, pol, vsize int, policy, value []float32) error {
	for r := range batch {
		for _, x := range value[r*vsize : (r+1)*vsize] {
			if v := float64(x); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("ortbackend: %w: row %d of %d has value %v", nets.ErrNonFinite, r, batch, v)
			} else if math.Abs(v) > 1+valueSlack {
				return fmt.Errorf("ortbackend: %w: row %d of %d has value %v (Canopy's backends give values in [-1, 1] from the side to move: end the model's value head in tanh)",
					ErrValueRange, r, batch, v)
			}
		}
		for i, x := range policy[r*pol : (r+1)*pol] {
			if v := float64(x); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("ortbackend: %w: row %d of %d has policy logit %d = %v", nets.ErrNonFinite, r, batch, i, v)
			}
		}
	}
	return nil
}

// ParseProvider reads a provider name: cpu, cuda or tensorrt ("" is cpu).
func ParseProvider(s string) (Provider, error) {
	for _, p := range []Provider{CPU, CUDA, TensorRT} {
		if strings.EqualFold(s, string(p)) {
			return p, nil
		}
	}
	if s == "" {
		return CPU, nil
	}
	return "", fmt.Errorf("ortbackend: unknown provider %q (want cpu, cuda or tensorrt)", s)
}

// Priority of "ort" in the backend registry: below cpu (0), so "auto"
// never opens it (cpu always opens). See the package documentation.
const Priority = -10

func init() {
	nets.RegisterBackendInfo(nets.BackendInfo{
		Name:     "ort",
		Priority: Priority,
		Summary:  "an ONNX model in ONNX Runtime (libonnxruntime loaded at run time, no cgo; $" + EnvLib + "); never chosen by auto",
		Options: []nets.BackendOption{
			{Key: "model", Text: true, Default: "none: required", Help: "the ONNX model file to run (its input and policy sizes must be the game's; a Canopy network becomes one with `canopy net export NET --onnx OUT.onnx`)"},
			{Key: "provider", Values: []string{string(CPU), string(CUDA), string(TensorRT)}, Default: "cpu",
				Help: "execution provider; cuda and tensorrt need a GPU build of ONNX Runtime (onnxruntime-gpu) and the CUDA/TensorRT libraries"},
			{Key: "device", Min: 0, Max: maxDevice, Default: "0", Help: "GPU ordinal of the cuda and tensorrt providers"},
			{Key: "threads", Min: 1, Max: maxThreads, Default: "min(GOMAXPROCS, 8)", Help: "intra-op threads of this backend's own ONNX Runtime pool (not process-wide)"},
			{Key: "spin", Values: []string{"true", "false"}, Default: "false", Help: "let the intra-op threads spin-wait for work (ONNX Runtime's own default); false parks them, leaving the cores to the searches (measured: less CPU per evaluation on a shared machine)"},
		},
		Open: openSpec,
	})
}

// openSpec is the registered factory. A missing library or provider is
// reported as unavailable (nets.Unavailable); a missing model option is
// a bad option.
func openSpec(net *nets.Net, o nets.BackendOptions) (nets.Backend, error) {
	opts, err := specOptions(o)
	if err != nil {
		return nil, err
	}
	b, err := Open(net, opts)
	var nf *NotFoundError
	var pe *ProviderError
	switch {
	case err == nil:
		return b, nil
	case errors.As(err, &nf), errors.As(err, &pe):
		return nil, nets.Unavailable(err)
	}
	return nil, err
}

// specOptions reads Options from the spec's checked params.
func specOptions(o nets.BackendOptions) (Options, error) {
	opts := Options{MaxBatch: o.MaxBatch, Device: o.Device}
	m, ok := o.Param("model")
	if !ok || m == "" {
		return opts, &nets.OptionError{Backend: "ort", Key: "model",
			Reason: "required: ort runs ONNX models, name one with --backend ort:model=FILE.onnx (a Canopy network becomes one with `canopy net export NET --onnx OUT.onnx`)"}
	}
	opts.Model = m
	if v, ok := o.Param("provider"); ok {
		p, err := ParseProvider(v)
		if err != nil {
			return opts, &nets.OptionError{Backend: "ort", Key: "provider", Reason: err.Error()}
		}
		opts.Provider = p
	}
	if v, ok := o.Param("spin"); ok {
		switch strings.ToLower(v) {
		case "true":
			opts.Spin = true
		case "false":
		default:
			return opts, &nets.OptionError{Backend: "ort", Key: "spin", Reason: fmt.Sprintf("%q is not one of true|false", v)}
		}
	}
	for _, k := range []struct {
		key string
		dst *int
		min int
		max int
	}{{"device", &opts.Device, 0, maxDevice}, {"threads", &opts.Threads, 1, maxThreads}} {
		if v, ok := o.Param(k.key); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < k.min || n > k.max {
				return opts, &nets.OptionError{Backend: "ort", Key: k.key, Reason: fmt.Sprintf("%q is not an integer in %d..%d", v, k.min, k.max)}
			}
			*k.dst = n
		}
	}
	return opts, nil
}
