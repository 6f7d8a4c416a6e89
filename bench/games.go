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

	// Sample positions along random games for the per-operation costs.
	var sample []games.State
	for len(sample) < 256 {
		s := g.NewInitialState()
		for !s.IsTerminal() && len(sample) < 256 {
			if s.CurrentPlayer() >= 0 {
				sample = append(sample, s.Clone())
			}
			games.RandomStep(s, rng, mask, joint)
		}
	}
	acts := make([]games.Action, len(sample))
	for i, p := range sample {
		p.Legal(mask)
		acts[i] = mask.Random(rng)
	}
	dst := g.NewInitialState()
	per := d / 16
	res.LegalNs = timeOp(per, len(sample), func(i int) { sample[i].Legal(mask) })
	res.CloneNs = timeOp(per, len(sample), func(i int) { sample[i].CloneInto(dst) })
	res.HashNs = timeOp(per, len(sample), func(i int) { _ = sample[i].Hash() })
	// Apply is measured as clone+apply minus clone.
	cloneApply := timeOp(per, len(sample), func(i int) { sample[i].CloneInto(dst); dst.Apply(acts[i]) })
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
