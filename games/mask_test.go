package games

import (
	"slices"
	"testing"
)

func TestMask(t *testing.T) {
	m := NewMask(190)
	if len(m) != 3 || !m.Empty() || m.First() != NoAction {
		t.Fatalf("new mask: %v", m)
	}
	want := []Action{0, 5, 63, 64, 127, 189}
	for _, a := range want {
		m.Set(a)
	}
	if m.Count() != len(want) {
		t.Fatalf("count %d", m.Count())
	}
	if got := m.AppendTo(nil); !slices.Equal(got, want) {
		t.Fatalf("AppendTo %v", got)
	}
	var it []Action
	for a := range m.All() {
		it = append(it, a)
	}
	if !slices.Equal(it, want) {
		t.Fatalf("All %v", it)
	}
	for k, a := range want {
		if m.Nth(k) != a {
			t.Errorf("Nth(%d)=%d want %d", k, m.Nth(k), a)
		}
	}
	if m.Nth(len(want)) != NoAction || m.Has(190) || m.Has(-1) || m.Has(6) {
		t.Error("out of range / absent")
	}
	m.Unset(0)
	if m.First() != 5 {
		t.Errorf("First %d", m.First())
	}
	rng := NewRand(1)
	seen := map[Action]bool{}
	for range 1000 {
		seen[m.Random(rng)] = true
	}
	if len(seen) != 5 {
		t.Errorf("Random covered %d of 5", len(seen))
	}
	if n := testing.AllocsPerRun(100, func() { m.Random(rng); m.Count(); m.Has(64) }); n != 0 {
		t.Errorf("allocs %v", n)
	}
}

func TestZobristKeysDistinct(t *testing.T) {
	k := ZobristKeys(42, 4096)
	seen := map[uint64]bool{}
	for _, x := range k {
		if seen[x] || x == 0 {
			t.Fatal("duplicate or zero key")
		}
		seen[x] = true
	}
	if k2 := ZobristKeys(42, 4); !slices.Equal(k[:4], k2) {
		t.Fatal("not deterministic")
	}
}
