package selfplay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/canopy-go/canopy/batcher"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
)

// EngineOptions configure an Engine. Zero fields take the defaults.
type EngineOptions struct {
	// Workers is the number of search goroutines. Default GOMAXPROCS.
	Workers int
	// Leaves is the number of leaves one tree has in flight (virtual
	// loss). Default 1.
	Leaves int
	// Batch is the batcher's MaxBatch. Default: the backend's preferred.
	Batch int
	// Wait is the batcher's wait for a fuller batch (see batcher.Options).
	// Default: none (-1): workers submit every leaf they can before they
	// block, so rows that are not ready now only come after this batch's
	// results; the batch grows on its own while the backend computes.
	Wait time.Duration
	// Slots is the batcher ring size; default covers every leaf in flight.
	// Set it from the expected number of trees with SlotsFor.
	Slots int
}

// SlotsFor returns a ring size for trees trees with leaves leaves each.
func SlotsFor(trees, leaves int) int { return trees*max(leaves, 1) + trees + 64 }

// Engine is a batcher in front of a backend plus counters. Runs (Run,
// Analyze) on one Engine must not overlap.
type Engine struct {
	game    games.Game
	be      *TimedBackend
	b       *batcher.Batcher
	opt     EngineOptions
	inSize  int
	polSize int

	nodes atomic.Int64 // simulations backed up
	evals atomic.Int64 // network rows submitted
}

// NewEngine starts an engine for g on backend be. The backend's shape
// must match g's observation size and action count.
func NewEngine(g games.Game, be nets.Backend, opt EngineOptions) (*Engine, error) {
	in, ps := be.Shape()
	obs := 1
	for _, d := range g.ObservationShape() {
		obs *= d
	}
	if in != obs || ps != g.NumActions() {
		return nil, fmt.Errorf("selfplay: backend %s takes %d inputs and %d policy logits, but %s has %d observation values and %d actions",
			be.Name(), in, ps, g.Spec(), obs, g.NumActions())
	}
	if g.Type().Dynamics == games.Simultaneous {
		return nil, fmt.Errorf("selfplay: %s has simultaneous moves; use its sequential view (e.g. sushigo-seq)", g.Spec())
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Leaves <= 0 {
		opt.Leaves = 1
	}
	if opt.Slots <= 0 {
		opt.Slots = SlotsFor(64, opt.Leaves)
	}
	if opt.Wait == 0 {
		opt.Wait = -1
	}
	tb := NewTimedBackend(be)
	b, err := batcher.New(tb, batcher.Options{MaxBatch: opt.Batch, Wait: opt.Wait, Slots: opt.Slots})
	if err != nil {
		return nil, err
	}
	return &Engine{game: g, be: tb, b: b, opt: opt, inSize: in, polSize: ps}, nil
}

// Close stops the batcher.
func (e *Engine) Close() error { return e.b.Close() }

// Options returns the options with defaults filled in.
func (e *Engine) Options() EngineOptions { return e.opt }

// Counters is a snapshot of an engine's work so far.
type Counters struct {
	Nodes, Evals int64         // simulations backed up, network rows
	Batch        batcher.Stats // batch fill and latencies
	Busy         time.Duration // time spent inside the backend
}

// Counters returns the engine's counters.
func (e *Engine) Counters() Counters {
	return Counters{Nodes: e.nodes.Load(), Evals: e.evals.Load(), Batch: e.b.Stats(), Busy: e.be.Busy()}
}

// rootEval is the per-job Evaluator that hands Tree.Prepare the root's
// network evaluation computed through the batch stream.
type rootEval struct {
	value  []float64
	priors []float32
	ok     bool // priors are valid
}

func (r *rootEval) Evaluate(_ *search.EvalContext, _ games.State, value []float64, priors []float32) bool {
	copy(value, r.value)
	if priors == nil || !r.ok {
		return false
	}
	copy(priors, r.priors)
	return true
}

// leaf is one request in flight: a walker's leaf or a job's root.
type leaf struct {
	j      *job
	w      *search.Walker // nil for the root evaluation
	mask   games.Mask     // legal actions of the evaluated state
	mover  int            // whose view the observation and value take
	priors bool           // the result's policy applies (decision state)
	tag    uint64         // index in the worker's leaf table
}

// job is one search in progress: a tree, its root and its walkers. A job
// belongs to one worker goroutine; only that goroutine touches it while it
// runs.
type job struct {
	tree    *search.Tree
	root    games.State // position to search (owned by the job's owner)
	budget  *atomic.Int64
	walkers []*leaf
	rootL   *leaf
	rootEv  *rootEval

	prepared bool // root expanded
	nsel     int  // leaves selected in the current step
	nsub     int  // of those, submitted (ErrFull may interrupt)
	pending  int  // submitted, not yet completed
	claimed  int  // simulations claimed in the current step

	done func(w *worker, j *job) // called on the owner goroutine when the budget is spent
}

// worker is one search goroutine's state.
type worker struct {
	e       *Engine
	client  *batcher.Client
	leaves  []*leaf // by tag
	comps   []batcher.Completion
	ready   []*job
	blocked []*job
	err     error
}

func (e *Engine) newWorker() *worker {
	return &worker{e: e, client: batcher.NewClient(e.b.Slots()), comps: make([]batcher.Completion, 256)}
}

// newJob makes a job with nLeaves leaf records registered in w's table.
// Walkers are attached per tree by setTree.
func (w *worker) newJob(nLeaves int) *job {
	g := w.e.game
	j := &job{rootEv: &rootEval{value: make([]float64, g.NumPlayers()), priors: make([]float32, g.NumActions())}}
	mk := func() *leaf {
		l := &leaf{j: j, mask: games.NewMask(g.NumActions()), tag: uint64(len(w.leaves))}
		w.leaves = append(w.leaves, l)
		return l
	}
	j.rootL = mk()
	for range nLeaves {
		j.walkers = append(j.walkers, mk())
	}
	return j
}

// setTree attaches tree t to j with fresh walkers seeded from seed.
func (j *job) setTree(t *search.Tree, seed uint64) {
	j.tree = t
	for i, l := range j.walkers {
		l.w = t.NewWalker(seed + uint64(i)*0x9e3779b97f4a7c15)
	}
	j.prepared = false
}

// start queues j to search j.root (after its root evaluation unless it is
// already prepared).
func (w *worker) start(j *job) {
	j.nsel, j.nsub, j.pending = 0, 0, 0
	w.ready = append(w.ready, j)
}

// loop runs until no job is ready or in flight, or ctx ends (then it
// drains its requests and returns ctx.Err()).
func (w *worker) loop(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			w.drain()
			return err
		}
		for len(w.ready) > 0 && w.err == nil {
			j := w.ready[len(w.ready)-1]
			w.ready = w.ready[:len(w.ready)-1]
			w.step(j)
		}
		if w.err != nil {
			w.drain()
			return w.err
		}
		if w.client.InFlight() == 0 {
			if len(w.blocked) == 0 {
				return nil
			}
			runtime.Gosched()
		} else {
			n, err := w.client.Wait(ctx, w.comps)
			if err != nil {
				continue // ctx ended: drained at the top
			}
			for _, c := range w.comps[:n] {
				w.complete(c)
			}
		}
		if len(w.blocked) > 0 {
			w.ready = append(w.ready, w.blocked...)
			w.blocked = w.blocked[:0]
		}
	}
}

