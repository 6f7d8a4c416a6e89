package sushigo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	agent.Register(agent.Registration{
		Name:    "sushigo-greedy",
		Summary: "Sushi Go!: the pick with the best immediate score gain (maki and pudding as if scored now), ties at random",
		Games:   []string{"sushigo", "sushigo-seq"},
		New: func(g games.Game, _ *spec.Spec, env agent.Env) (agent.Agent, error) {
			seed := env.Seed
			return newValueAgent(g, seed, false)
		},
	})
	agent.Register(agent.Registration{
		Name:    "sushigo-heuristic",
		Summary: "Sushi Go!: score potential with partial set credit, wasabi/chopsticks synergies, maki and pudding projections",
		Games:   []string{"sushigo", "sushigo-seq"},
		New: func(g games.Game, _ *spec.Spec, env agent.Env) (agent.Agent, error) {
			seed := env.Seed
			return newValueAgent(g, seed, true)
		},
	})
}

// valueAgent plays the legal action that maximises value(after) -
// value(before) for the acting player; ties are broken uniformly at random.
type valueAgent struct {
	heuristic bool // heuristicValue, else greedyValue
	rng       *rand.Rand
	mask      games.Mask
}

func newValueAgent(g games.Game, seed uint64, heuristic bool) (agent.Agent, error) {
	if _, ok := g.(*Game); !ok {
		return nil, fmt.Errorf("sushigo agents play sushigo games only, not %s", g.Spec())
	}
	return &valueAgent{heuristic: heuristic, rng: games.NewRand(seed), mask: games.NewMask(NumActions)}, nil
}

// Act implements agent.Agent; at a simultaneous node it answers for player.
func (v *valueAgent) Act(ctx context.Context, s games.State, player int) (games.Action, error) {
	if err := ctx.Err(); err != nil {
		return games.NoAction, err
	}
	st, ok := s.(*State)
	if !ok {
		return games.NoAction, errors.New("sushigo agent: not a sushigo state")
	}
	if st.c.over() || st.c.dealing() {
		return games.NoAction, fmt.Errorf("sushigo agent: no choice to make (%s)", map[bool]string{true: "game over", false: "chance node"}[st.c.over()])
	}
	if st.g.seq && player != int(st.c.next) {
		return games.NoAction, fmt.Errorf("sushigo agent: player %d asked to move but player %d is to move", player, st.c.next)
	}
	st.c.legalFor(player, v.mask)
	best, bestV, ties := games.NoAction, 0.0, 0
	for a := range v.mask.All() {
		x := gain(&st.c, player, a, v.heuristic)
		switch {
		case best == games.NoAction || x > bestV+1e-9:
			best, bestV, ties = a, x, 1
		case x > bestV-1e-9:
			ties++
			if v.rng.IntN(ties) == 0 {
				best = a
			}
		}
	}
	if best == games.NoAction {
		return best, fmt.Errorf("sushigo agent: player %d has no legal action", player)
	}
	return best, nil
}

// gain is value after p picks a minus value before (other players' picks
// of the trick are unknown and left out).
func gain(c *core, p int, a games.Action, heuristic bool) float64 {
	var after core
	after = *c
	after.pick(p, a)
	if heuristic {
		return heuristicValue(&after, p) - heuristicValue(c, p)
	}
	return greedyValue(&after, p) - greedyValue(c, p)
}

// greedyValue is p's round score if the round ended now, with the maki
// standings and (scaled to this point) pudding standings as if scored now.
func greedyValue(c *core, p int) float64 {
	np := int(c.np)
	v := float64(tableScore(&c.table[p], &c.onWasabi[p]))
	var icons [MaxPlayers]int
	var pud [MaxPlayers]uint8
	for q := range np {
		icons[q] = makiCount(&c.table[q])
		pud[q] = c.pudding[q] + c.table[q][Pudding]
	}
	var mk, pp [MaxPlayers]int
	makiScores(icons[:np], &mk)
	puddingScores(pud[:np], &pp)
	return v + float64(mk[p]) + float64(pp[p])
}

// heuristicValue estimates the points p's position is worth at the end of
// the round (and of the game for puddings), in the spirit of the study's
// hand-written heuristic:
//   - complete sets at face value; unfinished sets get partial credit that
//     shrinks as fewer picks remain in the round (1 tempura = half a pair,
//     1 or 2 sashimi = a third or two thirds of a set);
//   - dumplings at face value plus part of the next dumpling's increment;
//   - nigiri exactly (wasabi included); an open wasabi is worth the bonus
//     of tripling an average nigiri if picks remain; unused chopsticks are
//     worth an extra pick if picks remain;
//   - maki: the standings as if scored now, blended with a per-icon value
//     early in the round;
//   - puddings: the end-of-game standings as if scored now, blended with a
//     per-pudding value in earlier rounds.
func heuristicValue(c *core, p int) float64 {
	h := c.handSize()
	t := &c.table[p]
	// Picks p still makes this round after the cards now on its table.
	left := float64(h - t.Total())
	if left < 0 {
		left = 0
	}
	ramp := func(need float64) float64 { return min(1, left/(need*2)) }
	v := float64(tableScore(t, &c.onWasabi[p]))
	if t[Tempura]%2 == 1 {
		v += 2.5 * ramp(1)
	}
	switch t[Sashimi] % 3 {
	case 1:
		v += 10.0 / 3 * ramp(2)
	case 2:
		v += 20.0 / 3 * ramp(1)
	}
	if d := int(t[Dumpling]); d < 5 {
		v += 0.5 * float64(dumplingPoints[d+1]-dumplingPoints[d]) * ramp(1)
	}
	v += 4 * float64(c.openWasabi(p)) * ramp(1.5)
	v += 2.5 * float64(t[Chopsticks]) * ramp(1.5)

	np := int(c.np)
	var icons [MaxPlayers]int
	var pud [MaxPlayers]uint8
	for q := range np {
		icons[q] = makiCount(&c.table[q])
		pud[q] = c.pudding[q] + c.table[q][Pudding]
	}
	var mk, pp [MaxPlayers]int
	makiScores(icons[:np], &mk)
	puddingScores(pud[:np], &pp)
	early := left / float64(h) // 1 at the start of a round, 0 at its end
	v += (1-early)*float64(mk[p]) + early*1.0*float64(icons[p])
	late := float64(c.round+1) / numRounds // weight of the standings vs per-pudding value
	v += late*float64(pp[p]) + (1-late)*2.5*float64(pud[p])
	return v
}
