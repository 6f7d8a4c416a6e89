package cudabackend

import (
	"context"
	"slices"
	"testing"

	"github.com/canopy-go/canopy/nets"
)

// TestRegisteredInputMatchesStaged evaluates the same rows from a buffer
// registered with RegisterInput (uploaded straight from it, at an offset)
// and from ordinary Go memory (copied to the staging buffer first), with
// and without graphs: the outputs must be identical, and the registered
// rows must really take the direct path.
func TestRegisteredInputMatchesStaged(t *testing.T) {
	if err := Probe(); err != nil {
		fake.NoGPU(t, err)
	}
	net := testNet(t, "connect4")
	const batch, skip = 9, 5 // rows [skip, skip+batch) of the registered buffer
	in := net.InputSize()
	rows := randInput(batch*in, 3)
	for _, graphs := range []bool{false, true} {
		b, err := Open(net, Options{MaxBatch: 16, Precision: FP32, Graphs: graphs})
		if err != nil {
			t.Fatal(err)
		}
		ring := nets.PageAligned(32 * in)
		if err := b.RegisterInput(ring); err != nil {
			t.Fatalf("RegisterInput: %v", err)
		}
		copy(ring[skip*in:], rows)
		direct := ring[skip*in : (skip+batch)*in]
		if _, _, ok := b.registered(direct); !ok {
			t.Fatal("rows inside the registered buffer are not recognised")
		}
		wantP, wantV := make([]float32, batch*net.PolicySize()), make([]float32, batch)
		gotP, gotV := make([]float32, len(wantP)), make([]float32, batch)
		for range 2 { // the second run replays the graph
			if err := b.Evaluate(context.Background(), batch, slices.Clone(rows), wantP, wantV); err != nil {
				t.Fatal(err)
			}
			if err := b.Evaluate(context.Background(), batch, direct, gotP, gotV); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gotP, wantP) || !slices.Equal(gotV, wantV) {
				t.Fatalf("graphs=%v: registered input gave other outputs than the staged copy", graphs)
			}
		}
		if err := b.UnregisterInput(ring); err != nil {
			t.Errorf("UnregisterInput: %v", err)
		}
		if err := b.UnregisterInput(ring); err == nil {
			t.Error("a second UnregisterInput of the same buffer succeeded")
		}
		if err := b.RegisterInput(ring); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if err := b.UnregisterInput(ring); err != nil {
			t.Errorf("UnregisterInput after Close (which unlocked it): %v", err)
		}
	}
	checkNoViolations(t)
}
