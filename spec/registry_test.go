package spec

import (
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := NewRegistry[int]("widget")
	r.Register("b", 2)
	r.Register("a", 1)
	r.Register("c", 3)
	if v, ok := r.Lookup("b"); !ok || v != 2 {
		t.Errorf("Lookup(b) = %d, %v", v, ok)
	}
	if _, ok := r.Lookup("z"); ok {
		t.Error("Lookup(z) found an entry")
	}
	if got := r.Names(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Names = %v", got)
	}
	if got := r.All(); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("All = %v, want sorted by name", got)
	}
	want := "unknown widget \"bb\" (did you mean \"b\"?) (available: a, b, c; see `canopy widgets`)"
	if err := r.Unknown("bb", "canopy widgets"); err == nil || err.Error() != want {
		t.Errorf("Unknown = %v, want %s", err, want)
	}
	for _, name := range []string{"a", ""} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(p.(string), "widget") {
					t.Errorf("Register(%q) panic = %v, want one naming the kind", name, p)
				}
			}()
			r.Register(name, 9)
		}()
	}
}

// Registration and lookups may race (tests register while others read);
// go test -race checks the locking.
func TestRegistryConcurrent(t *testing.T) {
	r := NewRegistry[int]("widget")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Register(string(rune('a'+i)), i)
			r.All()
			r.Lookup("a")
		}()
	}
	wg.Wait()
	if len(r.Names()) != 8 {
		t.Errorf("%d names, want 8", len(r.Names()))
	}
}
