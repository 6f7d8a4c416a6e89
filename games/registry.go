package games

import "github.com/canopy-go/canopy/spec"

// Option documents one option a registered game accepts (a game's
// declared spec.Table documents its options: Table.Docs).
type Option = spec.Doc

// Registration describes a game constructor in the registry.
type Registration struct {
	Name    string
	Summary string   // one line for `canopy games`
	Options []Option // accepted options, in display order: the table New parses with, Table.Docs()
	// New builds the game from a parsed spec. It must read every option it
	// supports from s; the registry rejects leftovers.
	New func(s *spec.Spec) (Game, error)
}

// registry holds the games by name (spec.Registry: the same table as the
// agents' and the backends').
var registry = spec.NewRegistry[Registration]("game")

// Register adds a game constructor. It panics on a duplicate name, which is
// a programming error caught at init time.
func Register(r Registration) { registry.Register(r.Name, r) }

// Registered returns all registrations sorted by name.
func Registered() []Registration { return registry.All() }

// Lookup returns the registration for name.
func Lookup(name string) (Registration, bool) { return registry.Lookup(name) }

// New builds a game from a spec string such as "hex:size=11". Unknown
// games and options give an error that lists what is available.
func New(specString string) (Game, error) {
	s, err := spec.Parse(specString)
	if err != nil {
		return nil, err
	}
	r, ok := Lookup(s.Name)
	if !ok {
		return nil, registry.Unknown(s.Name, "canopy games")
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
