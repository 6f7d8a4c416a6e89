package batcher

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stackBackend wraps fakeBackend and records, for each call, whether it
// ran on a caller's goroutine (runInline in the stack: a client's Wait,
// or Evaluate) or on the consumer's, and whether two calls ever overlapped.
type stackBackend struct {
	fakeBackend
	inline, consumer atomic.Int64
	running          atomic.Int32
	overlapped       atomic.Bool
}

func (s *stackBackend) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	if s.running.Add(1) > 1 {
		s.overlapped.Store(true)
	}
	defer s.running.Add(-1)
	buf := make([]byte, 8<<10)
	if st := string(buf[:runtime.Stack(buf, false)]); strings.Contains(st, "(*Batcher).runInline") {
		s.inline.Add(1)
	} else if strings.Contains(st, "(*Batcher).consume") {
		s.consumer.Add(1)
	}
	return s.fakeBackend.Evaluate(ctx, batch, input, policy, value)
}

// submitAll submits n requests with c, at most depth in flight at once,
// checks each answer and releases it.
func submitAll(b *Batcher, c *Client, id float32, n, depth int) error {
	buf := make([]Completion, depth)
	sent, got := 0, 0
	for got < n {
		for sent < n && c.InFlight() < depth {
			k := float32(sent)
			if _, err := b.Submit(c, uint64(sent), func(row []float32) { row[0], row[1] = id, k }); err != nil {
				if err == ErrFull {
					break
				}
				return err
			}
			sent++
		}
		if c.InFlight() == 0 {
			runtime.Gosched() // ErrFull from another client's slot
			continue
		}
		m, err := c.Wait(context.Background(), buf)
		if err != nil {
			return err
		}
		for _, x := range buf[:m] {
			_, v, err := b.Result(x.Ticket)
			if err != nil {
				return err
			}
			if v != id+float32(x.Tag) {
				return errors.New("a client got another request's answer")
			}
			b.Release(x.Ticket)
			got++
		}
	}
	return nil
}

