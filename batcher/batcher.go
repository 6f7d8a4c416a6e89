package batcher

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/canopy-go/canopy/nets"
)

// Errors returned by the batcher.
var (
	// ErrClosed: the batcher is closed; no new request is accepted.
	ErrClosed = errors.New("batcher: closed")
	// ErrFull: every slot of the ring is in use (Reserve and Submit only;
	// Evaluate waits instead). Collect and Release results, then retry.
	ErrFull = errors.New("batcher: all slots in use")
	// ErrIdle: Client.Wait was called with nothing in flight.
	ErrIdle = errors.New("batcher: client has no request in flight")
)

// Options configure a Batcher. Zero fields take the defaults.
type Options struct {
	// MaxBatch is the most rows per backend call. Default: the backend's
	// PreferredBatch; at most its MaxBatch.
	MaxBatch int
	// Wait is how long a consumer, holding at least one ready row, waits
	// for more rows before running a partial batch. Default 200µs; a
	// negative value runs whatever is ready at once (KataGo style).
	Wait time.Duration
	// Slots is the ring capacity: the most requests reserved, queued,
	// computing or unreleased at once. Rounded up to a power of two; at
	// least 2*MaxBatch. Default 4*MaxBatch.
	Slots int
	// Target, when set, tells the batcher how many rows its producers
	// will have in flight at once (for example the number of searches
	// that are running, each with one leaf out): a consumer holding fewer
	// ready rows than Target() waits for the rest, at most TargetWait
	// after the first, instead of applying Wait. It is what keeps batches
	// full when many goroutines (one per game) each submit one row and
	// the backend's own threads would otherwise win every race for the
	// CPU. Target is called by the consumer and must be cheap and safe
	// for concurrent use.
	Target func() int
	// TargetWait bounds the wait for Target rows. Default 5ms.
	TargetWait time.Duration
	// Producers, with Target, is the number of goroutines that produce
	// those rows. A producer blocked in Client.Wait or Evaluate submits
	// nothing more until its results come, so once every producer is
	// blocked the consumer runs what is ready instead of waiting for
	// Target rows that cannot come (a search whose leaves this round were
	// terminal, or valued by a rollout alone). Cheap and safe for
	// concurrent use, like Target. Nil: wait for Target rows.
	Producers func() int
	// Workers is the number of consumer goroutines. With 2 or more, one
	// fills batch k+1 while another computes batch k; the backend must then
	// be safe for concurrent use. Default 1 (the ring still lets producers
	// fill the next batch while the backend computes).
	Workers int
}

// Ticket names one request: its position in the ring's sequence. It is
// valid from Reserve until Release.
type Ticket uint64

// Slot life cycle, for slot index i on lap L (pos = L*slots + i):
//
//	seq == pos          free: a producer may claim pos (CAS tail pos -> pos+1)
//	seq == pos+1        committed: input written, waiting for a consumer
//	seq == pos+slots    released: free for the next lap
//
// Between claim and commit only the producer touches the slot; between
// commit and completion only a consumer; after completion only the
// producer until Release. state settles the race between completion and a
// blocking caller giving up (context cancelled): whoever moves it away
// from statePending decides who releases the slot.
type slot struct {
	seq    atomic.Uint64
	state  atomic.Uint32
	client *Client       // nil for blocking Evaluate
	tag    uint64        // caller's tag, returned in the Completion
	err    error         // backend error, set before completion
	t0     int64         // commit time, ns since the batcher started, or -1 when not timed (queueSample)
	done   chan struct{} // capacity 1: completion signal for Evaluate
	_      [24]byte      // keep neighbouring slots' hot words apart
}

// closedBit is set in Batcher.tail by Close (positions never reach it).
const closedBit = 1 << 63

const (
	statePending uint32 = iota
	stateDone
	stateAbandoned
)

