package nets

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
)

// countingBackend returns policy[j] = input[0] + j and value = input[0]/100
// and counts the rows it evaluated.
type countingBackend struct {
	in, ps, mb int
	rows       int
	err        error
}

func (b *countingBackend) Name() string        { return "counting" }
func (b *countingBackend) Shape() (int, int)   { return b.in, b.ps }
func (b *countingBackend) PreferredBatch() int { return b.mb }
func (b *countingBackend) MaxBatch() int       { return b.mb }
func (b *countingBackend) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	if err := checkBatch(ctx, b, batch, ValueSize(b), input, policy, value); err != nil {
		return err
	}
	if b.err != nil {
		return b.err
	}
	b.rows += batch
	for i := range batch {
		x := input[i*b.in]
		for j := range b.ps {
			policy[i*b.ps+j] = x + float32(j)
		}
		value[i] = x / 100
	}
	return nil
}

func TestRandomBackendUniform(t *testing.T) {
	r := NewRandomBackend(3, 5, 0, BackendOptions{MaxBatch: 8})
	in := make([]float32, 2*3)
	pol := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	val := []float32{1, 1}
	if err := r.Evaluate(context.Background(), 2, in, pol, val); err != nil {
		t.Fatal(err)
	}
	for _, x := range append(pol, val...) {
		if x != 0 {
			t.Fatalf("uniform backend gave %v %v, want all zeros", pol, val)
		}
	}
	if err := r.Evaluate(context.Background(), 9, make([]float32, 27), make([]float32, 45), make([]float32, 9)); err == nil {
		t.Error("batch 9 > MaxBatch 8 accepted")
	}
	if err := r.Evaluate(context.Background(), 2, in[:5], pol, val); err == nil {
		t.Error("short input accepted")
	}
}

func TestRandomBackendSeeded(t *testing.T) {
	r := NewRandomBackend(2, 4, 7, BackendOptions{})
	// Rows 0 and 2 are equal, row 1 differs.
	in := []float32{1, 2, 3, 4, 1, 2}
	pol := make([]float32, 12)
	val := make([]float32, 3)
	if err := r.Evaluate(context.Background(), 3, in, pol, val); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pol[0:4], pol[8:12]) || val[0] != val[2] {
		t.Errorf("equal rows got different outputs: %v %v", pol, val)
	}
	if slices.Equal(pol[0:4], pol[4:8]) {
		t.Errorf("different rows got equal policies: %v", pol)
	}
	for _, x := range pol {
		if x < -1 || x >= 1 {
			t.Errorf("logit %v outside [-1, 1)", x)
		}
	}
	for _, v := range val {
		if v < -0.5 || v >= 0.5 {
			t.Errorf("value %v outside [-0.5, 0.5)", v)
		}
	}
	// The same row alone gives the same answer as inside the batch.
	p1, v1 := make([]float32, 4), make([]float32, 1)
	if err := r.Evaluate(context.Background(), 1, in[2:4], p1, v1); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p1, pol[4:8]) || v1[0] != val[1] {
		t.Errorf("row depends on its batch: %v vs %v", p1, pol[4:8])
	}
}

func TestRandomBackendRegisteredLast(t *testing.T) {
	names := Backends()
	if names[len(names)-1] != "random" {
		t.Errorf("backends %v: random should have the lowest priority", names)
	}
	if _, err := OpenBackend("random", nil, BackendOptions{}); err == nil {
		t.Error("random backend opened without a net (it cannot know its shape)")
	}
}

