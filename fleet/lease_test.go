package fleet

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSecondTrainerRefused starts a second trainer of another run under
// the same fleet name on one server: it must be refused with a message
// naming the holder (before the lease, it was accepted and the two
// trainers consumed each other's games). A trainer of the same run (a
// restart) takes the lease back at once, and the first trainer then
// finds it lost; a trainer killed without releasing its lease (it stops
// renewing) loses it to another run after the lease's TTL.
func TestSecondTrainerRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const ttl = 800 * time.Millisecond
	f := startFleet(t, Setup{Run: "r1", Holder: "runs/first", LeaseTTL: ttl})
	newTrainer := func(run string) (*Trainer, error) {
		tr, err := NewTrainer(ctx, connect(t, f.srv.URL()), Setup{Name: "test", Run: run, Holder: "runs/" + run, LeaseTTL: ttl}, nil)
		if err == nil {
			t.Cleanup(tr.Close)
		}
		return tr, err
	}
	_, err := newTrainer("r2")
	if err == nil {
		t.Fatal("a second trainer of another run started on the same fleet name")
	}
	if !errors.Is(err, ErrNameInUse) || !strings.Contains(err.Error(), "run r1") || !strings.Contains(err.Error(), "runs/first") ||
		!strings.Contains(err.Error(), "--nats-name") {
		t.Errorf("the refusal does not name the holder and the way out: %v", err)
	}
	// The first trainer's renewals keep it refused past the TTL.
	time.Sleep(2 * ttl)
	if _, err := newTrainer("r2"); !errors.Is(err, ErrNameInUse) {
		t.Fatalf("after %s of renewals: %v, want a refusal", 2*ttl, err)
	}
	// The same run restarted takes its lease back at once; the first
	// trainer learns it lost the lease at its next renewal.
	restarted, err := newTrainer("r1")
	if err != nil {
		t.Fatalf("the same run restarted: %v", err)
	}
	for deadline := time.Now().Add(5 * ttl); f.tr.lease.err() == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first trainer did not notice that its lease was taken")
		}
	}
	job, netPath := tinyJob(t, f.dir, 2)
	if _, err := f.tr.SelfPlay(ctx, job, netPath, openOutput(t, filepath.Join(f.dir, "sp"), job), nil); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("SelfPlay of the trainer that lost its lease: %v, want ErrLeaseLost", err)
	}
	// The restarted trainer is killed: it stops renewing and never
	// releases. Another run is refused until the TTL has passed, then
	// takes over.
	restarted.lease.cancel()
	<-restarted.lease.done
	if _, err := newTrainer("r3"); !errors.Is(err, ErrNameInUse) {
		t.Fatalf("right after the holder died: %v, want a refusal", err)
	}
	time.Sleep(ttl + 100*time.Millisecond)
	r3, err := newTrainer("r3")
	if err != nil {
		t.Fatalf("%s after the holder died: %v", ttl, err)
	}
	// A trainer that closes releases the name at once.
	r3.Close()
	if _, err := newTrainer("r4"); err != nil {
		t.Fatalf("after the holder closed: %v", err)
	}
}

// TestFleetRecreatedAfterStoreLoss deletes every stream and bucket of the
// fleet while the trainer collects (what a server whose store was lost
// and started afresh has): the trainer creates them again, takes its
// lease anew, queues the games still missing, and a worker plays them.
// Before, the trainer retried a stream that no longer existed for ever.
func TestFleetRecreatedAfterStoreLoss(t *testing.T) {
	f := startFleet(t, Setup{AckWait: 2 * time.Second})
	job, netPath := tinyJob(t, f.dir, 4)
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := f.selfPlayInBackground(ctx, job, netPath, o)
	for !strings.Contains(f.log.String(), "games queued") {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // collecting by now
	js := f.tr.h.js
	for _, s := range []string{"test-tasks", "test-games", "KV_test-state", "OBJ_test-nets", "OBJ_test-large"} {
		if err := js.DeleteStream(ctx, s); err != nil {
			t.Fatalf("deleting %s: %v", s, err)
		}
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var wlog syncBuffer
	w, err := NewWorker(connect(t, f.srv.URL()), WorkerOptions{Name: "test", Backend: "cpu", Trees: 2, Cache: t.TempDir(), Report: -1, Log: &wlog})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	var r selfPlayResult
	select {
	case r = <-res:
	case <-time.After(30 * time.Second):
		t.Fatalf("the trainer did not finish 30 s after the fleet's streams were lost:\n%s\nworker:\n%s", f.log.String(), wlog.String())
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("worker: %v", err)
	}
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, f.log.String())
	}
	if got := o.Manifest().Totals.Games; got != job.Games || r.st.Games != job.Games {
		t.Fatalf("%d games on disk, %d received; want %d\n%s", got, r.st.Games, job.Games, f.log.String())
	}
	if !strings.Contains(f.log.String(), "creating them again") {
		t.Errorf("the trainer's log does not say it made the fleet again:\n%s", f.log.String())
	}
	// The lease is the trainer's again.
	if _, err := NewTrainer(ctx, f.nc, Setup{Name: "test", Run: "other"}, nil); !errors.Is(err, ErrNameInUse) {
		t.Errorf("another run's trainer after the recreation: %v, want a refusal", err)
	}
}

// The workers' consumer gets the limits the trainer asks for; max ack
// pending may change at a restart, max waiting (which the server fixes
// when it makes the consumer) is kept when unset and refused, with a
// message saying how, when set to another value.
func TestConsumerLimits(t *testing.T) {
	f := startFleet(t, Setup{MaxAckPending: 100, MaxWaiting: 1000})
	ctx := context.Background()
	limits := func() (int, int) {
		t.Helper()
		c, err := f.tr.hs().js.Consumer(ctx, "test-tasks", workersConsumer)
		if err != nil {
			t.Fatal(err)
		}
		cfg := c.CachedInfo().Config
		return cfg.MaxAckPending, cfg.MaxWaiting
	}
	if ap, mw := limits(); ap != 100 || mw != 1000 {
		t.Fatalf("max ack pending %d, max waiting %d; want 100 and 1000", ap, mw)
	}
	tr, err := NewTrainer(ctx, f.nc, Setup{Name: "test", Run: "r1", MaxAckPending: 200}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.Close()
	if ap, mw := limits(); ap != 200 || mw != 1000 {
		t.Errorf("after a restart asking for 200: max ack pending %d, max waiting %d; want 200 and 1000", ap, mw)
	}
	if _, err := NewTrainer(ctx, f.nc, Setup{Name: "test", Run: "r1", MaxWaiting: 2000}, nil); err == nil || !strings.Contains(err.Error(), "max waiting 1000") {
		t.Errorf("changing max waiting: %v, want an error naming the consumer's 1000", err)
	}
	for _, s := range []Setup{{MaxAckPending: -1}, {MaxAckPending: MaxAckPendingLimit + 1}, {MaxWaiting: -1}, {MaxWaiting: MaxWaitingLimit + 1}} {
		if err := s.Check(); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
}