// Batcher queues requests for one backend. All methods are safe for
// concurrent use, except that a Client must be used by one goroutine at a
// time.
type Batcher struct {
	be              nets.Backend
	inSize, polSize int
	maxBatch        int
	wait            time.Duration
	target          func() int
	producers       func() int
	targetWait      time.Duration
	mask            uint64
	slots           []slot
	input           []float32           // slots x inSize; slot i's row at i*inSize
	registrar       nets.InputRegistrar // non-nil: input is registered with the backend until Close
	closeMu         sync.Mutex          // guards registrar in Close
	policy          []float32           // slots x polSize
	value           []float32           // slots x valSize
	valSize         int                 // values per row: nets.ValueSize of the backend
	start           time.Time

	// tail is the next position to claim, with closedBit set by Close:
	// Reserve's CAS from a position without the bit is then impossible,
	// so after Close no claim succeeds, and a claim made before it keeps
	// tail ahead of head until its slot is committed and taken. One atomic
	// word settles claims against Close (no separate in-flight counter:
	// Reserve is a load and a CAS, Commit a store and a load).
	tail atomic.Uint64
	_    [56]byte // producers' CAS line apart from the flags consumers poll
	// closed is set by Close after closedBit (so a consumer that sees it
	// reads the final tail); sleeping: a consumer is (about to be) blocked
	// on wake.
	closed   atomic.Bool
	sleeping atomic.Bool
	wake     chan struct{} // capacity 1

	// formMu is held by whoever forms a batch (a consumer, or a client
	// running one inline); it guards timer and the writes of head, the
	// next position to dispatch (read without it by an idle consumer).
	formMu sync.Mutex
	head   atomic.Uint64
	timer  *time.Timer
	// workers is Options.Workers. With one consumer the backend need not
	// be safe for concurrent use, so runMu serialises the consumer's
	// batches and those a waiting lone client runs itself (runInline).
	workers int
	runMu   sync.Mutex
	// inline: a lone client may run its batch itself (one consumer, and
	// no Wait to honour: Wait < 0, or Target, checked when it runs).
	inline bool

	wg sync.WaitGroup

	// blocked counts the producers blocked waiting for results (in
	// Client.Wait or Evaluate), for Options.Producers; kept only when it
	// is set (a counter every client touches on every wait otherwise).
	blocked atomic.Int64

	rows, batches, errs atomic.Uint64
	queueWait, compute  histogram
}

// Waking a parked goroutine on another P makes the runtime start a
// thread for it (a futex wake-up, and the sleeping thread's own): a lone
// search that hands each leaf to the consumer and waits for it paid two
// per batch-1 evaluation, 15% of an az agent's process in four-player
// Tetris Link arenas and about a fifth of its time a move
// (docs/BENCHMARKS.md, "Batch-1 hand-offs"). So a lone client, one with
// at most inlineMaxInFlight requests in flight (one search's rows: a leaf
// per determinization, and at a simultaneous node one row per player, so
// Sushi Go's two deals at four players make eight), does not hand its rows
// over: it commits them without waking the consumer and runs the batch
// itself when it waits (Client.Wait, runInline), where one consumer
// serves a backend that is to run whatever is ready (Options.Wait < 0, or
// Target rows ready). When it cannot (the consumer is forming or running
// a batch, other clients' rows come first, Target wants more rows) it
// wakes the consumer and, with at most spinMaxInFlight requests in flight
// and while its waits have lately taken between spinMinWait and
// clientSpinWait, polls for up to clientSpinWait (a
// batch-1 evaluation of the 64x5 nets takes 170-330 us on the CPU, of the
// 32x2 ones about 90) before it parks, yielding to runnable goroutines
// meanwhile. Clients with more in flight (self-play's workers) commit
// with a wake-up and park at once, as before: their completions come in
// batches that take milliseconds; so do clients of instant backends (the
// random one, a cache), whose goroutine switches on one P cost less than
// the polling, and clients whose completions take longer than the polling
// would last (a slow GPU, a remote backend).
const (
	clientSpinWait  = 500 * time.Microsecond
	spinMinWait     = 5 * time.Microsecond
	spinMaxInFlight = 2
	// inlineMaxInFlight: see above.
	inlineMaxInFlight = 8
)

