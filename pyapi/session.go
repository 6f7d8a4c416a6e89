package pyapi

import (
	"context"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/canopy-go/canopy/games"
)

// session runs a search or self-play on its own goroutine against a
// Python evaluator by inverted control (see the package doc). The run's
// engine has a pyBackend; the backend hands each batch to the session and
// blocks until Python submits the outputs or the session is cancelled.
//
// Python's arrays: obs [maxB, obsN] and legal [maxB, A] are written by
// wait (on Python's thread) when it hands out a batch; logits [maxB, A]
// and values [maxB, vsize] are read by submit. Nothing else touches them.
//
// vsize is the values per row the engine gets: 1 (the mover's value) in
// games of one or two players, the player count in games of three or
// more (a per-player value head's row, the mover first and the seats
// rotated; the Python package turns an evaluator's single value v into
// the row v, -v/(P-1), ..., which is what the engine makes of a scalar).
type session struct {
	obsN, na, maxB, vsize int

	obs    []float32
	legal  []byte
	logits []float32
	values []float32

	ctx  context.Context
	stop context.CancelFunc
	reqs chan *evalRequest // unbuffered: a batch is handed over only to a waiting Python
	done chan struct{}     // closed when the run has ended and drained
	err  error             // the run's error, read after done

	// data, when non-nil, is signalled when self-play has games to hand
	// over (selfplay.go decides with ready).
	data  chan struct{}
	ready func() bool

	mu  sync.Mutex
	cur *evalRequest // the batch Python holds, between wait and submit
}

// evalRequest is one batch in flight to Python.
type evalRequest struct {
	batch  int
	input  []float32 // batch x (obsN + A): the observation, then the legal actions
	policy []float32
	value  []float32
	done   chan error // buffered (1): submit or cancel answers exactly once
}

func newSession(g games.Game, maxB int, bufs [][]byte, kind string) (*session, error) {
	s := &session{obsN: games.ObservationSize(g), na: g.NumActions(), maxB: maxB, vsize: sessionValueSize(g)}
	if maxB < 1 || maxB > 1<<16 {
		return nil, valueErrorf("batch = %d, want 1..%d", maxB, 1<<16)
	}
	if err := checkBufs(kind, bufs, []bufSpec{
		{"obs", 4, maxB * s.obsN}, {"legal_mask", 1, maxB * s.na}, {"logits", 4, maxB * s.na}, {"values", 4, maxB * s.vsize},
	}); err != nil {
		return nil, err
	}
	s.obs, s.legal, s.logits, s.values = f32s(bufs[0]), bufs[1], f32s(bufs[2]), f32s(bufs[3])
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.reqs = make(chan *evalRequest)
	s.done = make(chan struct{})
	return s, nil
}

// sessionValueSize is a session's values per row for game g (see
// session).
func sessionValueSize(g games.Game) int {
	if p := g.NumPlayers(); p > 2 {
		return p
	}
	return 1
}

// start runs run on its own goroutine; a panic in it becomes the run's
// error.
func (s *session) start(run func(ctx context.Context) error) {
	go func() {
		defer close(s.done)
		defer func() {
			if v := recover(); v != nil {
				s.err = Recovered(v)
			}
		}()
		s.err = run(s.ctx)
	}()
}

// consumersFor is the number of batcher consumers
// (engine.Options.Consumers) of a session whose trees keep inFlight leaves
// in flight, in batches of at most maxB: 2 when they fill two batches, so
// that while Python holds batch k the second consumer forms batch k+1 and
// waits at s.reqs, and Python's next wait finds it at once (instead of
// waiting, after submit, for batch k's results to be delivered and the
// next batch formed); else 1, since a second consumer would run whatever
// few rows are ready the moment batch k leaves and so split the batches.
func consumersFor(inFlight, maxB int) int {
	if inFlight >= 2*maxB {
		return 2
	}
	return 1
}

// fillWait is the batcher's wait for a full batch (engine.Options.Wait)
// with nc consumers: with two, the second forms batch k+1 the moment
// batch k leaves, while Python evaluates k, so it waits (up to this) for
// the rows that come back meanwhile instead of running the few that were
// ready at that moment; with one, nothing (a batch is formed after
// submit, from every row that came back while Python evaluated).
func fillWait(nc int) time.Duration {
	if nc > 1 {
		return time.Millisecond
	}
	return -1
}

// workersFor is the number of search workers of a session asked for
// workers (0: the default): by default one fewer than GOMAXPROCS (at
// least 1). The Python thread's wait and submit enter Go through cgo and
// need a P, as do the batcher consumers they wake; with a worker on every
// P, each had to wait for a worker to be preempted (up to the scheduler's
// 10ms time slice), and with many workers busy backing up a batch that
// happened between most batches.
func workersFor(workers int) int {
	if workers > 0 {
		return workers
	}
	return max(runtime.GOMAXPROCS(0)-1, 1)
}

