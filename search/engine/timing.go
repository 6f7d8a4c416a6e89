package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/canopy-go/canopy/nets"
)

// TimedBackend wraps a backend and adds up the wall time spent inside its
// Evaluate calls (the backend's busy time). It is safe for concurrent use
// when the inner backend is.
type TimedBackend struct {
	nets.Backend
	busy atomic.Int64 // ns inside Evaluate
}

// NewTimedBackend wraps be.
func NewTimedBackend(be nets.Backend) *TimedBackend { return &TimedBackend{Backend: be} }

// Evaluate implements nets.Backend.
func (t *TimedBackend) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	t0 := time.Now()
	err := t.Backend.Evaluate(ctx, batch, input, policy, value)
	t.busy.Add(int64(time.Since(t0)))
	return err
}

// ValueSize implements nets.ValueSizer: the inner backend's values per
// row.
func (t *TimedBackend) ValueSize() int { return nets.ValueSize(t.Backend) }

// RegisterInput implements nets.InputRegistrar when the inner backend
// does, and otherwise says it does not.
func (t *TimedBackend) RegisterInput(buf []float32) error {
	if r, ok := t.Backend.(nets.InputRegistrar); ok {
		return r.RegisterInput(buf)
	}
	return errNoRegistrar
}

// UnregisterInput implements nets.InputRegistrar (see RegisterInput).
func (t *TimedBackend) UnregisterInput(buf []float32) error {
	if r, ok := t.Backend.(nets.InputRegistrar); ok {
		return r.UnregisterInput(buf)
	}
	return errNoRegistrar
}

var errNoRegistrar = errors.New("engine: the backend takes no registered inputs")

// Busy is the total time spent in Evaluate so far.
func (t *TimedBackend) Busy() time.Duration { return time.Duration(t.busy.Load()) }
