package arena

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
)

// Record is the full record of one played game.
type Record struct {
	Spec    string         // game spec
	Agents  []string       // agent spec per seat (player index)
	Actions []games.Action // every action applied, chance outcomes included
	// Text of every action, formatted in the state where it was played.
	// At simultaneous nodes the joint action is recorded as one entry per
	// player, in player order.
	Text []string
	// Branching is the number of legal actions of the player to move at
	// each decision (chance nodes excluded; simultaneous nodes count each
	// player's choice).
	Branching []int
	Returns   []float64
	Scores    []float64 // final scores for games implementing games.Scorer, else nil
	Final     games.State
	// Moves[p] is the number of decisions seat p made (its Act calls) and
	// Think[p] their total wall-clock time: the time per move the studies
	// report. Under parallel games the wall time includes waiting for the
	// CPU, so compare times from runs with one game at a time.
	Moves []int
	Think []time.Duration
}

// MoveTime returns seat p's mean wall-clock time per decision (0 when it
// made none).
func (r *Record) MoveTime(p int) time.Duration {
	if p >= len(r.Moves) || r.Moves[p] == 0 {
		return 0
	}
	return r.Think[p] / time.Duration(r.Moves[p])
}

// Decisions is the number of player decisions in the game.
func (r *Record) Decisions() int { return len(r.Branching) }

// PlayGame plays one game from the initial state of g. agents[p] plays seat
// p. Chance nodes are sampled with chanceSeed. It returns an error when an
// agent fails or returns an illegal action (naming the agent and the move).
func PlayGame(ctx context.Context, g games.Game, agents []agent.Agent, names []string, chanceSeed uint64) (*Record, error) {
	return PlayFrom(ctx, g.NewInitialState(), agents, names, chanceSeed, nil)
}

// PlayFrom plays from state s (modified in place) to the end. onMove, when
// non-nil, is called after every applied action (for live display).
func PlayFrom(ctx context.Context, s games.State, agents []agent.Agent, names []string, chanceSeed uint64, onMove func(s games.State, player int, text string)) (*Record, error) {
	g := s.Game()
	if len(agents) != g.NumPlayers() {
		return nil, fmt.Errorf("%s needs %d agents, got %d", g.Spec(), g.NumPlayers(), len(agents))
	}
	rng := games.NewRand(chanceSeed)
	rec := &Record{Spec: g.Spec(), Agents: names, Moves: make([]int, g.NumPlayers()), Think: make([]time.Duration, g.NumPlayers())}
	act := func(p int) (games.Action, error) {
		start := time.Now()
		a, err := agents[p].Act(ctx, s, p)
		rec.Think[p] += time.Since(start)
		rec.Moves[p]++
		return a, err
	}
	mask := games.NewMask(g.NumActions())
	joint := make([]games.Action, g.NumPlayers())
	for steps := 0; !s.IsTerminal(); steps++ {
		if err := ctx.Err(); err != nil {
			return rec, err
		}
		if steps > g.MaxGameLength() {
			return rec, fmt.Errorf("game exceeded its maximum length %d (a bug in the game)", g.MaxGameLength())
		}
		switch p := s.CurrentPlayer(); p {
		case games.ChancePlayer:
			a := s.(games.ChanceState).SampleChance(rng)
			rec.Actions = append(rec.Actions, a)
			rec.Text = append(rec.Text, s.ActionString(a))
			s.Apply(a)
			if onMove != nil {
				onMove(s, p, rec.Text[len(rec.Text)-1])
			}
		case games.SimultaneousPlayer:
			ss := s.(games.SimultaneousState)
			for i := range joint {
				ss.LegalFor(i, mask)
				a, err := act(i)
				if err != nil {
					return rec, fmt.Errorf("agent %s (player %d): %w", names[i], i, err)
				}
				if !mask.Has(a) {
					return rec, fmt.Errorf("agent %s (player %d) chose illegal action %s", names[i], i, s.ActionString(a))
				}
				joint[i] = a
				rec.Branching = append(rec.Branching, mask.Count())
			}
			for i, a := range joint {
				rec.Actions = append(rec.Actions, a)
				rec.Text = append(rec.Text, fmt.Sprintf("p%d:%s", i, s.ActionString(a)))
			}
			ss.ApplyJoint(joint)
			if onMove != nil {
				onMove(s, p, "")
			}
		default:
			s.Legal(mask)
			a, err := act(p)
			if err != nil {
				return rec, fmt.Errorf("agent %s (player %d): %w", names[p], p, err)
			}
			if !mask.Has(a) {
				return rec, fmt.Errorf("agent %s (player %d) chose illegal action %s", names[p], p, s.ActionString(a))
			}
			rec.Branching = append(rec.Branching, mask.Count())
			rec.Actions = append(rec.Actions, a)
			rec.Text = append(rec.Text, s.ActionString(a))
			s.Apply(a)
			if onMove != nil {
				onMove(s, p, rec.Text[len(rec.Text)-1])
			}
		}
	}
	rec.Returns = make([]float64, g.NumPlayers())
	s.Returns(rec.Returns)
	if sc, ok := s.(games.Scorer); ok {
		rec.Scores = make([]float64, g.NumPlayers())
		sc.Scores(rec.Scores)
	}
	rec.Final = s
	return rec, nil
}

// NewAgents builds one agent per seat from specs with env's services,
// seeding seat p with a seed derived from (env.Seed, p).
func NewAgents(g games.Game, specs []string, env agent.Env) ([]agent.Agent, error) {
	out := make([]agent.Agent, len(specs))
	for p, sp := range specs {
		a, err := agent.New(g, sp, env.WithSeed(DeriveSeed(env.Seed, uint64(p))))
		if err != nil {
			CloseAgents(out[:p])
			return nil, fmt.Errorf("seat %d: %w", p, err)
		}
		out[p] = a
	}
	return out, nil
}

// CloseAgents closes every agent that holds resources (implements
// io.Closer, as network agents do to release their shared engine) and
// returns the first error.
func CloseAgents(ags []agent.Agent) error {
	var first error
	for _, a := range ags {
		if c, ok := a.(io.Closer); ok {
			if err := c.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// DeriveSeed mixes a base seed with an index; it is games.DeriveSeed.
func DeriveSeed(seed, i uint64) uint64 { return games.DeriveSeed(seed, i) }
