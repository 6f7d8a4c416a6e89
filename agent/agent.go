package agent

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

// Agent chooses actions.
type Agent interface {
	// Act returns the action player chooses in s. s is not modified. At a
	// simultaneous node, player says whose choice is asked for; otherwise
	// player == s.CurrentPlayer(). Act honours ctx cancellation and the
	// budget given at construction (simulations, time).
	Act(ctx context.Context, s games.State, player int) (games.Action, error)
}

// Analysis is one row of an agent's view of a position (for --analyze).
type Analysis struct {
	Action games.Action
	Visits int     // search visits (0 when not a search agent)
	Q      float64 // the action's mean value from the mover's view, in [-1, 1] where meaningful; NaN where the agent has no value per action (see Evaluator)
	Prior  float64 // prior probability, 0 when none
	Score  float64 // agent-specific score (solver score, heuristic value)
}

// Analyzer is implemented by agents that can explain their choice.
type Analyzer interface {
	Agent
	Analyze(ctx context.Context, s games.State, player int) ([]Analysis, error)
}

// Evaluator is implemented by analyzers that value the position as a
// whole, from player's view in [-1, 1] (the policy agent: its network's
// value head), whether or not their Analysis rows carry a Q per action.
type Evaluator interface {
	Evaluate(ctx context.Context, s games.State, player int) (float64, error)
}

// SeatValuer is implemented by analyzers that value the position for
// every player (az and policy with a per-player value head): after Act or
// Analyze, SeatValues is each player's value of that position in [-1, 1]
// (az: its search's, policy: its network's), seat order, or nil when the
// agent has no such values (a scalar value head). The slice may be reused
// by the agent's next call.
type SeatValuer interface {
	SeatValues() []float64
}

// Option documents one option of a registered agent. File marks an
// option whose value may name a file to read (a network, an opening
// book); a server confines these values to the directories it serves
// (web's guard).
type Option = spec.Doc

// OptionsOf documents the options of a declared spec.Table for the
// registry (key, default, help with the allowed range): t.Docs().
func OptionsOf(t spec.Table) []Option { return t.Docs() }

// Registration describes an agent constructor.
type Registration struct {
	Name    string
	Summary string
	Options []Option
	// Games restricts the agent to these game names; empty means any game.
	Games []string
	// New builds the agent for game g with the seed and services of env.
	// It must read every option it supports from s; the registry rejects
	// leftovers.
	New func(g games.Game, s *spec.Spec, env Env) (Agent, error)
}

// registry holds the agents by name (spec.Registry: the same table as
// the games' and the backends').
var registry = spec.NewRegistry[Registration]("agent")

// Register adds an agent constructor; duplicate names panic at init.
func Register(r Registration) { registry.Register(r.Name, r) }

// Registered returns all registrations sorted by name.
func Registered() []Registration { return registry.All() }

// New builds an agent from a spec string for game g, seeded with env.Seed
// and given env's services (see Env).
func New(g games.Game, specString string, env Env) (Agent, error) {
	s, err := spec.Parse(specString)
	if err != nil {
		return nil, err
	}
	r, ok := registry.Lookup(s.Name)
	if !ok {
		return nil, registry.Unknown(s.Name, "canopy agents")
	}
	if len(r.Games) > 0 {
		name := g.Type().Name
		okGame := false
		for _, n := range r.Games {
			okGame = okGame || n == name
		}
		if !okGame {
			return nil, fmt.Errorf("agent %q only plays %s, not %s", r.Name, strings.Join(r.Games, ", "), name)
		}
	}
	a, err := r.New(g, s, env)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(r.Options))
	for i, o := range r.Options {
		keys[i] = o.Key
	}
	if err := s.Err(keys...); err != nil {
		if c, ok := a.(io.Closer); ok {
			c.Close() // release what the rejected agent holds
		}
		return nil, err
	}
	return a, nil
}
