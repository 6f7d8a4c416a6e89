package strands

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	agent.Register(agent.Registration{
		Name:    "strands-greedy",
		Summary: "Strands baseline of the MegaZero study: the stone that maximises own largest group minus the opponent's, ties at random",
		Games:   []string{"strands"},
		New: func(g games.Game, _ *spec.Spec, env agent.Env) (agent.Agent, error) {
			seed := env.Seed
			return NewGreedy(g, seed)
		},
	})
}

// Greedy plays the atomic action (one stone) that maximises the mover's
// largest group minus the opponent's largest group after the stone is
// placed; equal scores are broken uniformly at random with the agent's
// seed. Not safe for concurrent use.
type Greedy struct {
	rng  *rand.Rand
	mask games.Mask
}

// NewGreedy returns a greedy agent for a Strands game.
func NewGreedy(g games.Game, seed uint64) (*Greedy, error) {
	if _, ok := g.(*Game); !ok {
		return nil, fmt.Errorf("strands-greedy plays strands, not %s", g.Spec())
	}
	return &Greedy{rng: games.NewRand(seed), mask: games.NewMask(g.NumActions())}, nil
}

// Act implements agent.Agent.
func (a *Greedy) Act(_ context.Context, gs games.State, player int) (games.Action, error) {
	s, ok := gs.(*State)
	if !ok {
		return games.NoAction, fmt.Errorf("strands-greedy: not a strands state")
	}
	if s.IsTerminal() || s.CurrentPlayer() != player {
		return games.NoAction, fmt.Errorf("strands-greedy: player %d is not to move", player)
	}
	b := s.g.b
	opp := b.largest(s.stones[1-player])
	s.Legal(a.mask)
	best, bestScore, ties := games.NoAction, 0, 0
	for c := range a.mask.All() {
		own := s.stones[player]
		own[c>>6] |= 1 << (c & 63)
		score := b.largest(own) - opp
		switch {
		case best == games.NoAction || score > bestScore:
			best, bestScore, ties = c, score, 1
		case score == bestScore:
			ties++
			if a.rng.IntN(ties) == 0 {
				best = c
			}
		}
	}
	if best == games.NoAction {
		return best, fmt.Errorf("strands-greedy: no legal action")
	}
	return best, nil
}
