package solver

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	agent.Register(agent.Registration{
		Name:    "solver",
		Summary: "perfect Connect Four play (exact solver, built-in opening book for the first 8 plies); ties among best moves broken at random",
		Options: agent.OptionsOf(new(agentOptions).table()),
		Games:   []string{"connect4"},
		New: func(g games.Game, sp *spec.Spec, env agent.Env) (agent.Agent, error) {
			seed := env.Seed
			var o agentOptions
			t := o.table()
			if err := t.Parse(sp); err != nil {
				return nil, err
			}
			a := NewAgent(seed)
			b, err := LoadBook(o.book)
			if err != nil {
				return nil, fmt.Errorf("solver agent: book=%s: %w", o.book, err)
			}
			a.Book = b
			return a, nil
		},
	})
}

type agentOptions struct{ book string }

func (o *agentOptions) table() spec.Table {
	return spec.Table{
		BookOption(&o.book, "moves with fewer than 8 stones on the board are chosen at once by outcome (win/draw/loss) instead of exact score"),
	}
}

// BookOption declares the opening-book option bound to p, the solver
// agent's book= and canopy solve's --book (LoadBook reads it): one
// declaration, so the two cannot drift. note says what the book does
// for its user.
func BookOption(p *string, note string) spec.Option {
	return spec.File("book", p, "default", "opening book: default (built in), none (solve every position: minutes per move in the first plies), or a file written by genbook; "+note)
}

// Agent plays an optimal Connect Four move: the best solver score, ties
// broken uniformly with the agent's seeded generator. Its 64 MiB table is
// allocated on first use and kept between moves. Not safe for concurrent
// use. Cancelling ctx is honoured between the seven column searches.
//
// With a Book, moves from positions with fewer than BookPly stones are
// chosen from the book's outcomes: the agent then keeps every win and
// every draw (never a worse outcome than the position's) but does not
// prefer quicker wins or slower losses there, and Analyze reports scores
// +1, 0, -1 for those moves.
type Agent struct {
	Book   *Book // optional opening book; nil solves every position
	solver *Solver
	rng    *rand.Rand
}

// NewAgent returns a solver agent seeded with seed.
func NewAgent(seed uint64) *Agent { return &Agent{rng: games.NewRand(seed)} }

var _ agent.Analyzer = (*Agent)(nil)

// scores solves every column of s for player.
func (a *Agent) scores(ctx context.Context, s games.State, player int) ([connect4.Width]int, error) {
	var out [connect4.Width]int
	st, ok := s.(*connect4.State)
	if !ok {
		return out, fmt.Errorf("solver agent: state of %s, want connect4", s.Game().Spec())
	}
	if st.IsTerminal() {
		return out, fmt.Errorf("solver agent: the game is over")
	}
	if player != st.CurrentPlayer() {
		return out, fmt.Errorf("solver agent: asked to move for player %d, but player %d is to move", player, st.CurrentPlayer())
	}
	if a.solver == nil {
		a.solver = New()
	}
	p := st.Position()
	for col := range connect4.Width {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if v, ok := a.bookScore(p, col); ok {
			out[col] = v
			continue
		}
		out[col] = a.solver.ScoreMove(p, col)
	}
	return out, nil
}

// bookScore returns the outcome of playing col in p from the book, when
// the book holds it: the opponent's outcome after the move, negated. The
// signs agree with exact scores, so a mix of both keeps the best moves.
func (a *Agent) bookScore(p connect4.Position, col int) (int, bool) {
	if a.Book == nil || p.Moves() >= BookPly || !p.CanPlay(col) || p.IsWinningMove(col) {
		return 0, false
	}
	p.Play(col)
	v, ok := a.Book.Outcome(p)
	return -v, ok
}

// Act implements agent.Agent.
func (a *Agent) Act(ctx context.Context, s games.State, player int) (games.Action, error) {
	sc, err := a.scores(ctx, s, player)
	if err != nil {
		return games.NoAction, err
	}
	best, n := Illegal, 0
	var ties [connect4.Width]games.Action
	for col, v := range sc {
		switch {
		case v == Illegal:
		case v > best:
			best, n = v, 0
			ties[n] = games.Action(col)
			n++
		case v == best:
			ties[n] = games.Action(col)
			n++
		}
	}
	return ties[a.rng.IntN(n)], nil
}

// Analyze implements agent.Analyzer: one row per legal column with Score
// the solver score and Q its sign (+1 win, 0 draw, -1 loss).
func (a *Agent) Analyze(ctx context.Context, s games.State, player int) ([]agent.Analysis, error) {
	sc, err := a.scores(ctx, s, player)
	if err != nil {
		return nil, err
	}
	var out []agent.Analysis
	for col, v := range sc {
		if v == Illegal {
			continue
		}
		q := 0.0
		if v > 0 {
			q = 1
		} else if v < 0 {
			q = -1
		}
		out = append(out, agent.Analysis{Action: games.Action(col), Score: float64(v), Q: q})
	}
	return out, nil
}