// backend is the session's nets.Backend, for an engine with consumers
// batcher consumers.
func (s *session) backend(consumers int) *pyBackend {
	b := &pyBackend{s: s, free: make(chan *evalRequest, consumers)}
	for range consumers {
		b.free <- &evalRequest{done: make(chan error, 1)}
	}
	return b
}

// wait returns the next event: a batch size, WaitData, WaitDone or
// WaitTimeout.
func (s *session) wait(timeout time.Duration) (int64, error) {
	s.mu.Lock()
	held := s.cur != nil
	s.mu.Unlock()
	if held {
		return 0, runtimeErrorf("a batch is waiting for its outputs: call submit (or cancel) before waiting again")
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		if s.ready != nil && s.ready() {
			return WaitData, nil
		}
		select {
		case r := <-s.reqs:
			if err := s.ctx.Err(); err != nil {
				// Cancelled: a second consumer's batch that was
				// already waiting fails like every later one.
				r.done <- err
				continue
			}
			s.hand(r)
			return int64(r.batch), nil
		case <-s.data:
			continue // staged by ready, or already taken
		case <-s.done:
			if s.ready != nil && s.ready() {
				return WaitData, nil
			}
			if s.err != nil && s.ctx.Err() == nil {
				return 0, s.err // the run failed on its own (not cancelled)
			}
			return WaitDone, nil
		case <-t.C:
			return WaitTimeout, nil
		}
	}
}

// hand copies batch r's observations and legal actions into Python's
// arrays and marks it held.
func (s *session) hand(r *evalRequest) {
	in := s.obsN + s.na
	clear(s.legal[:r.batch*s.na])
	for i := range r.batch {
		row := r.input[i*in : (i+1)*in]
		copy(s.obs[i*s.obsN:(i+1)*s.obsN], row[:s.obsN])
		lg := s.legal[i*s.na : (i+1)*s.na]
		for a, x := range row[s.obsN:] {
			if x != 0 {
				lg[a] = 1
			}
		}
	}
	s.mu.Lock()
	s.cur = r
	s.mu.Unlock()
}

// submit checks the outputs Python wrote for the batch it holds and hands
// them to the search. A NaN or infinite output is a ValueError naming the
// row (the batch stays held: cancel it).
func (s *session) submit() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.cur
	if r == nil {
		return runtimeErrorf("no batch is waiting for outputs: call wait first")
	}
	n := r.batch
	vs := s.values[:n*s.vsize]
	for i, v := range vs {
		if v != v || math.IsInf(float64(v), 0) {
			if s.vsize > 1 {
				return valueErrorf("values[%d, %d] = %v: the evaluator must return finite values in [-1, 1]", i/s.vsize, i%s.vsize, v)
			}
			return valueErrorf("values[%d] = %v: the evaluator must return finite values in [-1, 1]", i, v)
		}
	}
	for i, x := range s.logits[:n*s.na] {
		if x != x || math.IsInf(float64(x), 1) {
			return valueErrorf("logits[%d, %d] = %v: the evaluator must return finite logits (-inf is allowed on illegal actions)", i/s.na, i%s.na, x)
		}
	}
	copy(r.policy[:n*s.na], s.logits[:n*s.na])
	copy(r.value[:n*s.vsize], vs)
	s.cur = nil
	r.done <- nil
	return nil
}

// cancel stops the run: the batch Python holds, if any, fails, and every
// later one fails at once; the run then drains and ends (wait returns
// WaitDone).
func (s *session) cancel() {
	s.cancelRun()
}

func (s *session) cancelRun() {
	s.stop()
	s.mu.Lock()
	if r := s.cur; r != nil {
		s.cur = nil
		r.done <- context.Canceled
	}
	s.mu.Unlock()
}

// shutdown cancels the run and waits until it has drained.
func (s *session) shutdown() {
	s.cancelRun()
	<-s.done
}

// pyBackend is the backend of a session's engine: its Evaluate hands the
// batch to Python and waits. Up to consumers batcher goroutines call it at
// once; each takes a request record from free for the call (no
// allocation) and Python holds at most one batch at a time (session.cur),
// the others waiting at s.reqs.
type pyBackend struct {
	s    *session
	free chan *evalRequest
}

func (b *pyBackend) Name() string { return "python" }

func (b *pyBackend) Shape() (int, int) { return b.s.obsN + b.s.na, b.s.na }

func (b *pyBackend) PreferredBatch() int { return b.s.maxB }

func (b *pyBackend) MaxBatch() int { return b.s.maxB }

// ValueSize implements nets.ValueSizer: the session's values per row.
func (b *pyBackend) ValueSize() int { return b.s.vsize }

func (b *pyBackend) Evaluate(_ context.Context, batch int, input, policy, value []float32) error {
	s := b.s
	r := <-b.free // never blocks: at most one call per consumer
	defer func() { b.free <- r }()
	r.batch, r.input, r.policy, r.value = batch, input, policy, value
	select {
	case s.reqs <- r:
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
	// Python holds the batch now: it answers with submit or cancel,
	// exactly once (session.cur).
	return <-r.done
}
