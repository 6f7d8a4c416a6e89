package batcher

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/canopy-go/canopy/internal/cputime"
	"github.com/canopy-go/canopy/nets"
)

// fakeBackend: policy[j] = row[0]*10 + row[1] + j, value = row[0] + row[1]
// (a function of the row, so each request's answer identifies it).
type fakeBackend struct {
	in, ps, mb int
	delay      time.Duration // each call sleeps this long
	work       time.Duration // each call computes (polls the clock) this long
	gate       chan struct{} // if set, each call waits for a receive from it
	err        error
	calls      atomic.Int64
}

func (f *fakeBackend) Name() string        { return "fake" }
func (f *fakeBackend) Shape() (int, int)   { return f.in, f.ps }
func (f *fakeBackend) PreferredBatch() int { return f.mb }
func (f *fakeBackend) MaxBatch() int       { return f.mb }
func (f *fakeBackend) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	f.calls.Add(1)
	if batch < 1 || batch > f.mb || len(input) < batch*f.in || len(policy) < batch*f.ps || len(value) < batch {
		return errors.New("fake: bad arguments")
	}
	if f.gate != nil {
		<-f.gate
	}
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	for start := time.Now(); time.Since(start) < f.work; {
	}
	if f.err != nil {
		return f.err
	}
	for i := range batch {
		r := input[i*f.in:]
		for j := range f.ps {
			policy[i*f.ps+j] = r[0]*10 + r[min(1, f.in-1)] + float32(j)
		}
		value[i] = r[0] + r[min(1, f.in-1)]
	}
	return nil
}

func withTimeout(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("did not finish within %v (hang)", d)
	}
}

func TestManyProducersOwnAnswers(t *testing.T) {
	for _, workers := range []int{1, 2} {
		fb := &fakeBackend{in: 3, ps: 4, mb: 16}
		b, err := New(fb, Options{Workers: workers, Slots: 32, Wait: 50 * time.Microsecond})
		if err != nil {
			t.Fatal(err)
		}
		producers, reqs := 8, 400
		if testing.Short() {
			reqs = 100
		}
		var bad atomic.Int64
		withTimeout(t, 30*time.Second, func() {
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					pol := make([]float32, 4)
					for r := range reqs {
						v, err := b.Evaluate(context.Background(), func(row []float32) {
							row[0], row[1], row[2] = float32(p), float32(r), -1
						}, pol)
						want := float32(p*10 + r) // policy[0]
						if err != nil || v != float32(p+r) || pol[0] != want || pol[3] != want+3 {
							bad.Add(1)
						}
					}
				})
			}
			wg.Wait()
		})
		if bad.Load() != 0 {
			t.Errorf("workers=%d: %d requests got another request's answer or an error", workers, bad.Load())
		}
		s := b.Stats()
		if s.Rows != uint64(producers*reqs) || s.Batches == 0 || s.Mean > 16 || s.Mean < 1 {
			t.Errorf("stats %+v, want %d rows", s, producers*reqs)
		}
		b.Close()
	}
}

