package multi

import (
	"context"
	"errors"
	"time"

	"github.com/canopy-go/canopy/games"
)

// Planner chooses the rest of the current player's turn: the atomic
// actions from s (which may be in the middle of a turn) to the end of the
// turn or of the game. This is the study's TURN-SELECTION (Algorithm 1).
type Planner interface {
	// PlanTurn appends the turn's remaining actions to dst and returns
	// it. s is not modified. It honours ctx cancellation (searching
	// stops; the turn is completed from the statistics gathered so far)
	// and its budget per turn.
	PlanTurn(ctx context.Context, s games.State, dst []games.Action) ([]games.Action, error)
}

// Budget is a search budget per turn: Sims simulations (each one leaf
// evaluation at most: one call of the evaluator, or none when the leaf is
// terminal) and/or Time of wall clock. A zero field is no limit; at least
// one must be set.
type Budget struct {
	Sims int
	Time time.Duration
}

var errNoBudget = errors.New("multi: no budget (set sims=N or time=D)")

// turnOf returns the turn counter of s: MultiActionState.TurnNumber, or
// the move number for games with single-action turns.
func turnOf(s games.State) int {
	if m, ok := s.(games.MultiActionState); ok {
		return m.TurnNumber()
	}
	return s.MoveNumber()
}

// inTurn reports whether s is still in turn t (not terminal).
func inTurn(s games.State, t int) bool { return !s.IsTerminal() && turnOf(s) == t }

// actionsLeft returns the number of atomic actions left in the current
// turn of s, the longest over the legal next actions when that depends on
// the choice (Strands: the first stone fixes the turn's length). The rest
// of a turn is completed with the first legal action each time; scratch
// and mask are work space (scratch from the same game).
func actionsLeft(s games.State, scratch games.State, mask games.Mask) int {
	if s.IsTerminal() {
		return 0
	}
	m, ok := s.(games.MultiActionState)
	if !ok {
		return 1
	}
	if m.EndsTurn() {
		return 1
	}
	t := m.TurnNumber()
	s.Legal(mask)
	first := mask.AppendTo(make([]games.Action, 0, 64))
	best := 1
	for _, a := range first {
		s.CloneInto(scratch)
		scratch.Apply(a)
		n := 1
		for inTurn(scratch, t) {
			scratch.Legal(mask)
			if mask.Empty() {
				break
			}
			scratch.Apply(mask.First())
			n++
		}
		best = max(best, n)
		if m.StepInTurn() > 0 {
			break // mid-turn the length no longer depends on the choice
		}
	}
	return best
}

// stopper tells a search loop when its phase is over: after sims
// simulations (-1 = no limit) or at deadline (zero = none), or when ctx is
// done. It reads the clock and ctx every 16 simulations, as search does,
// and before the first one.
type stopper struct {
	ctx      context.Context
	sims     int
	deadline time.Time
}

func (st stopper) done(i int) bool {
	if st.sims >= 0 && i >= st.sims {
		return true
	}
	if i&15 == 0 {
		if st.ctx.Err() != nil || (!st.deadline.IsZero() && time.Now().After(st.deadline)) {
			return true
		}
	}
	return false
}

// split returns the stopper of one phase when left phases (left >= 1)
// share what remains of budget b: simsLeft/left simulations (so the last
// phase gets the rest) and the time up to now + (deadline-now)/left. A
// phase may get 0 simulations; it then acts on the statistics already
// gathered.
func split(ctx context.Context, b Budget, simsLeft, left int, deadline time.Time) stopper {
	st := stopper{ctx: ctx, sims: -1}
	if b.Sims > 0 {
		st.sims = simsLeft / left
	}
	if b.Time > 0 {
		now := time.Now()
		st.deadline = now.Add(deadline.Sub(now) / time.Duration(left))
	}
	return st
}

// start returns the turn's deadline (zero without a time budget).
func (b Budget) start() time.Time {
	if b.Time > 0 {
		return time.Now().Add(b.Time)
	}
	return time.Time{}
}

func (b Budget) check() error {
	if b.Sims < 0 || b.Time < 0 || (b.Sims == 0 && b.Time == 0) {
		return errNoBudget
	}
	return nil
}