func TestCache(t *testing.T) {
	inner := &countingBackend{in: 2, ps: 3, mb: 8}
	// The counts below assume that the five inputs of this test take five
	// slots: the slot comes from a hash seeded per cache, and two of five
	// keys share one of 128 slots in about 8% of seeds (the test failed so
	// in CI). Draw caches until they do not.
	var c *Cache
	for range 1000 {
		c = NewCache(inner, 100)
		slots := map[uint64]bool{}
		for _, row := range [][]float32{{10, 0}, {20, 0}, {30, 0}, {40, 0}, {10, 1}} {
			slots[c.hash(row)>>c.shift] = true
		}
		if len(slots) == 5 {
			break
		}
	}
	if c.Stats().Entries != 128 {
		t.Errorf("entries %d, want 128 (100 rounded up)", c.Stats().Entries)
	}
	ctx := context.Background()
	in := []float32{10, 0, 20, 0, 30, 0}
	pol := make([]float32, 9)
	val := make([]float32, 3)
	if err := c.Evaluate(ctx, 3, in, pol, val); err != nil {
		t.Fatal(err)
	}
	want := []float32{10, 11, 12, 20, 21, 22, 30, 31, 32}
	if !slices.Equal(pol, want) || val[1] != 0.2 {
		t.Fatalf("pol %v val %v, want %v", pol, val, want)
	}
	// Rows 0 and 2 hit (inputs 30 and 10 seen), row 1 (40) misses.
	in2 := []float32{30, 0, 40, 0, 10, 0}
	clear(pol)
	if err := c.Evaluate(ctx, 3, in2, pol, val); err != nil {
		t.Fatal(err)
	}
	want = []float32{30, 31, 32, 40, 41, 42, 10, 11, 12}
	if !slices.Equal(pol, want) || val[0] != 0.3 || val[1] != 0.4 || val[2] != 0.1 {
		t.Fatalf("pol %v val %v, want %v", pol, val, want)
	}
	if s := c.Stats(); s.Hits != 2 || s.Misses != 4 || inner.rows != 4 {
		t.Errorf("stats %+v, inner rows %d; want 2 hits, 4 misses, 4 rows", s, inner.rows)
	}
	// An input differing only past the first value is another position
	// (the counting backend reads only the first value, so a wrong hit
	// would show as a hit in the stats).
	if err := c.Evaluate(ctx, 1, []float32{10, 1}, pol, val); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Hits != 2 || inner.rows != 5 {
		t.Errorf("another input hit the cache: stats %+v, inner rows %d", s, inner.rows)
	}
	// A key that shares a slot with a cached one (1 and 1+128: slot 0, the
	// top bits) must not match: the full key is compared.
	c.mu.Lock()
	err := c.evaluateHashed(ctx, 1, []uint64{1}, []float32{60, 0}, pol, val)
	if err == nil {
		err = c.evaluateHashed(ctx, 1, []uint64{1 + 128}, []float32{50, 0}, pol, val)
	}
	c.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if pol[0] != 50 {
		t.Errorf("slot collision returned a cached entry for another key: %v", pol[:3])
	}
	// Errors reach the caller, and the failed rows are not cached.
	inner.err = errors.New("boom")
	if err := c.Evaluate(ctx, 1, []float32{1, 0}, pol, val); err == nil {
		t.Error("inner error lost")
	}
	inner.err = nil
	if err := c.Evaluate(ctx, 1, []float32{1, 0}, pol, val); err != nil || pol[0] != 1 {
		t.Errorf("after an error: %v, pol %v", err, pol[:3])
	}
	if err := c.Evaluate(ctx, 9, make([]float32, 18), make([]float32, 27), make([]float32, 9)); err == nil {
		t.Error("a batch above MaxBatch accepted")
	}
	if a := testing.AllocsPerRun(100, func() {
		_ = c.Evaluate(ctx, 3, in, pol, val)
	}); a != 0 {
		t.Errorf("Evaluate allocates %v per call", a)
	}
}

func TestChecker(t *testing.T) {
	ref := &countingBackend{in: 1, ps: 2, mb: 4}
	zero := NewRandomBackend(1, 2, 0, BackendOptions{MaxBatch: 4})
	c, err := NewChecker(ref, zero, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pol := make([]float32, 4)
	val := make([]float32, 2)
	// ref gives policies {3,4}, {-5,-4} and values .03, -.05; zero gives 0.
	if err := c.Evaluate(ctx, 2, []float32{3, -5}, pol, val); err != nil {
		t.Fatal(err)
	}
	if p, v := c.MaxDiff(); p != 5 || math.Abs(v-0.05) > 1e-7 {
		t.Errorf("MaxDiff %v %v, want 5 0.05", p, v)
	}
	if !slices.Equal(pol, []float32{3, 4, -5, -4}) {
		t.Errorf("checker returned %v, want the reference outputs", pol)
	}
	strict, _ := NewChecker(ref, zero, 1, 1)
	if err := strict.Evaluate(ctx, 1, []float32{-0.5}, pol, val); err != nil {
		t.Errorf("within tolerance: %v", err)
	}
	if err := strict.Evaluate(ctx, 1, []float32{2}, pol, val); err == nil {
		t.Error("policy difference 3 > tolerance 1 not reported")
	}
	if _, err := NewChecker(ref, NewRandomBackend(1, 3, 0, BackendOptions{}), 0, 0); err == nil {
		t.Error("shape mismatch accepted")
	}
}
