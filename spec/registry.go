package spec

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Registry is a table of named entries: the games, agents and network
// backends that specs name, each filled by its packages' init functions
// (like database/sql's drivers). It is the one implementation behind
// games.Register, agent.Register and nets.RegisterBackendInfo; their
// packages keep their own checks of an entry and their own error wording.
//
// A Registry is safe for concurrent use. The zero value is not usable:
// make one with NewRegistry.
type Registry[T any] struct {
	kind string // what an entry is, for panics and errors ("game")

	mu sync.RWMutex
	m  map[string]T
}

// NewRegistry returns an empty registry of entries called kind ("game",
// "agent", "backend").
func NewRegistry[T any](kind string) *Registry[T] {
	return &Registry[T]{kind: kind, m: map[string]T{}}
}

// Register adds v under name. An empty or duplicate name panics: it is a
// programming error, caught at init.
func (r *Registry[T]) Register(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == "" {
		panic("spec: " + r.kind + " registered without a name")
	}
	if _, dup := r.m[name]; dup {
		panic(fmt.Sprintf("spec: duplicate registration of %s %q", r.kind, name))
	}
	r.m[name] = v
}

// Lookup returns the entry registered under name, and whether there is
// one.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.m[name]
	return v, ok
}

// Names returns the registered names, sorted.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// All returns the entries sorted by name.
func (r *Registry[T]) All() []T {
	names := r.Names()
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]T, 0, len(names))
	for _, n := range names {
		if v, ok := r.m[n]; ok {
			out = append(out, v)
		}
	}
	return out
}

// Unknown is the error for name, which names no entry: it suggests the
// nearest name (Suggest), lists the available ones and says which command
// lists them, e.g. `unknown game "conect4" (did you mean "connect4"?)
// (available: connect4, hex; see `canopy games`)`.
func (r *Registry[T]) Unknown(name, command string) error {
	names := r.Names()
	return fmt.Errorf("unknown %s %q%s (available: %s; see `%s`)", r.kind, name, Suggest(name, names), strings.Join(names, ", "), command)
}
