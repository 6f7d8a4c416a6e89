package nets

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/nets/safetensors"
)

// A file holding a NaN or an infinity is refused at load time, with the
// tensor and the first bad index named.
func TestDecodeRejectsNonFinite(t *testing.T) {
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		net := tinyNet(t)
		p := net.Params()[0]
		buf := make([]float32, len(p.Data))
		p.ToFile(buf)
		buf[3] = bad
		ts := net.tensors()
		ts[0] = safetensors.FromFloat32(p.Name, p.Shape, buf)
		b, err := safetensors.Encode(ts, net.metadata())
		if err != nil {
			t.Fatal(err)
		}
		_, err = Decode(b)
		if err == nil || !strings.Contains(err.Error(), p.Name) || !strings.Contains(err.Error(), "index 3") {
			t.Errorf("weight %v in %s: Decode error %v, want one naming the tensor and index 3", bad, p.Name, err)
		}
		if _, _, err := DecodeWithMetadata(b); err == nil {
			t.Errorf("weight %v: DecodeWithMetadata accepted it", bad)
		}
	}
}

// Finite weights can still make non-finite outputs (overflow): the CPU
// backend reports the row instead of handing NaN to a search.
func TestCPUBackendRejectsNonFiniteOutput(t *testing.T) {
	net := tinyNet(t)
	for _, p := range net.Params() {
		for i := range p.Data {
			p.Data[i] = 3e38
		}
	}
	net.Invalidate()
	b, err := NewCPUBackend(net, BackendOptions{MaxBatch: 4})
	if err != nil {
		t.Fatal(err)
	}
	in, ps := b.Shape()
	input := make([]float32, 2*in)
	for i := range input {
		input[i] = 1
	}
	policy, value := make([]float32, 2*ps), make([]float32, 2)
	err = b.Evaluate(context.Background(), 2, input, policy, value)
	if err == nil || !strings.Contains(err.Error(), "row 0") || !strings.Contains(err.Error(), "not finite") {
		t.Fatalf("Evaluate on overflowing weights: %v, want an error naming row 0", err)
	}
	// A healthy net still evaluates.
	good, err := NewCPUBackend(tinyNet(t), BackendOptions{MaxBatch: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := good.Evaluate(context.Background(), 2, input, policy, value); err != nil {
		t.Fatalf("healthy net: %v", err)
	}
}

// CPUScratchBytes says what Reserve allocates, without allocating it.
func TestCPUScratchBytes(t *testing.T) {
	net := tinyNet(t)
	one := CPUScratchBytes(net, 1)
	if !(one > 0) || CPUScratchBytes(net, 1e9) != 1e9*one {
		t.Fatalf("CPUScratchBytes: %v per row, %v for 1e9 rows", one, CPUScratchBytes(net, 1e9))
	}
	net.Reserve(3)
	got := 0
	for _, s := range net.inf.slots {
		got += 4 * len(s)
	}
	if float64(got) != 3*one {
		t.Errorf("Reserve(3) allocated %d bytes, CPUScratchBytes says %v", got, 3*one)
	}
}

// allFinite finds a NaN or an infinity at every position of short and
// long slices (the four-wide loop and its tail), and passes the extreme
// finite values; checkFinite then names the row and logit.
func TestAllFinite(t *testing.T) {
	finite := []float32{0, float32(math.Copysign(0, -1)), math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 1, -2.5}
	for n := 0; n <= 11; n++ {
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = finite[i%len(finite)]
		}
		if !allFinite(xs) {
			t.Fatalf("allFinite(%v) = false", xs)
		}
		for i := range n {
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
				keep := xs[i]
				xs[i] = bad
				if allFinite(xs) {
					t.Errorf("allFinite with %v at %d of %d = true", bad, i, n)
				}
				xs[i] = keep
			}
		}
	}
	const rows, size = 3, 7
	policy, value := make([]float32, rows*size), make([]float32, rows)
	if err := checkFinite("cpu", rows, size, policy, value); err != nil {
		t.Fatal(err)
	}
	policy[2*size+5] = float32(math.Inf(1))
	if err := checkFinite("cpu", rows, size, policy, value); err == nil || !strings.Contains(err.Error(), "row 2 of 3 has policy logit 5") {
		t.Errorf("checkFinite with an infinite logit 5 in row 2: %v", err)
	}
	policy[2*size+5], value[1] = 0, float32(math.NaN())
	if err := checkFinite("cpu", rows, size, policy, value); err == nil || !strings.Contains(err.Error(), "row 1 of 3 has value NaN") {
		t.Errorf("checkFinite with a NaN value in row 1: %v", err)
	}
}