// New starts a batcher in front of be. Close it to stop its goroutines.
// ringSlots is the number of slots of the ring of a batcher asked for
// slots slots (0: 4 batches) with largest batch mb: a power of two of at
// least max(slots, 2*mb, 4).
func ringSlots(slots, mb int) int {
	want := slots
	if want <= 0 {
		want = 4 * mb
	}
	want = max(want, 2*mb, 4)
	n := 1
	for n < want {
		n <<= 1
	}
	return n
}

// slotChanBytes is the allocation of a slot's completion channel (a
// channel header with a one-element buffer of struct{}).
const slotChanBytes = 112

// RingBytes is the memory, in bytes, of the ring of a batcher made by
// New with opts for a backend of in inputs and ps policy logits per row
// whose preferred batch is preferred (used when opts.MaxBatch is 0): one
// slot record, completion channel and row of input, policy and value
// float32s per slot (per-player value heads add ValueSize-1 floats a
// slot, which this leaves out). It is what memory guards count for a batcher; the
// backend's own buffers are the backend's.
func RingBytes(opts Options, preferred, in, ps int) int64 {
	mb := opts.MaxBatch
	if mb <= 0 {
		mb = preferred
	}
	n := int64(ringSlots(opts.Slots, max(mb, 1)))
	return n * (int64(unsafe.Sizeof(slot{})) + slotChanBytes + 4*int64(in+ps+1))
}

func New(be nets.Backend, opts Options) (*Batcher, error) {
	if be == nil {
		return nil, errors.New("batcher: nil backend")
	}
	mb := opts.MaxBatch
	if mb <= 0 {
		mb = be.PreferredBatch()
	}
	if mb > be.MaxBatch() {
		return nil, fmt.Errorf("batcher: MaxBatch %d exceeds backend %s's maximum %d", mb, be.Name(), be.MaxBatch())
	}
	mb = max(mb, 1)
	wait := opts.Wait
	if wait == 0 {
		wait = 200 * time.Microsecond
	}
	n := ringSlots(opts.Slots, mb)
	workers := max(opts.Workers, 1)
	in, ps := be.Shape()
	vs := nets.ValueSize(be)
	tw := opts.TargetWait
	if tw <= 0 {
		tw = 5 * time.Millisecond
	}
	b := &Batcher{
		be: be, inSize: in, polSize: ps, maxBatch: mb, wait: wait, target: opts.Target, producers: opts.Producers, targetWait: tw, mask: uint64(n - 1),
		slots: make([]slot, n), input: make([]float32, n*in), policy: make([]float32, n*ps), value: make([]float32, n*vs), valSize: vs,
		start: time.Now(), wake: make(chan struct{}, 1), timer: time.NewTimer(time.Hour),
		workers: workers, inline: workers == 1 && (wait < 0 || opts.Target != nil),
	}
	b.timer.Stop()
	if r, ok := be.(nets.InputRegistrar); ok && n*in > 0 {
		// The backend reads the ring's rows straight from it (a GPU's
		// page-locked memory); if it cannot, rows go through its copy.
		buf := nets.PageAligned(n * in)
		if r.RegisterInput(buf) == nil {
			b.input, b.registrar = buf, r
		}
	}
	for i := range b.slots {
		b.slots[i].seq.Store(uint64(i))
		b.slots[i].done = make(chan struct{}, 1)
	}
	b.wg.Add(workers)
	for range workers {
		go b.consume()
	}
	return b, nil
}

// MaxBatch is the most rows per backend call.
func (b *Batcher) MaxBatch() int { return b.maxBatch }

// Slots is the ring capacity.
func (b *Batcher) Slots() int { return len(b.slots) }

// Shape is the backend's input and policy row lengths.
func (b *Batcher) Shape() (inputSize, policySize int) { return b.inSize, b.polSize }

func (b *Batcher) now() int64 { return int64(time.Since(b.start)) }

