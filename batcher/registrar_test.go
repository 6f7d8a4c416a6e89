package batcher

import (
	"context"
	"errors"
	"testing"
	"unsafe"

	"github.com/canopy-go/canopy/nets"
)

// registrarBackend records RegisterInput/UnregisterInput and checks that
// every Evaluate's input lies inside the registered buffer.
type registrarBackend struct {
	nets.Backend
	refuse      bool
	reg, unreg  int
	lo, hi      uintptr
	outside     int
	evaluations int
}

func (r *registrarBackend) RegisterInput(buf []float32) error {
	r.reg++
	if r.refuse {
		return errors.New("no page-locked memory left")
	}
	r.lo = uintptr(unsafe.Pointer(&buf[0]))
	r.hi = r.lo + uintptr(4*len(buf))
	return nil
}

func (r *registrarBackend) UnregisterInput(buf []float32) error {
	r.unreg++
	if uintptr(unsafe.Pointer(&buf[0])) != r.lo {
		return errors.New("unregistered another buffer")
	}
	return nil
}

func (r *registrarBackend) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	r.evaluations++
	p := uintptr(unsafe.Pointer(&input[0]))
	if p < r.lo || p+uintptr(4*len(input)) > r.hi {
		r.outside++
	}
	return r.Backend.Evaluate(ctx, batch, input, policy, value)
}

// TestRingRegisteredWithBackend: a backend that takes registered inputs
// gets the ring registered once (page-aligned), every batch from inside
// it, and the ring unregistered by Close; one that refuses still works.
func TestRingRegisteredWithBackend(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		rb := &registrarBackend{Backend: nets.NewRandomBackend(8, 5, 1, nets.BackendOptions{MaxBatch: 16}), refuse: refuse}
		b, err := New(rb, Options{Wait: -1})
		if err != nil {
			t.Fatal(err)
		}
		if !refuse && uintptr(unsafe.Pointer(&b.input[0]))%4096 != 0 {
			t.Error("the registered ring does not start on a page boundary")
		}
		pol := make([]float32, 5)
		for i := range 40 {
			if _, err := b.Evaluate(context.Background(), func(row []float32) { row[0] = float32(i) }, pol); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		wantUnreg := 1
		if refuse {
			wantUnreg = 0
		}
		if rb.reg != 1 || rb.unreg != wantUnreg {
			t.Errorf("refuse=%v: %d registrations, %d unregistrations; want 1, %d", refuse, rb.reg, rb.unreg, wantUnreg)
		}
		if !refuse && rb.outside > 0 {
			t.Errorf("%d of %d batches came from outside the registered ring", rb.outside, rb.evaluations)
		}
	}
}