// drain collects and releases every request still in flight.
func (w *worker) drain() {
	for w.client.InFlight() > 0 {
		n, _ := w.client.Wait(context.Background(), w.comps)
		for _, c := range w.comps[:n] {
			w.e.b.Release(c.Ticket)
		}
	}
}

// submit reserves a slot for l, writes the observation and commits. It
// returns false on ErrFull (the caller retries later).
func (w *worker) submit(l *leaf, s games.State) bool {
	t, row, err := w.e.b.Reserve(w.client, l.tag)
	if err != nil {
		if !errors.Is(err, batcher.ErrFull) {
			w.err = err
		}
		return false
	}
	s.Observation(l.mover, row)
	w.e.b.Commit(t)
	w.e.evals.Add(1)
	return true
}

// classify sets l's mover, legal mask and whether priors apply for the
// decision state s. Chance states are first advanced by sampling (s is
// the walker's scratch copy); it reports false when that reached a
// terminal state, whose returns are then in l.w.Value.
func classify(l *leaf, s games.State) bool {
	for s.CurrentPlayer() == games.ChancePlayer {
		s.Apply(s.(games.ChanceState).SampleChance(l.w.Ctx.Rng))
	}
	if s.IsTerminal() {
		l.w.Ctx.Terminal(s, l.w.Value)
		return false
	}
	l.priors = true
	p := s.CurrentPlayer()
	if p < 0 { // simultaneous: player 0's view, no priors
		p, l.priors = 0, false
	}
	l.mover = p
	if l.priors {
		s.Legal(l.mask)
	}
	return true
}

