package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The lease: one trainer per fleet name. The trainer holding it keeps
// key "lease" of N-state, naming its run, and renews it (a KV update
// conditional on the revision it last wrote) every quarter of its TTL. A
// trainer of another run is refused while the lease was renewed within
// its TTL, measured in the server's clock (the lease entry's timestamp
// against a fresh entry's, so that the trainers' clocks do not matter);
// a lease older than that (its trainer killed) is taken over. A trainer
// of the same run (the run directory's id: a restart after a crash; the
// run directory's lock keeps two live trainers out of one directory)
// takes its lease back at once.
const (
	leaseKey        = "lease"
	clockKey        = "clock"
	defaultLeaseTTL = 20 * time.Second
)

// leaseHolder is the lease's value.
type leaseHolder struct {
	Run    string        `json:"run"`
	Holder string        `json:"holder,omitempty"` // Setup.Holder: the run directory
	Host   string        `json:"host"`
	PID    int           `json:"pid"`
	Since  time.Time     `json:"since"`
	TTL    time.Duration `json:"ttl_ns"`
}

func (h leaseHolder) String() string {
	s := fmt.Sprintf("the trainer of run %s (host %s, pid %d", h.Run, h.Host, h.PID)
	if h.Holder != "" {
		s += ", " + h.Holder
	}
	return s + ", since " + h.Since.UTC().Format(time.RFC3339) + ")"
}

// ErrNameInUse is wrapped by NewTrainer's error when a trainer of another
// run holds the fleet name.
var ErrNameInUse = errors.New("in use")

// ErrLeaseLost is wrapped by the error of a trainer whose lease another
// trainer took (this one was silent for longer than the lease's TTL).
var ErrLeaseLost = errors.New("fleet: this trainer lost its lease on the fleet name")

// lease is a trainer's hold on its fleet name, renewed by a goroutine
// of its own until release.
type lease struct {
	kv     jetstream.KeyValue
	name   string
	me     leaseHolder
	value  []byte
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	rev  uint64 // the revision this trainer last wrote
	lost error  // set when another trainer took the lease
}

// acquireLease takes the lease of fleet name for me, or says who holds
// it; logf hears of a lease taken over.
func acquireLease(ctx context.Context, kv jetstream.KeyValue, name string, me leaseHolder, logf func(string, ...any)) (*lease, error) {
	if me.TTL <= 0 {
		me.TTL = defaultLeaseTTL
	}
	me.Host, _ = os.Hostname()
	me.PID = os.Getpid()
	me.Since = time.Now()
	value, err := json.Marshal(me)
	if err != nil {
		return nil, err
	}
	l := &lease{kv: kv, name: name, me: me, value: value, done: make(chan struct{})}
	for attempt := 0; ; attempt++ {
		if attempt == 5 {
			return nil, fmt.Errorf("fleet %q: the lease changed hands 5 times while this trainer tried to take it: is another trainer starting with --nats-name %s?", name, name)
		}
		e, err := kv.Get(ctx, leaseKey)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			rev, err := kv.Create(ctx, leaseKey, value)
			if errors.Is(err, jetstream.ErrKeyExists) {
				continue // another trainer was quicker: look at it
			}
			if err != nil {
				return nil, fmt.Errorf("fleet %q: taking the lease: %w", name, err)
			}
			l.rev = rev
			break
		}
		if err != nil {
			return nil, fmt.Errorf("fleet %q: reading the lease: %w", name, err)
		}
		var h leaseHolder
		if err := json.Unmarshal(e.Value(), &h); err != nil {
			h = leaseHolder{Run: "?", Host: "?", TTL: defaultLeaseTTL}
		}
		if h.TTL <= 0 {
			h.TTL = defaultLeaseTTL
		}
		if h.Run != me.Run {
			age, err := serverAge(ctx, kv, e.Created())
			if err != nil {
				return nil, fmt.Errorf("fleet %q: reading the server's clock: %w", name, err)
			}
			if age < h.TTL {
				return nil, fmt.Errorf("fleet %q is %w by %s, which renewed its lease %s ago: give this run another --nats-name, or stop that trainer (a killed trainer's lease expires %s after its last renewal)",
					name, ErrNameInUse, h, age.Round(time.Millisecond), h.TTL)
			}
			logf("  fleet: taking over the fleet name %q from %s, silent for %s (more than its lease's %s)", name, h, age.Round(time.Second), h.TTL)
		}
		rev, err := kv.Update(ctx, leaseKey, value, e.Revision())
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("fleet %q: taking the lease: %w", name, err)
		}
		l.rev = rev
		break
	}
	hctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.renew(hctx, logf)
	return l, nil
}

// serverAge is how long before now, in the server's clock, a KV entry of
// kv created at t was written: a fresh entry's timestamp is the server's
// now.
func serverAge(ctx context.Context, kv jetstream.KeyValue, t time.Time) (time.Duration, error) {
	if _, err := kv.Put(ctx, clockKey, nil); err != nil {
		return 0, err
	}
	e, err := kv.Get(ctx, clockKey)
	if err != nil {
		return 0, err
	}
	return e.Created().Sub(t), nil
}

// renew updates the lease every quarter of its TTL until ctx ends or
// another trainer takes it. A server that does not answer is retried at
// the next tick: when it answers again, the lease is either still this
// trainer's (renewed) or another's (lost).
func (l *lease) renew(ctx context.Context, logf func(string, ...any)) {
	defer close(l.done)
	t := time.NewTicker(l.me.TTL / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		l.mu.Lock()
		rev := l.rev
		l.mu.Unlock()
		uctx, cancel := context.WithTimeout(ctx, l.me.TTL/4)
		next, err := l.kv.Update(uctx, leaseKey, l.value, rev)
		cancel()
		if err == nil {
			l.mu.Lock()
			l.rev = next
			l.mu.Unlock()
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) && !errors.Is(err, jetstream.ErrKeyExists) &&
			!errors.Is(err, jetstream.ErrKeyNotFound) && !errors.Is(err, jetstream.ErrKeyDeleted) {
			continue // the server is away: try again at the next tick
		}
		holder := "another trainer"
		if e, err := l.kv.Get(ctx, leaseKey); err == nil {
			var h leaseHolder
			if json.Unmarshal(e.Value(), &h) == nil {
				holder = h.String()
			}
		}
		l.mu.Lock()
		l.lost = fmt.Errorf("%w %q to %s: it was not renewed for longer than its %s (stopped, or cut off from the server); stop one of the two trainers",
			ErrLeaseLost, l.name, holder, l.me.TTL)
		l.mu.Unlock()
		logf("  %v", l.lost)
		return
	}
}

// err is the lease's loss, or nil while this trainer holds it.
func (l *lease) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// stop stops the renewals, leaving the lease on the server.
func (l *lease) stop() {
	l.cancel()
	<-l.done
}

// release stops the renewals and deletes the lease if it is still this
// trainer's, so that another run may take the name at once.
func (l *lease) release(ctx context.Context) {
	l.cancel()
	<-l.done
	if l.err() != nil {
		return
	}
	l.mu.Lock()
	rev := l.rev
	l.mu.Unlock()
	l.kv.Delete(ctx, leaseKey, jetstream.LastRevision(rev))
}
