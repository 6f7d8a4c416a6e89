package search

import (
	"sync"

	"github.com/canopy-go/canopy/games"
)

// EvaluatorResolver resolves an eval= name that is not a registered
// evaluator, such as a network reference (a weights file or a shipped
// network name): ok false means the name is not its kind. The network
// layer (search/engine) installs one, so `mcts:eval=<net>` works in every
// command that links it.
type EvaluatorResolver func(g games.Game, name string) (ev Evaluator, ok bool, err error)

var (
	resolverMu sync.RWMutex
	resolvers  []EvaluatorResolver
)

// RegisterEvaluatorResolver adds r; resolvers are tried in registration
// order after the named evaluators.
func RegisterEvaluatorResolver(r EvaluatorResolver) {
	resolverMu.Lock()
	defer resolverMu.Unlock()
	resolvers = append(resolvers, r)
}

// resolveEvaluator tries the resolvers for name.
func resolveEvaluator(g games.Game, name string) (Evaluator, bool, error) {
	resolverMu.RLock()
	rs := append([]EvaluatorResolver(nil), resolvers...)
	resolverMu.RUnlock()
	for _, r := range rs {
		if ev, ok, err := r(g, name); ok || err != nil {
			return ev, ok, err
		}
	}
	return nil, false, nil
}
