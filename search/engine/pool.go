package engine

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/nets/onnx"
)

// Pool shares Engines between network agents: every agent that names the
// same network, backend and game gets the same Engine, so the leaves of
// all their searches (in concurrent games of an arena, say) fill one
// batch stream. Engines are reference-counted and closed when the last
// user releases them. A Pool is safe for concurrent use.
//
// A command makes one Pool (NewPool, with its --backend) and hands it to
// every agent it builds in their agent.Env; the pool is also the
// search.EvaluatorOpener through which `mcts:eval=NET` finds its network.
// The zero Pool is ready to use, with the auto backend and no notices.
type Pool struct {
	opt    PoolOptions
	mu     sync.Mutex
	m      map[poolKey]*pooled
	closed []Usage // engines closed so far, in closing order
}

// PoolOptions configure a Pool.
type PoolOptions struct {
	// Backend is the backend spec of agents that ask for "auto" (or ""):
	// a command's --backend flag, so that specs with options
	// (cpu:threads=1, cuda:device=0,precision=fp16) need not sit inside
	// agent specs, whose commas they would break. Empty means auto.
	Backend string
	// OnOpen, when set, is called (with the pool's lock held) for every
	// engine the pool opens: commands print which network and backend
	// the agents use and why that backend.
	OnOpen func(net nets.Source, backend, choice string)
}

// WithPool returns env carrying a Pool: env itself when it carries one,
// else env with a new private pool. Callers that build agents again and
// again for one run (an arena's games) call it once, so that every game's
// agents share one engine per network instead of opening their own.
func WithPool(env agent.Env) agent.Env {
	if _, ok := agent.Lookup[*Pool](env); ok {
		return env
	}
	return env.With(&Pool{})
}

// NewPool returns an empty pool with options o.
func NewPool(o PoolOptions) *Pool { return &Pool{opt: o} }

// PoolOf returns the Pool that env carries, or a new private one when it
// carries none (a caller that builds a single agent, a test): engines are
// then shared only between the users of that one pool.
func PoolOf(env agent.Env) *Pool {
	if p, ok := agent.Lookup[*Pool](env); ok {
		return p
	}
	return &Pool{}
}

// Usage is what one pooled engine did over its life (or so far).
type Usage struct {
	Net, Backend string
	Choice       string        // how the backend was chosen (one line)
	Evals        int64         // network rows
	Batches      uint64        // backend calls
	MeanBatch    float64       // rows per backend call
	Busy         time.Duration // inside the backend
	Wall         time.Duration // from opening to closing (or now)
}

// EvalsPerSec is the engine's rate over its life.
func (u Usage) EvalsPerSec() float64 { return float64(u.Evals) / max(u.Wall.Seconds(), 1e-9) }

// backendFor resolves an agent's backend option.
func (p *Pool) backendFor(b string) string {
	if b == "" || b == "auto" {
		if p.opt.Backend != "" {
			return p.opt.Backend
		}
		return "auto"
	}
	return b
}

type poolKey struct {
	game, net, backend string
	size, mtime        int64 // of a weights file: a rewritten file is a new network
}

type pooled struct {
	e       *Engine
	src     nets.Source
	refs    int
	backend string
	choice  string
	opened  time.Time
}

func (x *pooled) usage() Usage {
	c := x.e.Counters()
	return Usage{Net: x.src.Desc, Backend: x.backend, Choice: x.choice, Evals: c.Evals, Batches: c.Batch.Batches, MeanBatch: c.Batch.Mean,
		Busy: c.Busy, Wall: time.Since(x.opened)}
}

// ResetUsage forgets the usage of the engines closed so far (a command
// that reports usage calls it when it starts).
func (p *Pool) ResetUsage() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = nil
}

// Usage returns the usage of every engine the pool has closed, then of
// those still open (so far).
func (p *Pool) Usage() []Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := append([]Usage(nil), p.closed...)
	for _, x := range p.m {
		out = append(out, x.usage())
	}
	return out
}

// Lease is one user's hold on a pooled engine.
type Lease struct {
	*Engine
	Source nets.Source // the network's origin and hash
	p      *Pool
	key    poolKey
	once   sync.Once
}

// Release gives the lease back; the engine closes when its last lease is
// released. Release is idempotent.
func (l *Lease) Release() {
	l.once.Do(func() { l.p.release(l.key) })
}

// Acquire returns a lease on the engine for game g, network reference
// netRef (see nets.OpenNet; "random" means no network: uniform priors and
// value 0) and backend name, opening the network and backend on first
// use.
func (p *Pool) Acquire(g games.Game, netRef, backend string) (*Lease, error) {
	backend = p.backendFor(backend)
	k := poolKey{game: g.Spec(), net: netRef, backend: backend}
	if fi, err := os.Stat(netRef); err == nil && !fi.IsDir() {
		k.size, k.mtime = fi.Size(), fi.ModTime().UnixNano()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[poolKey]*pooled{}
	}
	if x, ok := p.m[k]; ok {
		x.refs++
		return &Lease{Engine: x.e, Source: x.src, p: p, key: k}, nil
	}
	e, src, choice, err := open(g, netRef, backend)
	if err != nil {
		return nil, err
	}
	p.m[k] = &pooled{e: e, src: src, refs: 1, backend: e.Backend().Name(), choice: choice, opened: time.Now()}
	if p.opt.OnOpen != nil {
		p.opt.OnOpen(src, e.Backend().Name(), choice)
	}
	return &Lease{Engine: e, Source: src, p: p, key: k}, nil
}

func (p *Pool) release(k poolKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	x := p.m[k]
	if x == nil {
		return
	}
	if x.refs--; x.refs == 0 {
		delete(p.m, k)
		x.e.Close()
		p.closed = append(p.closed, x.usage())
	}
}

// Open returns the number of engines the pool holds open.
func (p *Pool) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

// open opens the network and backend and starts an engine sized for many
// concurrent searches.
func open(g games.Game, netRef, backend string) (*Engine, nets.Source, string, error) {
	obs := 1
	for _, d := range g.ObservationShape() {
		obs *= d
	}
	var be nets.Backend
	var src nets.Source
	choice := "random backend"
	if netRef == "random" || backend == "random" {
		be = nets.NewRandomBackend(obs, g.NumActions(), 0, nets.BackendOptions{MaxBatch: 256})
		src = nets.Source{Ref: "random", Desc: "random backend (no network)", SHA256: "random"}
	} else if nets.IsONNXPath(netRef) {
		var err error
		if be, src, choice, err = onnx.OpenBackend(netRef, g, backend, 256); err != nil {
			return nil, src, "", err
		}
	} else {
		net, s, err := nets.OpenNet(netRef, g)
		if err != nil {
			return nil, s, "", err
		}
		src = s
		var c nets.Choice
		if be, c, err = nets.OpenBackendSpec(backend, net, nets.BackendOptions{MaxBatch: 256}); err != nil {
			return nil, src, "", fmt.Errorf("backend %s: %w", backend, err)
		}
		choice = c.String()
	}
	e, err := New(g, be, Options{Batch: min(256, be.MaxBatch()), Slots: poolSlots(obs + g.NumActions()), Paced: true})
	return e, src, choice, err
}

// poolSlots sizes a shared engine's ring: room for thousands of searches'
// leaves, within about 64 MiB of rows.
func poolSlots(rowFloats int) int {
	return max(1024, min(8192, (64<<20)/(4*rowFloats)))
}