// step advances job j: root evaluation, or one lock-step of leaves.
func (w *worker) step(j *job) {
	if !j.prepared {
		l := j.rootL
		l.mover = j.root.CurrentPlayer()
		l.priors = true
		j.root.Legal(l.mask)
		if !w.submit(l, j.root) && w.err == nil {
			w.blocked = append(w.blocked, j)
		}
		return
	}
	t := j.tree
	if j.nsel == 0 {
		// (1) select up to Leaves leaves; terminal ones are backed up now.
		for j.nsel < len(j.walkers) {
			if j.budget.Add(-1) < 0 {
				j.budget.Add(1)
				break
			}
			j.claimed++
			l := j.walkers[j.nsel]
			if !t.SelectLeaf(l.w) {
				t.Backup(l.w, l.w.Value, nil)
				w.e.nodes.Add(1)
				continue
			}
			if !classify(l, l.w.State) {
				t.Backup(l.w, l.w.Value, nil)
				w.e.nodes.Add(1)
				continue
			}
			j.nsel++
		}
		if j.nsel == 0 {
			if j.done != nil {
				j.done(w, j)
			}
			return
		}
	}
	// (2) submit the selected leaves not yet sent.
	for j.nsub < j.nsel {
		l := j.walkers[j.nsub]
		if !w.submit(l, l.w.State) {
			if w.err == nil {
				w.blocked = append(w.blocked, j)
			}
			return
		}
		j.nsub++
		j.pending++
	}
}

// complete handles one finished request.
func (w *worker) complete(c batcher.Completion) {
	b := w.e.b
	l := w.leaves[c.Tag]
	pol, v, err := b.Result(c.Ticket)
	if err != nil {
		b.Release(c.Ticket)
		if w.err == nil {
			w.err = err
		}
		return
	}
	j := l.j
	if l.w == nil {
		re := j.rootEv
		fillValue(re.value, l.mover, v)
		re.ok = maskedSoftmax(pol, l.mask, re.priors)
		b.Release(c.Ticket)
		j.tree.Prepare(j.root)
		j.prepared = true
		w.ready = append(w.ready, j)
		return
	}
	fillValue(l.w.Value, l.mover, v)
	if l.priors {
		maskedSoftmax(pol, l.mask, l.w.Priors)
	}
	b.Release(c.Ticket)
	j.pending--
	if j.pending > 0 || j.nsub < j.nsel {
		return
	}
	// (3) back up the step's leaves in selection order.
	for _, l := range j.walkers[:j.nsel] {
		var pri []float32
		if l.priors {
			pri = l.w.Priors
		}
		j.tree.Backup(l.w, l.w.Value, pri)
	}
	w.e.nodes.Add(int64(j.nsel))
	j.nsel, j.nsub = 0, 0
	w.ready = append(w.ready, j)
}

// maskedSoftmax is nets.MaskedSoftmax with a fast path for the case
// where every legal logit is the same finite number (the random backend,
// or an untrained net's flat policy): the result is then exactly what
// nets.MaskedSoftmax computes, exp(0)/k = float32(1/k) for each legal
// action, without k calls to math.Exp.
func maskedSoftmax(logits []float32, legal games.Mask, probs []float32) bool {
	k, v, same := 0, float32(0), true
	for a := range legal.All() {
		if int(a) >= len(logits) {
			continue
		}
		if k == 0 {
			v = logits[a]
		} else if logits[a] != v {
			same = false
			break
		}
		k++
	}
	if !same || k == 0 || math.IsInf(float64(v), 0) || v != v {
		return nets.MaskedSoftmax(logits, legal, probs)
	}
	clear(probs[:len(logits)])
	p := float32(1 / float64(k))
	for a := range legal.All() {
		if int(a) < len(logits) {
			probs[a] = p
		}
	}
	return true
}

// fillValue writes the per-player value vector for a network value v
// from mover's view: v for the mover, -v/(players-1) for the others.
func fillValue(dst []float64, mover int, v float32) {
	x := math.Max(-1, math.Min(1, float64(v)))
	if len(dst) == 1 {
		dst[0] = x
		return
	}
	o := -x / float64(len(dst)-1)
	for i := range dst {
		dst[i] = o
	}
	dst[mover] = x
}

// runWorkers runs fn's jobs on n workers: setup(i, w) creates and starts
// worker i's jobs; the workers then loop until all their work is done.
// The first error (or ctx's) is returned.
func (e *Engine) runWorkers(ctx context.Context, n int, setup func(i int, w *worker) error) error {
	ws := make([]*worker, n)
	for i := range ws {
		ws[i] = e.newWorker()
		if err := setup(i, ws[i]); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.loop(ctx)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errors.Join(errs...)
}

// MaxBatch is the batcher's largest batch.
func (e *Engine) MaxBatch() int { return e.b.MaxBatch() }
