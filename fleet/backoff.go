package fleet

import (
	"context"
	"time"
)

// Bounds of backoff.
const (
	backoffMin      = 50 * time.Millisecond
	backoffMax      = 5 * time.Second
	backoffLogEvery = 10 * time.Second
)

// backoff paces the retries of a request the server cannot answer (its
// JetStream gone, a cluster without a leader), which would otherwise
// fail at once, thousands of times a second, and rate-limits the line
// logged about it. The zero value is ready: the first failure waits
// backoffMin, each next one twice as long up to backoffMax; the first
// failure is logged, then at most one line per backoffLogEvery counting
// the failures. ok starts over. A backoff is used by one goroutine.
type backoff struct {
	wait     time.Duration // the last wait
	failures int           // since the last success
	logged   time.Time     // when the last line was written
}

// fail records a failure of what with err, logs it when due, and sleeps
// the next wait or until ctx ends.
func (b *backoff) fail(ctx context.Context, logf func(string, ...any), what string, err error) {
	b.failures++
	b.wait = min(max(2*b.wait, backoffMin), backoffMax)
	if b.failures == 1 || time.Since(b.logged) >= backoffLogEvery {
		logf("  fleet: %s: %v (failure %d in a row; retrying in %s)", what, err, b.failures, b.wait)
		b.logged = time.Now()
	}
	t := time.NewTimer(b.wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// ok records a success, saying so after failures that were logged.
func (b *backoff) ok(logf func(string, ...any), what string) {
	if b.failures > 0 {
		logf("  fleet: %s works again after %d failures", what, b.failures)
	}
	*b = backoff{}
}
