package agent

import (
	"bytes"
	"testing"
)

type svcA struct{ n int }
type namer interface{ Name() string }
type svcB struct{}

func (svcB) Name() string { return "b" }

func TestEnvServices(t *testing.T) {
	var zero Env
	if _, ok := Lookup[*svcA](zero); ok {
		t.Fatal("the zero Env has a service")
	}
	a1, a2 := &svcA{1}, &svcA{2}
	base := Env{Seed: 7}.With(a1)
	e := base.With(svcB{}).With(a2)
	if got, ok := Lookup[*svcA](e); !ok || got != a2 {
		t.Errorf("Lookup[*svcA] = %v, %t; want the later service %v", got, ok, a2)
	}
	if got, ok := Lookup[namer](e); !ok || got.Name() != "b" {
		t.Errorf("Lookup by interface = %v, %t; want svcB", got, ok)
	}
	// With returns copies: adding to one Env never changes another that
	// shares its services.
	other := base.With(&svcA{3})
	if got, _ := Lookup[*svcA](e); got != a2 {
		t.Errorf("adding to a sibling Env changed e's service to %v", got)
	}
	if got, _ := Lookup[*svcA](other); got.n != 3 {
		t.Errorf("sibling Env: service %v, want n=3", got)
	}
	if got, _ := Lookup[*svcA](base); got != a1 {
		t.Errorf("the base Env's service changed to %v", got)
	}
	if s := e.WithSeed(9); s.Seed != 9 || e.Seed != 7 {
		t.Errorf("WithSeed: %d (copy), %d (original); want 9 and 7", s.Seed, e.Seed)
	}
}

func TestEnvLogf(t *testing.T) {
	Env{}.Logf("dropped %d", 1) // nil Log: no panic, nothing written
	var b bytes.Buffer
	e := Env{Log: &b}
	e.Logf("network %s", "x")
	e.Logf("two\n")
	if got, want := b.String(), "network x\ntwo\n"; got != want {
		t.Errorf("Logf wrote %q, want %q", got, want)
	}
}
