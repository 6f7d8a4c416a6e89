package nets

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Backend evaluates a policy-value network on batches. It is built around
// the batch: the caller fills input with batch planar observations
// (inputSize floats each) and gets batch x policySize policy logits and
// batch values in [-1, 1] in memory it owns.
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

// BackendOptions configure a backend. Zero fields take the backend's
// defaults.
type BackendOptions struct {
	// MaxBatch bounds the batch size (memory is reserved for it).
	MaxBatch int
	// Device selects a device for accelerator backends (ignored by cpu).
	Device int
}

// BackendFactory opens a backend for net.
type BackendFactory func(net *Net, opts BackendOptions) (Backend, error)

type backendReg struct {
	name     string
	priority int
	open     BackendFactory
}

var (
	backendMu sync.RWMutex
	backends  = map[string]backendReg{}
)

// RegisterBackend adds a backend factory. "auto" tries backends from the
// highest priority down and keeps the first that opens; the CPU backend
// has priority 0, so accelerators register with higher ones. A duplicate
// or reserved name panics (a programming error caught at init).
func RegisterBackend(name string, priority int, open BackendFactory) {
	backendMu.Lock()
	defer backendMu.Unlock()
	if _, dup := backends[name]; dup || name == "auto" || name == "" {
		panic("nets: duplicate or reserved backend name " + name)
	}
	backends[name] = backendReg{name, priority, open}
}

// Backends returns the registered names, highest priority first.
func Backends() []string {
	backendMu.RLock()
	defer backendMu.RUnlock()
	regs := make([]backendReg, 0, len(backends))
	for _, r := range backends {
		regs = append(regs, r)
	}
	sort.Slice(regs, func(i, j int) bool {
		if regs[i].priority != regs[j].priority {
			return regs[i].priority > regs[j].priority
		}
		return regs[i].name < regs[j].name
	})
	names := make([]string, len(regs))
	for i, r := range regs {
		names[i] = r.name
	}
	return names
}

// OpenBackend opens the named backend for net; "auto" (or "") picks the
// highest-priority backend that opens, falling back down the list.
func OpenBackend(name string, net *Net, opts BackendOptions) (Backend, error) {
	if name == "" || name == "auto" {
		var errs []error
		for _, n := range Backends() {
			b, err := OpenBackend(n, net, opts)
			if err == nil {
				return b, nil
			}
			errs = append(errs, fmt.Errorf("%s: %w", n, err))
		}
		return nil, fmt.Errorf("nets: no backend could be opened: %w", errors.Join(errs...))
	}
	backendMu.RLock()
	r, ok := backends[name]
	backendMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("nets: unknown backend %q (available: auto, %s)", name, strings.Join(Backends(), ", "))
	}
	return r.open(net, opts)
}

// CPU backend defaults.
const (
	cpuPreferredBatch = 32
	cpuMaxBatch       = 1024
)

// cpuBackend evaluates on the CPU with Net.Forward (SIMD GEMM kernels,
// threads set by kernels.SetThreads). It is safe for concurrent use: calls
// are serialised by a mutex, since they share the net's scratch memory.
type cpuBackend struct {
	mu       sync.Mutex
	net      *Net
	maxBatch int
}

func init() {
	RegisterBackend("cpu", 0, func(net *Net, opts BackendOptions) (Backend, error) {
		return NewCPUBackend(net, opts)
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

func (b *cpuBackend) Name() string { return "cpu" }
func (b *cpuBackend) Shape() (int, int) {
	return b.net.InputSize(), b.net.PolicySize()
}
func (b *cpuBackend) PreferredBatch() int { return min(cpuPreferredBatch, b.maxBatch) }
func (b *cpuBackend) MaxBatch() int       { return b.maxBatch }

func (b *cpuBackend) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in, p := b.Shape()
	if batch < 1 || batch > b.maxBatch {
		return fmt.Errorf("nets: cpu backend: batch %d outside [1, %d]", batch, b.maxBatch)
	}
	if len(input) < batch*in || len(policy) < batch*p || len(value) < batch {
		return fmt.Errorf("nets: cpu backend: batch %d needs input %d, policy %d, value %d; got %d, %d, %d",
			batch, batch*in, batch*p, batch, len(input), len(policy), len(value))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.net.Forward(batch, input, policy, value)
	return nil
}
