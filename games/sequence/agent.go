package sequence

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
		Name:    "sequence-greedy",
		Summary: "the study's Greedy baseline: maximise 1*#2-runs + 5*#3-runs + 10*#4-runs + 100*#5-runs",
		Games:   []string{"sequence"},
		New: func(g games.Game, _ *spec.Spec, seed uint64) (agent.Agent, error) {
			return NewGreedy(seed), nil
		},
	})
}

// Greedy is the study's greedy baseline. It scores every legal move by the
// own-chip runs it produces and plays a best one, breaking ties uniformly
// at random. A placement on square q scores, over the four directions, the
// length L of the contiguous run of own chips through q (corners count as
// own): 1 for L=2, 5 for L=3, 10 for L=4, 100 for L>=5. Extensions for the
// full game: a two-eyed jack placement scores the same minus 0.5 (so a
// natural card is preferred at equal score); a one-eyed jack removal
// scores the runs the removed chip gave its owner; a dead card is always
// exchanged first (the exchange does not use up the turn); pass scores 0.
// Greedy is not safe for concurrent use.
type Greedy struct {
	rng  *rand.Rand
	mask games.Mask
	best []games.Action
}

// NewGreedy returns a greedy agent seeded with seed.
func NewGreedy(seed uint64) *Greedy {
	return &Greedy{rng: games.NewRand(seed), mask: games.NewMask(NumActions), best: make([]games.Action, 0, NumActions)}
}

// Act implements agent.Agent.
func (a *Greedy) Act(_ context.Context, st games.State, player int) (games.Action, error) {
	s, ok := st.(*State)
	if !ok {
		return games.NoAction, fmt.Errorf("sequence-greedy: state is a %T, not a sequence state", st)
	}
	if s.phase != phPlay || int(s.player) != player {
		return games.NoAction, fmt.Errorf("sequence-greedy: player %d is not to move", player)
	}
	s.Legal(a.mask)
	bestScore := -1.0
	a.best = a.best[:0]
	for m := range a.mask.All() {
		sc := s.GreedyScore(m)
		switch {
		case sc > bestScore:
			bestScore = sc
			a.best = append(a.best[:0], m)
		case sc == bestScore:
			a.best = append(a.best, m)
		}
	}
	if len(a.best) == 0 {
		return games.NoAction, fmt.Errorf("sequence-greedy: no legal action")
	}
	return a.best[a.rng.IntN(len(a.best))], nil
}

// GreedyScore is the greedy baseline's score of action m for the player to
// move (m need not be legal; see Greedy for the definition).
func (s *State) GreedyScore(m games.Action) float64 {
	if m == PassAction || s.phase != phPlay {
		return 0
	}
	p := int(s.player)
	slot, sq := int(m)/numSquares, int(m)%numSquares
	if slot >= int(s.hn[p]) {
		return 0
	}
	if sq == 0 {
		return 1e9 // exchange a dead card first
	}
	k := s.hand[p][slot]
	switch kindClass(k) {
	case kindOneEyed:
		for q := range s.g.players {
			if s.chips[q].has(sq) {
				return runScore(s.chips[q].or(corners), sq)
			}
		}
		return 0
	case kindTwoEyed:
		b := s.chips[p].or(corners)
		b.set(sq)
		return runScore(b, sq) - 0.5
	}
	b := s.chips[p].or(corners)
	b.set(sq)
	return runScore(b, sq)
}

var runPoints = [6]float64{0, 0, 1, 5, 10, 100}

// runScore sums, over the four directions, the points of the maximal run of
// b's squares through sq.
func runScore(b bitboard, sq int) float64 {
	r0, c0 := sq/10, sq%10
	total := 0.0
	for _, d := range [4][2]int{{0, 1}, {1, 0}, {1, 1}, {1, -1}} {
		l := 1
		for _, sgn := range [2]int{1, -1} {
			r, c := r0+sgn*d[0], c0+sgn*d[1]
			for r >= 0 && r < 10 && c >= 0 && c < 10 && b.has(r*10+c) {
				l++
				r, c = r+sgn*d[0], c+sgn*d[1]
			}
		}
		total += runPoints[min(l, 5)]
	}
	return total
}
