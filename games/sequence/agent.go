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
		Options: []agent.Option{
			{Key: "score", Default: "through", Help: "through (the runs through the placed chip, summed over the four directions) or board (the change in the points of all the mover's maximal runs; a run of five or more counts as a 5-run)"},
			{Key: "corners", Default: "own", Help: "own (the wild corners count as the mover's chips) or none"},
			{Key: "ties", Default: "random", Help: "random (uniform among the best moves) or first (the first best action in action order)"},
		},
		New: func(g games.Game, sp *spec.Spec, env agent.Env) (agent.Agent, error) {
			seed := env.Seed
			r := GreedyReading{
				Board:     sp.Choice("score", "through", "through", "board") == "board",
				NoCorners: sp.Choice("corners", "own", "own", "none") == "none",
				FirstTie:  sp.Choice("ties", "random", "random", "first") == "first",
			}
			return NewGreedyReading(seed, r), nil
		},
	})
}

// GreedyReading selects a reading of the study's eq. 2, score = sum over
// k = 2..5 of w_k * #k-runs with w = (1, 5, 10, 100), which the study
// states without saying which runs it counts, whether the wild corners
// count, or how ties are broken. The zero value is Canopy's default
// reading (GreedyScore).
type GreedyReading struct {
	// Board scores a move by the change in the points of all the mover's
	// maximal runs (a placement joining runs of a and c chips in one
	// direction scores P(a+c+1) - P(a) - P(c) there); the default scores
	// the runs through the placed chip, P(a+c+1).
	Board bool
	// NoCorners stops the wild corners counting as the mover's chips.
	NoCorners bool
	// FirstTie plays the first best action in action order instead of a
	// uniformly random one.
	FirstTie bool
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
// GreedyReading selects other readings of the study's definition.
// Greedy is not safe for concurrent use.
type Greedy struct {
	rng     *rand.Rand
	reading GreedyReading
	mask    games.Mask
	best    []games.Action
}

// NewGreedyReading returns a greedy agent that scores moves under reading
// r, seeded with seed.
func NewGreedyReading(seed uint64, r GreedyReading) *Greedy {
	return &Greedy{rng: games.NewRand(seed), reading: r, mask: games.NewMask(NumActions), best: make([]games.Action, 0, NumActions)}
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
		sc := s.GreedyScoreReading(m, a.reading)
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
	if a.reading.FirstTie {
		return a.best[0], nil
	}
	return a.best[a.rng.IntN(len(a.best))], nil
}

// GreedyScore is the greedy baseline's score of action m for the player to
// move under the default reading (m need not be legal; see Greedy for the
// definition).
func (s *State) GreedyScore(m games.Action) float64 {
	return s.GreedyScoreReading(m, GreedyReading{})
}

// GreedyScoreReading is GreedyScore under reading r (FirstTie is not used).
func (s *State) GreedyScoreReading(m games.Action, r GreedyReading) float64 {
	if m == PassAction || s.phase != phPlay {
		return 0
	}
	wild := corners
	if r.NoCorners {
		wild = bitboard{}
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
				return runScore(s.chips[q].or(wild), sq, r.Board)
			}
		}
		return 0
	case kindTwoEyed:
		return runScore(s.chips[p].or(wild), sq, r.Board) - 0.5
	}
	return runScore(s.chips[p].or(wild), sq, r.Board)
}

var runPoints = [6]float64{0, 0, 1, 5, 10, 100}

// runScore sums, over the four directions, the points of the maximal run of
// b's squares through sq with sq counted in b. With board set it sums
// instead the change in the points of b's maximal runs when sq joins b:
// the runs of a and c squares on its two sides merge into one of a+c+1.
func runScore(b bitboard, sq int, board bool) float64 {
	r0, c0 := sq/10, sq%10
	total := 0.0
	for _, d := range [4][2]int{{0, 1}, {1, 0}, {1, 1}, {1, -1}} {
		var side [2]int
		for i, sgn := range [2]int{1, -1} {
			r, c := r0+sgn*d[0], c0+sgn*d[1]
			for r >= 0 && r < 10 && c >= 0 && c < 10 && b.has(r*10+c) {
				side[i]++
				r, c = r+sgn*d[0], c+sgn*d[1]
			}
		}
		total += runPoints[min(side[0]+side[1]+1, 5)]
		if board {
			total -= runPoints[min(side[0], 5)] + runPoints[min(side[1], 5)]
		}
	}
	return total
}
