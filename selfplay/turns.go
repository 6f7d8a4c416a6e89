package selfplay

import (
	"context"
	"fmt"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search/multi"
)

// PlayTurns plays one self-play game of g from its initial state with ts
// choosing every turn of every player, as study 004's MegaZero does
// (Algorithm 1: TURN-SELECTION once per turn), and returns its record:
// one position per atomic action, with the observation from the mover's
// view, the row of ts.PolicyHistory for that action as the policy
// target, the legal actions, the ply and the final outcome from the
// mover's view. RootQ is 0 and Nodes is 0: a TurnSearcher reports no
// value per position and no count. maxPlies > 0 caps the game's atomic
// actions (a game cut there is a draw, as in Run); 0 plays to the end.
//
// It is the hook by which a turn-level search (search/multi: mcts-v,
// mcts-bb, emcts) feeds AlphaZero training; Run does not use it (it
// searches every atomic action with PUCT through the engine), and what
// varies between games (seeds, temperature) is ts's. It stops with
// ctx's error when ctx is done, and with an error when ts plans an
// illegal action.
func PlayTurns(ctx context.Context, g games.Game, ts multi.TurnSearcher, id, maxPlies int) (*GameRecord, error) {
	obsN := 1
	for _, d := range g.ObservationShape() {
		obsN *= d
	}
	n := g.NumActions()
	rec := &GameRecord{ID: id}
	s := g.NewInitialState()
	mask := games.NewMask(n)
	var turn []games.Action
	var hist []float32
	var movers []int
	for !s.IsTerminal() && (maxPlies <= 0 || s.MoveNumber() < maxPlies) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		if turn, err = ts.PlanTurn(ctx, s, turn[:0]); err != nil {
			return nil, fmt.Errorf("selfplay: %s: planning a turn at ply %d: %w", g.Spec(), s.MoveNumber(), err)
		}
		hist = ts.PolicyHistory(hist[:0])
		if len(turn) == 0 || len(hist) != n*len(turn) {
			return nil, fmt.Errorf("selfplay: %s: planner returned %d actions and %d policy values at ply %d", g.Spec(), len(turn), len(hist), s.MoveNumber())
		}
		for i, a := range turn {
			if s.IsTerminal() || (maxPlies > 0 && s.MoveNumber() >= maxPlies) {
				break
			}
			p := s.CurrentPlayer()
			k := len(rec.Obs)
			rec.Obs = append(rec.Obs, make([]float32, obsN)...)
			s.Observation(p, rec.Obs[k:])
			rec.Policy = append(rec.Policy, hist[i*n:(i+1)*n]...)
			s.Legal(mask)
			for b := range n {
				rec.Legal = append(rec.Legal, b2u8(mask.Has(games.Action(b))))
			}
			rec.Ply = append(rec.Ply, int32(s.MoveNumber()))
			rec.RootQ = append(rec.RootQ, 0)
			movers = append(movers, p)
			if err := games.ApplyChecked(s, a); err != nil {
				return nil, fmt.Errorf("selfplay: %s: planned action at ply %d: %w", g.Spec(), s.MoveNumber(), err)
			}
		}
	}
	rec.Returns = make([]float64, g.NumPlayers())
	if s.IsTerminal() {
		lo, scale := -1.0, 1.0
		if t := g.Type(); t.MaxReturn > t.MinReturn {
			lo, scale = t.MinReturn, 2/(t.MaxReturn-t.MinReturn)
		}
		s.Returns(rec.Returns)
		for q, v := range rec.Returns {
			rec.Returns[q] = (v-lo)*scale - 1
		}
	} // else: cut at maxPlies; a draw (zeros)
	rec.Value = make([]float32, len(movers))
	for i, p := range movers {
		rec.Value[i] = float32(rec.Returns[p])
	}
	return rec, nil
}