func TestAsyncClients(t *testing.T) {
	fb := &fakeBackend{in: 2, ps: 3, mb: 32}
	b, err := New(fb, Options{Slots: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const depth, total = 40, 1000
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for w := range 3 {
		wg.Go(func() {
			c := NewClient(depth)
			sent, got := 0, 0
			buf := make([]Completion, 16)
			for got < total {
				for sent < total && c.InFlight() < depth {
					id := sent
					_, err := b.Submit(c, uint64(id), func(row []float32) { row[0], row[1] = float32(w), float32(id) })
					if err == ErrFull {
						if c.InFlight() > 0 {
							break // collect results first
						}
						runtime.Gosched() // another client holds the slot
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					sent++
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				n, err := c.Wait(ctx, buf)
				cancel()
				if err != nil {
					errs <- err
					return
				}
				for _, x := range buf[:n] {
					p, v, err := b.Result(x.Ticket)
					if err != nil || v != float32(w)+float32(x.Tag) || p[2] != float32(w*10)+float32(x.Tag)+2 {
						errs <- errors.New("async request got a wrong answer")
						return
					}
					b.Release(x.Ticket)
					got++
				}
			}
			if _, err := c.Wait(context.Background(), buf); err != ErrIdle {
				errs <- errors.New("Wait with nothing in flight did not return ErrIdle")
			}
		})
	}
	withTimeout(t, 30*time.Second, wg.Wait)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestBackendErrorReachesEveryRequest(t *testing.T) {
	boom := errors.New("boom")
	fb := &fakeBackend{in: 2, ps: 2, mb: 8, err: boom}
	b, _ := New(fb, Options{})
	defer b.Close()
	var wg sync.WaitGroup
	var missing atomic.Int64
	withTimeout(t, 10*time.Second, func() {
		for range 20 {
			wg.Go(func() {
				_, err := b.Evaluate(context.Background(), func(row []float32) { row[0], row[1] = 1, 2 }, make([]float32, 2))
				if !errors.Is(err, boom) {
					missing.Add(1)
				}
			})
		}
		wg.Wait()
	})
	if missing.Load() != 0 {
		t.Errorf("%d of 20 requests did not get the backend error", missing.Load())
	}
	if s := b.Stats(); s.Errors == 0 {
		t.Errorf("stats %+v count no error", s)
	}
}

func TestCloseWithRequestsInFlight(t *testing.T) {
	fb := &fakeBackend{in: 2, ps: 2, mb: 4, delay: 2 * time.Millisecond}
	b, _ := New(fb, Options{Slots: 8})
	var wg sync.WaitGroup
	var served, closed, other atomic.Int64
	for p := range 16 {
		wg.Go(func() {
			for {
				v, err := b.Evaluate(context.Background(), func(row []float32) { row[0], row[1] = float32(p), 1 }, make([]float32, 2))
				switch {
				case err == nil && v == float32(p+1):
					served.Add(1)
				case errors.Is(err, ErrClosed):
					closed.Add(1)
					return
				default:
					other.Add(1)
					return
				}
			}
		})
	}
	time.Sleep(20 * time.Millisecond)
	withTimeout(t, 10*time.Second, func() { b.Close(); wg.Wait() })
	if closed.Load() != 16 || other.Load() != 0 || served.Load() == 0 {
		t.Errorf("served %d, closed %d, other %d; want all 16 producers to end with ErrClosed", served.Load(), closed.Load(), other.Load())
	}
	if _, _, err := b.Reserve(NewClient(1), 0); err != ErrClosed {
		t.Errorf("Reserve after Close: %v", err)
	}
	b.Close() // idempotent
}

func TestContextCancelAndSlotReuse(t *testing.T) {
	fb := &fakeBackend{in: 2, ps: 2, mb: 2, gate: make(chan struct{})}
	b, _ := New(fb, Options{Slots: 4, Wait: -1})
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	withTimeout(t, 5*time.Second, func() {
		_, err := b.Evaluate(ctx, func(row []float32) { row[0], row[1] = 0, 0 }, make([]float32, 2))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("cancelled Evaluate returned %v", err)
		}
	})
	// Open the gate: the abandoned slot completes and is freed, so many
	// more requests than slots still go through.
	close(fb.gate)
	withTimeout(t, 10*time.Second, func() {
		for i := range 20 {
			v, err := b.Evaluate(context.Background(), func(row []float32) { row[0], row[1] = float32(i), 0 }, make([]float32, 2))
			if err != nil || v != float32(i) {
				t.Fatalf("request %d after a cancel: %v %v", i, v, err)
			}
		}
	})
}

func TestReserveFull(t *testing.T) {
	fb := &fakeBackend{in: 1, ps: 1, mb: 2}
	b, _ := New(fb, Options{Slots: 4})
	defer b.Close()
	c := NewClient(4)
	for i := range 4 {
		if _, err := b.Submit(c, uint64(i), func(row []float32) { row[0] = 0 }); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := b.Reserve(c, 9); err != ErrFull {
		t.Fatalf("fifth Reserve on 4 slots: %v, want ErrFull", err)
	}
	buf := make([]Completion, 4)
	got := 0
	for got < 4 {
		n, err := c.Wait(context.Background(), buf[got:])
		if err != nil {
			t.Fatal(err)
		}
		got += n
	}
	for _, x := range buf {
		b.Release(x.Ticket)
	}
	if _, err := b.Submit(c, 9, func(row []float32) { row[0] = 0 }); err != nil {
		t.Errorf("Submit after Release: %v", err)
	}
}

func TestNoAllocsPerRequest(t *testing.T) {
	rb := nets.NewRandomBackend(8, 5, 1, nets.BackendOptions{MaxBatch: 16})
	b, _ := New(rb, Options{Wait: -1})
	defer b.Close()
	pol := make([]float32, 5)
	ctx := context.Background()
	x := float32(0)
	fill := func(row []float32) {
		for i := range row {
			row[i] = x
		}
	}
	if a := testing.AllocsPerRun(500, func() {
		x++
		if _, err := b.Evaluate(ctx, fill, pol); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("Evaluate allocates %v per request", a)
	}
	c := NewClient(8)
	buf := make([]Completion, 8)
	if a := testing.AllocsPerRun(500, func() {
		for i := range 4 {
			if _, err := b.Submit(c, uint64(i), fill); err != nil {
				t.Fatal(err)
			}
		}
		for c.InFlight() > 0 {
			n, err := c.Wait(ctx, buf)
			if err != nil {
				t.Fatal(err)
			}
			for _, y := range buf[:n] {
				b.Release(y.Ticket)
			}
		}
	}); a != 0 {
		t.Errorf("Submit/Wait/Release allocate %v per 4 requests", a)
	}
}

func TestHistogram(t *testing.T) {
	// Bucket bounds by hand: 0..3 exact; 4 per octave above.
	for _, c := range []struct {
		v      int64
		lo, hi uint64
	}{{0, 0, 1}, {3, 3, 4}, {4, 4, 5}, {7, 7, 8}, {8, 8, 10}, {9, 8, 10}, {15, 14, 16}, {1000, 896, 1024}, {1024, 1024, 1280}} {
		lo, hi := bucketBounds(bucketOf(c.v))
		if lo != c.lo || hi != c.hi {
			t.Errorf("%d: bucket [%d, %d), want [%d, %d)", c.v, lo, hi, c.lo, c.hi)
		}
	}
	var h histogram
	if h.quantile(0.5) != 0 {
		t.Error("empty histogram quantile not 0")
	}
	// 98 values of 1000ns and 2 of 1e6 ns: p50 in [896, 1024), p99 in
	// 1e6's bucket [917504, 1048576).
	for range 98 {
		h.add(1000)
	}
	h.add(1e6)
	h.add(1e6)
	if p := h.quantile(0.5); p < 896 || p >= 1024 {
		t.Errorf("p50 %v", p)
	}
	if p := h.quantile(0.99); p < 917504 || p >= 1048576 {
		t.Errorf("p99 %v", p)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(nil, Options{}); err == nil {
		t.Error("nil backend accepted")
	}
	if _, err := New(&fakeBackend{in: 1, ps: 1, mb: 4}, Options{MaxBatch: 5}); err == nil {
		t.Error("MaxBatch above the backend's accepted")
	}
}

// A lone client runs its batches itself (Wait < 0) or, when the consumer
// has them (a Wait to honour), polls briefly for them before it parks
// (clientSpinWait); the consumer parks when it has nothing. Once the
// requests stop the batcher uses no CPU: it fails if either side polls
// without bound.
func TestIdleParks(t *testing.T) {
	for _, wait := range []time.Duration{-1, 0} {
		fb := &fakeBackend{in: 4, ps: 2, mb: 16}
		bt, err := New(fb, Options{MaxBatch: 16, Wait: wait})
		if err != nil {
			t.Fatal(err)
		}
		c := NewClient(1)
		buf := make([]Completion, 1)
		for range 100 {
			if _, err := bt.Submit(c, 0, func(row []float32) { clear(row) }); err != nil {
				t.Fatal(err)
			}
			if n, err := c.Wait(context.Background(), buf); err != nil || n != 1 {
				t.Fatal(n, err)
			}
			bt.Release(buf[0].Ticket)
		}
		time.Sleep(20 * clientSpinWait) // the polling ends
		cpu0 := cputime.Seconds()
		time.Sleep(200 * time.Millisecond)
		if used := cputime.Seconds() - cpu0; used > 0.05 {
			t.Errorf("Wait %v: the idle batcher used %.0f ms of CPU in 200 ms; its consumer should be parked", wait, 1000*used)
		}
		bt.Close()
	}
}
