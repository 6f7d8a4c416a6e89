package rl

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
)

// Reseeder is implemented by opponents that hold random state of their own
// (agents with their own seed). Under Options.FreshGames, PPO reseeds its
// environment's Opponents (Fixed and League pass it on to their
// opponents) before every update with a seed derived from the update, so
// that a resumed run plays the same games as an uninterrupted one.
type Reseeder interface {
	Reseed(seed uint64) error
}

// SpecOpponent plays the agent of an agent spec (random, onestep, a
// `policy` network, a search agent) in g. Reseed makes the agent anew
// with the new seed (closing the old one when it is an io.Closer), so
// its play depends on the seed alone. Calls are serialised by a mutex.
// Close closes the agent.
type SpecOpponent struct {
	mu   sync.Mutex
	g    games.Game
	spec string
	env  agent.Env
	a    agent.Agent
}

// NewSpecOpponent returns the opponent of spec in g, built with env's
// services and seeded with env.Seed (Reseed rebuilds it with another
// seed and the same services).
func NewSpecOpponent(g games.Game, spec string, env agent.Env) (*SpecOpponent, error) {
	o := &SpecOpponent{g: g, spec: spec, env: env}
	if err := o.Reseed(env.Seed); err != nil {
		return nil, err
	}
	return o, nil
}

// Act implements Opponent.
func (o *SpecOpponent) Act(s games.State, player int, _ games.Mask, _ *rand.Rand) (games.Action, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.a.Act(context.Background(), s, player)
}

// Reseed implements Reseeder.
func (o *SpecOpponent) Reseed(seed uint64) error {
	a, err := agent.New(o.g, o.spec, o.env.WithSeed(seed))
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	old := o.a
	o.a = a
	if c, ok := old.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Close closes the agent when it is an io.Closer.
func (o *SpecOpponent) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if c, ok := o.a.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// reseedSalt separates the streams of the opponents of one update.
func reseedSalt(seed uint64, i int) uint64 { return UpdateSeed(seed, -2-i) }

// Reseed implements Reseeder: it reseeds the opponent when it is one.
func (f Fixed) Reseed(seed uint64) error {
	if r, ok := f.Opponent.(Reseeder); ok {
		return r.Reseed(reseedSalt(seed, 0))
	}
	return nil
}

// Reseed implements Reseeder: it reseeds every fixed opponent of both
// phases that is one (each kind once, with a seed of its own).
func (l *League) Reseed(seed uint64) error {
	seen := map[string]bool{} // a name is one opponent kind
	for _, m := range []Mixture{l.opt.Main, l.opt.Warmup} {
		for _, f := range m.Fixed {
			r, ok := f.Opponent.(Reseeder)
			if !ok || seen[f.Name] {
				continue
			}
			seen[f.Name] = true
			if err := r.Reseed(reseedSalt(seed, l.fixedK[f.Name])); err != nil {
				return fmt.Errorf("rl: reseeding opponent %q: %w", f.Name, err)
			}
		}
	}
	return nil
}
