package games

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/canopy-go/canopy/spec"
)

// Option documents one option a registered game accepts.
type Option struct {
	Key, Default, Help string
}

// Registration describes a game constructor in the registry.
type Registration struct {
	Name    string
	Summary string   // one line for `canopy games`
	Options []Option // accepted options, in display order
	// New builds the game from a parsed spec. It must read every option it
	// supports from s; the registry rejects leftovers.
	New func(s *spec.Spec) (Game, error)
}

var (
	regMu    sync.RWMutex
	registry = map[string]Registration{}
)

// Register adds a game constructor. It panics on a duplicate name, which is
// a programming error caught at init time.
func Register(r Registration) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[r.Name]; dup {
		panic("games: duplicate registration of " + r.Name)
	}
	registry[r.Name] = r
}

// Registered returns all registrations sorted by name.
func Registered() []Registration {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]Registration, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the registration for name.
func Lookup(name string) (Registration, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	r, ok := registry[name]
	return r, ok
}

// New builds a game from a spec string such as "hex:size=11". Unknown
// games and options give an error that lists what is available.
func New(specString string) (Game, error) {
	s, err := spec.Parse(specString)
	if err != nil {
		return nil, err
	}
	r, ok := Lookup(s.Name)
	if !ok {
		names := make([]string, 0)
		for _, r := range Registered() {
			names = append(names, r.Name)
		}
		return nil, fmt.Errorf("unknown game %q%s (available: %s; see `canopy games`)", s.Name, spec.Suggest(s.Name, names), strings.Join(names, ", "))
	}
	g, err := r.New(s)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(r.Options))
	for i, o := range r.Options {
		keys[i] = o.Key
	}
	if err := s.Err(keys...); err != nil {
		return nil, err
	}
	return g, nil
}

// MustNew is New for tests and examples; it panics on error.
func MustNew(specString string) Game {
	g, err := New(specString)
	if err != nil {
		panic(err)
	}
	return g
}
