package bench

import (
	"context"
	"time"

	"github.com/canopy-go/canopy/games"
)

// GameResult holds throughput figures for one game.
type GameResult struct {
	Game        string  `json:"game"`
	Playouts    int     `json:"playouts"`
	Seconds     float64 `json:"seconds"`
	PlayoutsSec float64 `json:"playouts_per_sec"`
	MovesSec    float64 `json:"moves_per_sec"` // actions applied per second during playouts
	MeanLength  float64 `json:"mean_length"`
	// Nanoseconds per operation, measured on positions from random games.
	LegalNs float64 `json:"legal_ns"`
	ApplyNs float64 `json:"apply_ns"`
	CloneNs float64 `json:"clone_ns"`
	HashNs  float64 `json:"hash_ns"`
}

// Games measures g for about d: random playouts from the initial state on
// one goroutine, then the cost of single operations on a sample of
// positions. progress, when non-nil, receives the fraction done.
func Games(ctx context.Context, g games.Game, seed uint64, d time.Duration, progress func(float64)) GameResult {
	res := GameResult{Game: g.Spec()}
	rng := games.NewRand(seed)
	mask := games.NewMask(g.NumActions())
	joint := make([]games.Action, g.NumPlayers())
	init := g.NewInitialState()
	s := g.NewInitialState()
	moves := 0
	start := time.Now()
	deadline := start.Add(d * 3 / 4)
	for i := 0; ; i++ {
		if i&63 == 0 {
			now := time.Now()
			if now.After(deadline) || ctx.Err() != nil {
				break
			}
			if progress != nil {
				progress(0.75 * float64(now.Sub(start)) / float64(d*3/4))
			}
		}
		init.CloneInto(s)
		moves += games.RandomPlayout(s, rng, mask, joint)
		res.Playouts++
	}
	res.Seconds = time.Since(start).Seconds()
	res.PlayoutsSec = float64(res.Playouts) / res.Seconds
	res.MovesSec = float64(moves) / res.Seconds
	res.MeanLength = float64(moves) / float64(max(res.Playouts, 1))

	// Sample decision positions along random games for the per-operation
	// costs: states where a real player moves, or where all players move
	// at once (simultaneous games have no other decisions). Chance and
	// terminal states are skipped.
	var sample []games.State
	for tries := 0; len(sample) < 256 && tries < 10000; tries++ {
		s := g.NewInitialState()
		for !s.IsTerminal() && len(sample) < 256 {
			if p := s.CurrentPlayer(); p >= 0 || p == games.SimultaneousPlayer {
				sample = append(sample, s.Clone())
			}
			games.RandomStep(s, rng, mask, joint)
		}
	}
	if len(sample) == 0 {
		return res // no decision positions: nothing to time
	}
	// One random legal move per sample; a whole joint action (one entry per
	// player) at simultaneous states.
	acts := make([][]games.Action, len(sample))
	for i, p := range sample {
		acts[i] = make([]games.Action, len(joint))
		if ss, ok := p.(games.SimultaneousState); ok && p.CurrentPlayer() == games.SimultaneousPlayer {
			for pl := range acts[i] {
				ss.LegalFor(pl, mask)
				acts[i][pl] = mask.Random(rng)
			}
			continue
		}
		p.Legal(mask)
		acts[i] = append(acts[i][:0], mask.Random(rng))
	}
	legal := func(s games.State) {
		if ss, ok := s.(games.SimultaneousState); ok && s.CurrentPlayer() == games.SimultaneousPlayer {
			ss.LegalFor(0, mask)
			return
		}
		s.Legal(mask)
	}
	apply := func(s games.State, a []games.Action) {
		if len(a) > 1 || s.CurrentPlayer() == games.SimultaneousPlayer {
			s.(games.SimultaneousState).ApplyJoint(a)
			return
		}
		s.Apply(a[0])
	}
	dst := g.NewInitialState()
	per := d / 16
	res.LegalNs = timeOp(per, len(sample), func(i int) { legal(sample[i]) })
	res.CloneNs = timeOp(per, len(sample), func(i int) { sample[i].CloneInto(dst) })
	res.HashNs = timeOp(per, len(sample), func(i int) { _ = sample[i].Hash() })
	// Apply is measured as clone+apply minus clone.
	cloneApply := timeOp(per, len(sample), func(i int) { sample[i].CloneInto(dst); apply(dst, acts[i]) })
	res.ApplyNs = max(cloneApply-res.CloneNs, 0)
	if progress != nil {
		progress(1)
	}
	return res
}

func timeOp(d time.Duration, n int, f func(i int)) float64 {
	ops := 0
	start := time.Now()
	for time.Since(start) < d {
		for i := range n {
			f(i)
		}
		ops += n
	}
	return float64(time.Since(start).Nanoseconds()) / float64(ops)
}