// Reserve claims a slot for a request whose completion is reported to c
// with tag (c may be nil only for the internal blocking path; pass a
// Client). It returns the ticket and the slot's input row, which the
// caller must overwrite entirely (it holds a previous request's data) and
// then Commit promptly: consumers take slots in ticket order, so an
// uncommitted slot holds back every later request. It fails with
// ErrClosed or ErrFull. The ring is reused in ticket order: ErrFull means
// the slot of the ticket Slots() before this one is still unreleased, so
// it can happen with fewer than Slots() requests outstanding when an old
// result is held; release results promptly, and on ErrFull collect your
// own completions (or yield) and retry. Lock-free.
func (b *Batcher) Reserve(c *Client, tag uint64) (Ticket, []float32, error) {
	for {
		pos := b.tail.Load()
		if pos&closedBit != 0 {
			return 0, nil, ErrClosed
		}
		s := &b.slots[pos&b.mask]
		d := int64(s.seq.Load() - pos)
		if d == 0 {
			if b.tail.CompareAndSwap(pos, pos+1) {
				s.client, s.tag, s.err = c, tag, nil
				s.state.Store(statePending)
				if c != nil {
					c.inflight++
					c.b = b
				}
				i := int(pos & b.mask)
				return Ticket(pos), b.input[i*b.inSize : (i+1)*b.inSize : (i+1)*b.inSize], nil
			}
		} else if d < 0 {
			return 0, nil, ErrFull
		}
		// d > 0: another producer claimed pos; reload the tail.
	}
}

// queueSample: one request in queueSample (by ticket) has its queue wait
// timed for Stats. Reading the clock at every commit cost 4-8% of the
// batched search's CPU with a random backend (about 30 ns per call on
// this project's VMs); the quantiles of a 1-in-8 sample are as good.
const queueSample = 8

// Commit queues a reserved request for evaluation. Call it exactly once
// per Reserve. A lone client's request (see inlineMaxInFlight) is queued
// without waking the consumer: the client's Wait runs it, or wakes the
// consumer, and so does its Poll when it finds nothing.
func (b *Batcher) Commit(t Ticket) {
	s := b.publish(t)
	if c := s.client; c != nil && b.inline && c.inflight <= inlineMaxInFlight {
		c.quiet = true
		return
	}
	b.wakeConsumer()
}

// publish is Commit without the wake-up: the request becomes ready for
// whoever forms the next batch.
func (b *Batcher) publish(t Ticket) *slot {
	s := &b.slots[uint64(t)&b.mask]
	s.t0 = -1
	if uint64(t)%queueSample == 0 {
		s.t0 = b.now()
	}
	s.seq.Store(uint64(t) + 1)
	return s
}

