package agent

import (
	"fmt"
	"io"
	"strings"
)

// Env is what the caller hands an agent constructor besides the game and
// the spec: the seed, where notices go, and the services the agents of one
// command share (KataGo's Search::setNNEval, lc0's SearchFactory taking a
// Backend). Nothing an agent needs is found through package-level state:
// a command builds one Env with its services (search/engine's Pool, which
// carries the command's --backend) and passes it to every agent it makes.
//
// The zero Env is valid: seed 0, notices discarded, no shared services.
// Agents that would use a shared service make a private one instead (a
// network agent opens its own engine), or, where that cannot work, return
// an error saying which service the caller must provide.
//
// An Env is a value; WithSeed and With return modified copies, and the
// services slice is never modified in place, so one Env may be shared by
// goroutines.
type Env struct {
	// Seed seeds the agent: the same seed and the same sequence of
	// states give the same choices.
	Seed uint64
	// Log receives one-line notices (which network and backend an agent
	// opened); nil discards them.
	Log io.Writer

	services []any
}

// WithSeed returns a copy of e with seed s.
func (e Env) WithSeed(s uint64) Env { e.Seed = s; return e }

// With returns a copy of e that also carries the service s. Services are
// found by type with Lookup; a later service of the same type shadows an
// earlier one.
func (e Env) With(s any) Env {
	e.services = append(e.services[:len(e.services):len(e.services)], s)
	return e
}

// Lookup returns the most recently added service of e that is a T (a
// concrete type, or an interface the service implements), and whether
// there is one.
func Lookup[T any](e Env) (T, bool) {
	for i := len(e.services) - 1; i >= 0; i-- {
		if s, ok := e.services[i].(T); ok {
			return s, true
		}
	}
	var zero T
	return zero, false
}

// Logf writes one notice line to e.Log (nothing when it is nil).
func (e Env) Logf(format string, args ...any) {
	if e.Log == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if !strings.HasSuffix(msg, "\n") {
		msg += "\n"
	}
	io.WriteString(e.Log, msg)
}
