package agent

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	Register(Registration{
		Name:    "random",
		Summary: "uniformly random legal action",
		New: func(g games.Game, s *spec.Spec, env Env) (Agent, error) {
			seed := env.Seed
			return NewRandom(g, seed), nil
		},
	})
	Register(Registration{
		Name:    "onestep",
		Summary: "win now if possible, else block an immediate opponent win, else random (two-player games)",
		New: func(g games.Game, s *spec.Spec, env Env) (Agent, error) {
			seed := env.Seed
			return NewOneStep(g, seed), nil
		},
	})
}

// Random plays a uniformly random legal action.
type Random struct {
	rng  *rand.Rand
	mask games.Mask
}

// NewRandom returns a random agent for g.
func NewRandom(g games.Game, seed uint64) *Random {
	return &Random{rng: games.NewRand(seed), mask: games.NewMask(g.NumActions())}
}

// Act implements Agent.
func (r *Random) Act(_ context.Context, s games.State, player int) (games.Action, error) {
	legalFor(s, player, r.mask)
	a := r.mask.Random(r.rng)
	if a == games.NoAction {
		return a, fmt.Errorf("no legal action for player %d", player)
	}
	return a, nil
}

func legalFor(s games.State, player int, m games.Mask) {
	if ss, ok := s.(games.SimultaneousState); ok && s.CurrentPlayer() == games.SimultaneousPlayer {
		ss.LegalFor(player, m)
		return
	}
	s.Legal(m)
}

// Blocker is implemented by states of games where the cell an opponent
// needs for an immediate win is not simply the opponent's next action (in
// Connect4d the mover's k-th stone goes on board k, so the opponent's
// winning cell on board k can only be taken by the mover's k-th stone).
// OpponentWinsWith reports whether the opponent of the player to move
// would win by playing action a itself, right now.
type Blocker interface {
	OpponentWinsWith(a games.Action) bool
}

// OneStep wins immediately when it can, otherwise blocks a move with which
// the opponent would win immediately, otherwise plays at random. For
// multi-action games "immediately" means within the next atomic action;
// games whose blocking cell is not the opponent's next action implement
// Blocker.
type OneStep struct {
	Random
	scratch games.State
	ret     []float64
	opp     games.Mask
}

// NewOneStep returns a onestep agent for g.
func NewOneStep(g games.Game, seed uint64) *OneStep {
	return &OneStep{
		Random:  *NewRandom(g, seed),
		scratch: g.NewInitialState(),
		ret:     make([]float64, g.NumPlayers()),
		opp:     games.NewMask(g.NumActions()),
	}
}

// wins reports whether player has won in s.
func (o *OneStep) wins(s games.State, player int) bool {
	if !s.IsTerminal() {
		return false
	}
	s.Returns(o.ret)
	best := true
	for p, r := range o.ret {
		if p != player && r >= o.ret[player] {
			best = false
		}
	}
	return best
}

// Act implements Agent.
func (o *OneStep) Act(ctx context.Context, s games.State, player int) (games.Action, error) {
	if s.CurrentPlayer() != player {
		return o.Random.Act(ctx, s, player)
	}
	s.Legal(o.mask)
	// 1. A winning move.
	for a := range o.mask.All() {
		s.CloneInto(o.scratch)
		o.scratch.Apply(a)
		if o.wins(o.scratch, player) {
			return a, nil
		}
	}
	// 2. A move that takes away the opponent's immediate win. Games that say
	// how (Blocker) are asked directly.
	if bl, ok := s.(Blocker); ok {
		for b := range o.mask.All() {
			if bl.OpponentWinsWith(b) {
				return b, nil
			}
		}
		return o.Random.Act(ctx, s, player)
	}
	// Otherwise simulate: if the opponent
	// (to move after us, or on a following atomic step) could win by playing
	// action b, playing b ourselves occupies that spot in games like
	// Connect Four, Hex and Connect4d.
	s.CloneInto(o.scratch)
	if ms, ok := o.scratch.(games.MultiActionState); ok && !ms.EndsTurn() {
		return o.Random.Act(ctx, s, player) // mid-turn: no opponent reply yet
	}
	for b := range o.mask.All() {
		if o.opponentWinsWith(s, b, player) {
			return b, nil
		}
	}
	return o.Random.Act(ctx, s, player)
}

// opponentWinsWith reports whether, after some move of ours, the opponent
// could win at once by playing b; it checks b against our first legal
// alternative so that b is the square the opponent would use.
func (o *OneStep) opponentWinsWith(s games.State, b games.Action, player int) bool {
	for a := range o.mask.All() {
		if a == b {
			continue
		}
		s.CloneInto(o.scratch)
		o.scratch.Apply(a)
		if o.scratch.IsTerminal() {
			continue
		}
		opp := o.scratch.CurrentPlayer()
		if opp < 0 || opp == player {
			continue
		}
		o.scratch.Legal(o.opp)
		if !o.opp.Has(b) {
			continue
		}
		o.scratch.Apply(b)
		return o.wins(o.scratch, opp)
	}
	return false
}
