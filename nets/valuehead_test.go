package nets

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// A per-player value head travels through the backends as batch x
// ValueSize values: the cpu backend writes Forward's, the cache returns
// stored rows whole, the random backend fills every entry, and the
// checker refuses to compare heads of different widths.
func TestValueHeadBackends(t *testing.T) {
	cfg := tinyConfigs["alphazero3"]
	net, err := New(cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	if net.ValueSize() != 3 {
		t.Fatalf("ValueSize %d, want 3", net.ValueSize())
	}
	const batch = 4
	in := randInput(batch*net.InputSize(), 2)
	wantP, wantV := make([]float32, batch*net.PolicySize()), make([]float32, batch*3)
	net.Clone().Forward(batch, in, wantP, wantV)

	be, err := NewCPUBackend(net, BackendOptions{MaxBatch: 8})
	if err != nil {
		t.Fatal(err)
	}
	if ValueSize(be) != 3 {
		t.Fatalf("ValueSize(cpu) = %d, want 3", ValueSize(be))
	}
	p, v := make([]float32, batch*net.PolicySize()), make([]float32, batch*3)
	if err := be.Evaluate(context.Background(), batch, in, p, v[:batch]); err == nil {
		t.Error("a value slice of one per row: no error")
	}
	if err := be.Evaluate(context.Background(), batch, in, p, v); err != nil {
		t.Fatal(err)
	}
	closeTo(t, "cpu values", v, wantV, 1e-6)

	c := NewCache(be, 64)
	if ValueSize(c) != 3 {
		t.Fatalf("ValueSize(cache) = %d, want 3", ValueSize(c))
	}
	clear(v)
	if err := c.Evaluate(context.Background(), batch, in, p, v); err != nil {
		t.Fatal(err)
	}
	closeTo(t, "cache miss values", v, wantV, 1e-6)
	// The second time rows hit; with row 0's input in row 3, row 3 gets
	// row 0's values.
	in2 := slices.Clone(in)
	rowIn := len(in) / batch
	copy(in2[3*rowIn:4*rowIn], in[:rowIn])
	v2 := make([]float32, batch*3)
	if err := c.Evaluate(context.Background(), batch, in2, p, v2); err != nil {
		t.Fatal(err)
	}
	// Rows hit unless two keys shared a slot (the hash is seeded at
	// random), so only the totals are fixed; the values are right either way.
	if st := c.Stats(); st.Hits+st.Misses != 2*batch || st.Hits == 0 {
		t.Errorf("after two batches: %d hits and %d misses, want %d look-ups, some hits", st.Hits, st.Misses, 2*batch)
	}
	closeTo(t, "cache hit values", v2[:9], wantV[:9], 1e-6)
	closeTo(t, "cache hit of row 0 for row 3", v2[9:], wantV[:3], 1e-6)

	rb, err := OpenBackend("random", net, BackendOptions{Params: map[string]string{"seed": "5"}})
	if err != nil {
		t.Fatal(err)
	}
	if ValueSize(rb) != 3 {
		t.Fatalf("ValueSize(random) = %d, want 3", ValueSize(rb))
	}
	for i := range v {
		v[i] = 9
	}
	if err := rb.Evaluate(context.Background(), batch, in, p, v); err != nil {
		t.Fatal(err)
	}
	for i, x := range v {
		if x < -0.5 || x >= 0.5 {
			t.Errorf("random value %d = %v, want in [-0.5, 0.5)", i, x)
		}
	}

	scalar, _ := New(tinyConfigs["alphazero"], 4)
	sb, _ := NewCPUBackend(scalar, BackendOptions{MaxBatch: 8})
	if _, err := NewChecker(sb, be, 0, 0); err == nil || !strings.Contains(err.Error(), "value heads differ") {
		t.Errorf("checker of a scalar and a 3-value head: %v", err)
	}
}

// value_players is validated, and the scalar head's config JSON has no
// value_players key (files written before the field existed and after
// are the same).
func TestValuePlayersConfig(t *testing.T) {
	for _, vp := range []int{-1, 65} {
		c := tinyConfigs["alphazero"]
		c.ValuePlayers = vp
		if err := c.Normalize(); err == nil || !strings.Contains(err.Error(), "value_players") {
			t.Errorf("value_players %d: %v", vp, err)
		}
	}
	for _, vp := range []int{0, 1} {
		c := tinyConfigs["alphazero"]
		c.ValuePlayers = vp
		if err := c.Normalize(); err != nil {
			t.Fatal(err)
		}
		if j := c.JSON(); strings.Contains(j, "value_players") || c.ValueSize() != 1 {
			t.Errorf("value_players %d: config %s, ValueSize %d", vp, j, c.ValueSize())
		}
	}
	c := tinyConfigs["alphazero3"]
	if err := c.Normalize(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.JSON(), `"value_players":3`) {
		t.Errorf("config %s lacks value_players", c.JSON())
	}
}