// A lone client (at most inlineMaxInFlight requests in flight) runs its
// batches on its own goroutine when the batcher is to run whatever is
// ready; a client with more in flight, or a batcher with a Wait for
// fuller batches, leaves them to the consumer.
func TestLoneClientRunsInline(t *testing.T) {
	for _, tc := range []struct {
		name       string
		wait       time.Duration
		depth      int
		wantInline bool
	}{
		{"one in flight", -1, 1, true},
		{"two in flight", -1, 2, true},
		{"eight in flight", -1, 8, true},
		{"sixteen in flight", -1, 16, false},
		{"with a batch wait", 50 * time.Microsecond, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := &stackBackend{fakeBackend: fakeBackend{in: 2, ps: 3, mb: 16}}
			b, err := New(sb, Options{Wait: tc.wait, Slots: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			withTimeout(t, 20*time.Second, func() {
				if err := submitAll(b, NewClient(8), 3, 500, tc.depth); err != nil {
					t.Error(err)
				}
			})
			// A lone client leaves a batch to the consumer when it finds
			// the consumer forming one (woken by the check after an inline
			// run); the deep client becomes a lone one for its last
			// requests (at most inlineMaxInFlight in flight), whose
			// inline runs are its own.
			in, co := sb.inline.Load(), sb.consumer.Load()
			if tc.wantInline && in < 9*co || !tc.wantInline && in > int64(max(tc.depth-inlineMaxInFlight, 0)) {
				t.Errorf("backend calls on the client's goroutine %d, on the consumer's %d; want (nearly) all on the %s", in, co,
					map[bool]string{true: "client's", false: "consumer's"}[tc.wantInline])
			}
		})
	}
}

// Evaluate, one request per call, runs its batch on the calling
// goroutine as a lone client's Wait does; with a wait for fuller batches
// it leaves it to the consumer.
func TestEvaluateRunsInline(t *testing.T) {
	for _, wait := range []time.Duration{-1, 50 * time.Microsecond} {
		sb := &stackBackend{fakeBackend: fakeBackend{in: 2, ps: 3, mb: 16}}
		b, err := New(sb, Options{Wait: wait})
		if err != nil {
			t.Fatal(err)
		}
		pol := make([]float32, 3)
		withTimeout(t, 10*time.Second, func() {
			for i := range 200 {
				v, err := b.Evaluate(context.Background(), func(row []float32) { row[0], row[1] = 2, float32(i) }, pol)
				if err != nil || v != 2+float32(i) || pol[2] != 20+float32(i)+2 {
					t.Errorf("request %d: value %v, policy %v, %v", i, v, pol, err)
					return
				}
			}
		})
		in, co := sb.inline.Load(), sb.consumer.Load()
		if wait < 0 && in < 9*co || wait >= 0 && in != 0 {
			t.Errorf("Wait %v: backend calls on the caller's goroutine %d, on the consumer's %d", wait, in, co)
		}
		b.Close()
	}
}

// A lone client's requests are committed without waking the consumer:
// a caller that only polls (never Waits) must still get its answers.
func TestQuietCommitPolled(t *testing.T) {
	fb := &fakeBackend{in: 2, ps: 3, mb: 16}
	b, err := New(fb, Options{Wait: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c := NewClient(1)
	buf := make([]Completion, 1)
	withTimeout(t, 10*time.Second, func() {
		for i := range 50 {
			if _, err := b.Submit(c, uint64(i), func(row []float32) { row[0], row[1] = 1, float32(i) }); err != nil {
				t.Error(err)
				return
			}
			for c.Poll(buf) == 0 {
				runtime.Gosched()
			}
			if _, v, _ := b.Result(buf[0].Ticket); v != 1+float32(i) {
				t.Errorf("request %d: value %v", i, v)
			}
			b.Release(buf[0].Ticket)
		}
	})
}

// Several lone clients and a client with many requests in flight share
// one batcher whose backend is not safe for concurrent use: batches run
// inline on the clients' goroutines and on the consumer's, never two at
// once, every answer reaches its owner, and Close in the middle of it
// neither hangs nor loses a committed request.
func TestInlineRunsAreSerialised(t *testing.T) {
	for _, target := range []bool{false, true} {
		sb := &stackBackend{fakeBackend: fakeBackend{in: 2, ps: 3, mb: 8, work: 5 * time.Microsecond}}
		var active atomic.Int64
		opts := Options{Wait: -1, Slots: 64}
		if target {
			opts.Target = func() int { return int(active.Load()) }
			opts.TargetWait = 200 * time.Microsecond
		}
		b, err := New(sb, opts)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for k := range 4 {
			depth := []int{1, 2, 1, 12}[k]
			active.Add(int64(depth))
			wg.Go(func() {
				defer active.Add(-int64(depth))
				if err := submitAll(b, NewClient(16), float32(10*k), 2000, depth); err != nil {
					t.Error(err)
				}
			})
		}
		withTimeout(t, 30*time.Second, wg.Wait)
		if sb.overlapped.Load() {
			t.Errorf("Target %v: two backend calls overlapped on a batcher with one consumer", target)
		}
		if !target && sb.inline.Load() == 0 {
			t.Error("no batch ran on a lone client's goroutine")
		}
		withTimeout(t, 10*time.Second, func() { b.Close() })
	}
}

// A paced batcher (Target) waits for the rows its producers will send,
// but not once every producer is blocked waiting for results
// (Producers): a search that sent fewer rows than it announced (its other
// leaves terminal, or valued by rollouts) gets them back at once, not
// after TargetWait. Without Producers it waits.
func TestPacedStopsWaitingForBlockedProducers(t *testing.T) {
	for _, withProducers := range []bool{true, false} {
		fb := &fakeBackend{in: 2, ps: 3, mb: 32}
		opts := Options{Wait: -1, Target: func() int { return 16 }, TargetWait: 300 * time.Millisecond}
		if withProducers {
			opts.Producers = func() int { return 2 }
		}
		b, err := New(fb, opts)
		if err != nil {
			t.Fatal(err)
		}
		// Two producers: a client with 12 requests (not a lone one) and
		// a blocking Evaluate; 13 rows, fewer than Target's 16.
		var wg sync.WaitGroup
		start := time.Now()
		wg.Go(func() {
			if _, err := b.Evaluate(context.Background(), func(row []float32) { row[0], row[1] = 5, 0 }, make([]float32, 3)); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if err := submitAll(b, NewClient(16), 1, 12, 12); err != nil {
				t.Error(err)
			}
		})
		withTimeout(t, 10*time.Second, wg.Wait)
		if took := time.Since(start); withProducers && took > 150*time.Millisecond {
			t.Errorf("with every producer blocked the batch waited %v (TargetWait 300ms)", took)
		} else if !withProducers && took < 250*time.Millisecond {
			t.Errorf("without Producers the batch ran after %v, before TargetWait: the test does not show the wait", took)
		}
		b.Close()
	}
}