// wakeConsumer wakes a consumer parked for want of a request.
func (b *Batcher) wakeConsumer() {
	if b.sleeping.Load() {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
}

// Submit is Reserve, fill(row), Commit. fill must write the whole row
// and must not keep it.
func (b *Batcher) Submit(c *Client, tag uint64, fill func(row []float32)) (Ticket, error) {
	t, row, err := b.Reserve(c, tag)
	if err != nil {
		return 0, err
	}
	fill(row)
	b.Commit(t)
	return t, nil
}

// Result returns a completed request's outputs. policy aliases the
// batcher's memory and stays valid until Release(t). err is the backend's
// error for the batch, if any (then policy and value are meaningless).
// Call it only after t was reported by Client.Wait or Client.Poll.
//
// For a backend with a per-player value head (nets.ValueSizer) value is
// the row's first entry (the mover's); Values gives the whole row.
func (b *Batcher) Result(t Ticket) (policy []float32, value float32, err error) {
	i := int(uint64(t) & b.mask)
	return b.policy[i*b.polSize : (i+1)*b.polSize : (i+1)*b.polSize], b.value[i*b.valSize], b.slots[i].err
}

// Values returns a completed request's value row: ValueSize values
// (one for a scalar head), aliasing the batcher's memory until
// Release(t), like Result's policy.
func (b *Batcher) Values(t Ticket) []float32 {
	i := int(uint64(t) & b.mask)
	vs := b.valSize
	return b.value[i*vs : (i+1)*vs : (i+1)*vs]
}

// ValueSize is the number of values per row (nets.ValueSize of the
// backend).
func (b *Batcher) ValueSize() int { return b.valSize }

// Release frees a completed request's slot. Call it exactly once per
// completed ticket; the ticket and its Result slices are invalid after.
func (b *Batcher) Release(t Ticket) {
	s := &b.slots[uint64(t)&b.mask]
	s.client, s.err = nil, nil
	s.seq.Store(uint64(t) + uint64(len(b.slots)))
}

// Evaluate runs one request and blocks until its result: fill writes the
// input row (all of it; it must not keep the slice), the policy row is
// copied into policy (len >= policy size) and the value returned. When
// every slot is busy it waits for one. If ctx ends first it returns
// ctx.Err() at once and the request's slot is freed when its batch
// completes. With a ctx that never ends (context.Background), it runs
// the batch on the calling goroutine when the consumer is idle, as a lone
// client's Wait does (see inlineMaxInFlight). It allocates nothing.
func (b *Batcher) Evaluate(ctx context.Context, fill func(row []float32), policy []float32) (float32, error) {
	return b.evaluate(ctx, fill, policy, nil)
}

// EvaluateValues is Evaluate for a per-player value head: the value row
// (ValueSize values) is copied into values.
func (b *Batcher) EvaluateValues(ctx context.Context, fill func(row []float32), policy, values []float32) error {
	if len(values) < b.valSize {
		return fmt.Errorf("batcher: value buffer %d, need %d", len(values), b.valSize)
	}
	_, err := b.evaluate(ctx, fill, policy, values)
	return err
}

// evaluate is Evaluate, copying the value row into values when it is not
// nil.
func (b *Batcher) evaluate(ctx context.Context, fill func(row []float32), policy, values []float32) (float32, error) {
	if len(policy) < b.polSize {
		return 0, fmt.Errorf("batcher: policy buffer %d, need %d", len(policy), b.polSize)
	}
	var t Ticket
	var row []float32
	for spins := 0; ; spins++ {
		var err error
		t, row, err = b.Reserve(nil, 0)
		if err == nil {
			break
		}
		if err != ErrFull {
			return 0, err
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if spins < 16 {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
	fill(row)
	s := &b.slots[uint64(t)&b.mask]
	if b.inline && ctx.Done() == nil {
		// As a lone client's Wait: run the batch here when the consumer
		// is idle, instead of waking it and being woken in turn (not
		// where ctx could end: this call is to return at once then).
		b.publish(t)
		for b.runInline() {
			select {
			case <-s.done:
				return b.collect(t, policy, values)
			default:
			}
		}
		b.wakeConsumer()
	} else {
		b.Commit(t)
	}
	if b.producers != nil {
		b.blocked.Add(1)
		defer b.blocked.Add(-1)
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		if s.state.CompareAndSwap(statePending, stateAbandoned) {
			return 0, ctx.Err() // the consumer releases the slot
		}
		<-s.done // completed meanwhile: finish normally
	}
	return b.collect(t, policy, values)
}

// collect copies a completed blocking request's results out and
// releases its slot.
func (b *Batcher) collect(t Ticket, policy, values []float32) (float32, error) {
	p, v, err := b.Result(t)
	copy(policy, p)
	if values != nil {
		copy(values, b.Values(t))
	}
	b.Release(t)
	return v, err
}

// Close stops accepting requests, lets the consumers finish every
// committed one (their results are delivered as usual) and waits for the
// consumer goroutines to exit. Requests never collected stay readable with
// Result. Close is idempotent.
func (b *Batcher) Close() error {
	b.tail.Or(closedBit)
	if !b.closed.Swap(true) {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
	b.wg.Wait()
	// A client may still be running a batch it took before the consumer
	// drained (runInline holds runMu throughout).
	b.runMu.Lock()
	b.runMu.Unlock()
	b.closeMu.Lock()
	defer b.closeMu.Unlock()
	if r := b.registrar; r != nil {
		b.registrar = nil
		if err := r.UnregisterInput(b.input); err != nil {
			return fmt.Errorf("batcher: backend %s: %w", b.be.Name(), err)
		}
	}
	return nil
}

// consume is one consumer goroutine: form a batch (under formMu), run it,
// deliver its results; repeat until closed and drained.
func (b *Batcher) consume() {
	defer b.wg.Done()
	for {
		b.formMu.Lock()
		start, n, ok := b.form()
		b.formMu.Unlock()
		if !ok {
			// Let the next consumer see the drained state too.
			select {
			case b.wake <- struct{}{}:
			default:
			}
			return
		}
		if b.workers == 1 {
			b.runMu.Lock()
			b.run(start, n)
			b.runMu.Unlock()
		} else {
			b.run(start, n)
		}
	}
}

func (b *Batcher) ready(pos uint64) bool { return b.slots[pos&b.mask].seq.Load() == pos+1 }

// form waits for the next batch: it blocks until one row is ready, then
// gathers ready rows up to MaxBatch (never past the ring's end, so the
// batch is contiguous), waiting up to Wait for more (with Target: until
// Target rows, up to TargetWait). ok is false once the
// batcher is closed and every committed request has been taken. It is
// called with formMu held and returns with it held; a lone consumer
// lets go of it while it waits for the first row, so that a waiting
// client can run its rows itself (runInline).
func (b *Batcher) form() (start uint64, n int, ok bool) {
	head := b.head.Load()
	for !b.ready(head) {
		if b.closed.Load() && b.tail.Load()&^closedBit == head {
			return 0, 0, false
		}
		if b.workers == 1 {
			b.formMu.Unlock()
			b.idle()
			b.formMu.Lock()
		} else {
			b.idle()
		}
		head = b.head.Load()
	}
	limit := min(b.maxBatch, len(b.slots)-int(head&b.mask))
	n = 1
	var deadline int64
	wait := b.wait
	if b.target != nil {
		wait = b.targetWait
	}
	for n < limit {
		if b.ready(head + uint64(n)) {
			n++
			continue
		}
		if b.target != nil {
			if b.enough(n, 0) {
				break
			}
		} else if b.wait < 0 {
			break
		}
		if b.closed.Load() {
			break
		}
		now := b.now()
		if deadline == 0 {
			deadline = now + int64(wait)
		}
		if now >= deadline {
			break
		}
		if b.target != nil {
			// Paced: the missing rows come from producers that are
			// runnable now; yielding lets them run on this P without a
			// sleep and a wake-up per row.
			runtime.Gosched()
			continue
		}
		b.sleep(head+uint64(n), time.Duration(deadline-now))
	}
	b.head.Store(head + uint64(n))
	return head, n, true
}

// enough reports whether a batch of n ready rows need wait no longer for
// Target rows: it has them, or every producer is blocked waiting for
// results, counting self more (1 for a client about to block) than are
// blocked now (Options.Producers).
func (b *Batcher) enough(n int, self int64) bool {
	return n >= b.target() || b.producers != nil && b.blocked.Load()+self >= int64(b.producers())
}

// idle blocks until the request at head is committed (or Close). The
// sleeping flag, head and the slot's sequence are sequentially consistent
// atomics, so a producer committing the row at head either sees sleeping
// and sends a wake, or we see its commit; a client that moved head on
// (runInline) checks for ready rows and wakes us after its batch. Lone
// clients' quiet commits are their own to run or announce (Commit).
func (b *Batcher) idle() {
	b.sleeping.Store(true)
	if b.ready(b.head.Load()) {
		b.sleeping.Store(false)
		return
	}
	if b.closed.Load() {
		// Draining: producers between Reserve and Commit finish soon.
		b.sleeping.Store(false)
		runtime.Gosched()
		return
	}
	<-b.wake
	b.sleeping.Store(false)
}

// sleep blocks until pos is committed (or Close), or d passes. It returns
// at once if pos is already ready. Called with formMu held, so pos, the
// row after the batch formed so far, stays the one to wait for.
func (b *Batcher) sleep(pos uint64, d time.Duration) {
	b.sleeping.Store(true)
	if b.ready(pos) || b.closed.Load() {
		b.sleeping.Store(false)
		return
	}
	b.timer.Reset(d)
	select {
	case <-b.wake:
	case <-b.timer.C:
	}
	b.timer.Stop()
	b.sleeping.Store(false)
}

// runInline is a lone client's Wait running the next batch itself on its
// own goroutine, instead of two wake-ups of goroutines on other Ps (see
// inlineMaxInFlight): when the consumer is idle (formMu free) and no batch
// is running (runMu free), it takes the ready rows at head, as the
// consumer would take them without waiting (up to MaxBatch, contiguous,
// at least Target() of them), runs them and delivers their completions
// (to any client). It reports whether it ran a batch.
func (b *Batcher) runInline() bool {
	if !b.inline || !b.formMu.TryLock() {
		return false
	}
	head := b.head.Load()
	if !b.ready(head) || !b.runMu.TryLock() {
		b.formMu.Unlock()
		return false
	}
	limit := min(b.maxBatch, len(b.slots)-int(head&b.mask))
	n := 1
	for n < limit && b.ready(head+uint64(n)) {
		n++
	}
	if b.target != nil && !b.enough(n, 1) {
		b.runMu.Unlock()
		b.formMu.Unlock()
		return false
	}
	b.head.Store(head + uint64(n))
	b.formMu.Unlock()
	b.run(head, n)
	b.runMu.Unlock()
	if b.ready(b.head.Load()) {
		// Rows committed meanwhile, with a wake-up the consumer may have
		// taken as spurious while it read the old head.
		b.wakeConsumer()
	}
	return true
}

// run evaluates positions [start, start+n) in place and completes them.
func (b *Batcher) run(start uint64, n int) {
	i := int(start & b.mask)
	t0 := b.now()
	for k := range n {
		if c := b.slots[i+k].t0; c >= 0 {
			b.queueWait.add(t0 - c)
		}
	}
	in, ps, vs := b.inSize, b.polSize, b.valSize
	err := b.be.Evaluate(context.Background(), n,
		b.input[i*in:(i+n)*in], b.policy[i*ps:(i+n)*ps], b.value[i*vs:(i+n)*vs])
	b.compute.add(b.now() - t0)
	b.rows.Add(uint64(n))
	b.batches.Add(1)
	if err != nil {
		b.errs.Add(1)
		err = fmt.Errorf("batcher: backend %s: %w", b.be.Name(), err)
	}
	for k := range n {
		s := &b.slots[i+k]
		s.err = err
		pos := start + uint64(k)
		if !s.state.CompareAndSwap(statePending, stateDone) {
			b.Release(Ticket(pos)) // the blocking caller gave up
			continue
		}
		if c := s.client; c != nil {
			c.push(Completion{Ticket: Ticket(pos), Tag: s.tag})
		} else {
			s.done <- struct{}{}
		}
	}
}

// Completion reports a finished request to its Client.
type Completion struct {
	Ticket Ticket
	Tag    uint64 // as given to Reserve/Submit
}

// Client receives the completions of the requests submitted with it. One
// goroutine owns a Client (Reserve/Submit with it, Wait, Poll); consumers
// push completions from their goroutines. A worker typically keeps many
// requests in flight: submit leaves (tag = leaf id), then loop on Wait,
// read each completion's Result, Release it, back up, submit more.
type Client struct {
	inflight int // owner-only: submitted and not yet returned by Wait/Poll
	// b is owner-only: the batcher of the client's requests (set by
	// Reserve). quiet is owner-only: some request in flight was committed
	// without waking the consumer (Commit), so Wait must run it or wake
	// the consumer before it blocks, and Poll wake it when it finds
	// nothing.
	b     *Batcher
	quiet bool
	// waited is owner-only: a running mean of how long Wait blocked
	// before a completion came while at most spinMaxInFlight requests
	// were in flight (0 before the first), which decides whether the next
	// such Wait polls before it parks.
	waited time.Duration

	mu     sync.Mutex
	queue  []Completion // completed, not yet collected
	signal chan struct{}
}

// NewClient returns a client with room for about capacity pending
// completions before its queue grows.
func NewClient(capacity int) *Client {
	return &Client{queue: make([]Completion, 0, max(capacity, 16)), signal: make(chan struct{}, 1)}
}

// InFlight is the number of requests submitted with c and not yet
// returned by Wait or Poll.
func (c *Client) InFlight() int { return c.inflight }

func (c *Client) push(x Completion) {
	c.mu.Lock()
	c.queue = append(c.queue, x)
	c.mu.Unlock()
	select {
	case c.signal <- struct{}{}:
	default:
	}
}

// pending is the number of completions waiting to be collected.
func (c *Client) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// Poll moves up to len(dst) completions into dst without blocking and
// returns how many.
func (c *Client) Poll(dst []Completion) int {
	n := c.take(dst)
	if n == 0 && c.quiet {
		// Nothing yet: make sure the consumer knows of the requests
		// Commit queued quietly (a caller that only polls never runs
		// them itself).
		c.quiet = false
		c.b.wakeConsumer()
	}
	return n
}

// take is Poll without the wake-up.
func (c *Client) take(dst []Completion) int {
	c.mu.Lock()
	n := copy(dst, c.queue)
	c.queue = c.queue[:copy(c.queue, c.queue[n:])]
	c.mu.Unlock()
	c.inflight -= n
	if c.inflight == 0 {
		c.quiet = false
	}
	return n
}

// Wait is Poll that blocks until at least one completion arrives (or ctx
// ends: ctx.Err()). With nothing in flight it returns ErrIdle rather than
// block forever. Requests stay in flight when ctx ends; Wait again later.
// A lone client's Wait may run a batch of the backend itself (see
// inlineMaxInFlight); it then returns when that batch is done, even if ctx
// ends meanwhile.
func (c *Client) Wait(ctx context.Context, dst []Completion) (int, error) {
	if n := c.take(dst); n > 0 || len(dst) == 0 {
		return n, nil
	}
	if c.inflight == 0 {
		return 0, ErrIdle
	}
	if c.quiet && c.inflight <= inlineMaxInFlight {
		for c.b.runInline() {
			if n := c.take(dst); n > 0 {
				return n, nil
			}
		}
	}
	if c.quiet {
		c.quiet = false
		c.b.wakeConsumer()
	}
	if c.b.producers != nil {
		c.b.blocked.Add(1)
		defer c.b.blocked.Add(-1)
	}
	if c.inflight > spinMaxInFlight {
		return c.park(ctx, dst)
	}
	// A lone search whose rows the consumer has: its waits are timed,
	// and while they have lately taken a while (a network, not a cache or
	// the random backend) but not long (not a slow GPU), it polls for
	// about one evaluation before it parks (see spinMaxInFlight).
	start := time.Now()
	if c.waited >= spinMinWait && c.waited <= clientSpinWait {
		for time.Since(start) < clientSpinWait && c.pending() == 0 {
			runtime.Gosched()
		}
	}
	n, err := c.park(ctx, dst)
	if n > 0 {
		c.waited += (time.Since(start) - c.waited) / 4
	}
	return n, err
}

// park is Wait after its first Poll (len(dst) > 0): poll, and block on
// the signal until a completion comes, nothing is in flight (ErrIdle) or
// ctx ends.
func (c *Client) park(ctx context.Context, dst []Completion) (int, error) {
	for {
		if n := c.take(dst); n > 0 {
			return n, nil
		}
		if c.inflight == 0 {
			return 0, ErrIdle
		}
		select {
		case <-c.signal:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}
