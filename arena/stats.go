package arena

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search/engine"
)

// Interval is a point estimate with a 95% confidence interval.
type Interval struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

func (iv Interval) String() string {
	return fmt.Sprintf("%.1f%% [%.1f, %.1f]", 100*iv.Value, 100*iv.Lo, 100*iv.Hi)
}

// Wilson returns the Wilson score interval (95%) for k successes in n
// trials; draws should be counted as half a success by the caller.
func Wilson(k float64, n int) Interval {
	if n == 0 {
		return Interval{Value: math.NaN(), Lo: 0, Hi: 1}
	}
	const z = 1.959963984540054
	nf := float64(n)
	p := k / nf
	den := 1 + z*z/nf
	centre := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return Interval{Value: p, Lo: math.Max(0, centre-half), Hi: math.Min(1, centre+half)}
}

// Summary describes a distribution of numbers.
type Summary struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
	Std  float64 `json:"std"`
	N    int     `json:"n"`
}

func (s Summary) String() string {
	return fmt.Sprintf("min %.0f  mean %.2f  max %.0f  (sd %.2f)", s.Min, s.Mean, s.Max, s.Std)
}

// summarize accumulates with Welford's algorithm.
type summarize struct {
	n           int
	mean, m2    float64
	min, max    float64
	initialised bool
}

func (a *summarize) add(x float64) {
	if !a.initialised {
		a.min, a.max, a.initialised = x, x, true
	}
	a.min = math.Min(a.min, x)
	a.max = math.Max(a.max, x)
	a.n++
	d := x - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (x - a.mean)
}

func (a *summarize) summary() Summary {
	s := Summary{Min: a.min, Mean: a.mean, Max: a.max, N: a.n}
	if a.n > 1 {
		s.Std = math.Sqrt(a.m2 / float64(a.n-1))
	}
	return s
}

// StatsConfig configures Stats.
type StatsConfig struct {
	Agents []string // agent spec per seat
	// Env carries the services the agents are built with (a network
	// engine pool: search/engine's Pool; one is made when it has none).
	// Its seed is not used: seeds derive from Seed.
	Env      agent.Env
	Games    int
	Seed     uint64
	Parallel int // concurrent games (default GOMAXPROCS)
	Prefix   int // k for "unique games by their first k decisions" (default 4)
	// Progress, when non-nil, is called after each finished game with the
	// number of games done (from one goroutine at a time).
	Progress func(done int)
}

// StatsResult is what Stats measures.
type StatsResult struct {
	Game          string    `json:"game"`
	Agents        []string  `json:"agents"`
	Games         int       `json:"games"`
	Seed          uint64    `json:"seed"`
	Wins          []int     `json:"wins"`  // per seat: games where the seat's return was strictly highest
	Draws         int       `json:"draws"` // games with a tie for the highest return
	FirstPlayer   Interval  `json:"first_player_win_rate"`
	MeanReturns   []float64 `json:"mean_returns"`
	MeanScores    []float64 `json:"mean_scores,omitempty"`
	Branching     Summary   `json:"branching_per_decision"`
	GameBranching Summary   `json:"mean_branching_per_game"`
	Length        Summary   `json:"game_length_decisions"`
	Prefix        int       `json:"prefix"`
	UniquePrefix  int       `json:"unique_games_by_prefix"`
	// Partial marks the statistics of a run that stopped early (see
	// Stats): they cover only the Games games that finished.
	Partial bool `json:"partial,omitempty"`
}

// Stats plays cfg.Games games of g with fixed seats and summarises them.
// Game i uses only seeds derived from (cfg.Seed, i), so the result does not
// depend on cfg.Parallel. The first failing game (or the end of ctx) stops
// the run and is returned as the error (ctx.Err() itself when ctx ended),
// together with the statistics of the games that finished before it,
// marked Partial; the result is nil when no game finished.
func Stats(ctx context.Context, g games.Game, cfg StatsConfig) (*StatsResult, error) {
	n := g.NumPlayers()
	if len(cfg.Agents) != n {
		return nil, fmt.Errorf("%s has %d players but %d agents were given", g.Spec(), n, len(cfg.Agents))
	}
	if cfg.Games <= 0 {
		return nil, fmt.Errorf("number of games must be positive, got %d", cfg.Games)
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = runtime.GOMAXPROCS(0)
	}
	if cfg.Prefix <= 0 {
		cfg.Prefix = 4
	}
	// Validate the agent specs once, up front, for a clean error.
	env := engine.WithPool(cfg.Env)
	keep, err := NewAgents(g, cfg.Agents, env.WithSeed(cfg.Seed))
	if err != nil {
		return nil, err
	}
	defer CloseAgents(keep) // keeps shared engines open between games
	recs := make([]*Record, cfg.Games)
	errs := make([]error, cfg.Games)
	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	next := make(chan int)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range min(cfg.Parallel, cfg.Games) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				seed := DeriveSeed(cfg.Seed, uint64(i))
				ags, err := NewAgents(g, cfg.Agents, env.WithSeed(seed))
				if err == nil {
					recs[i], err = PlayGame(ctx, g, ags, cfg.Agents, DeriveSeed(seed, 1<<32))
					CloseAgents(ags)
				}
				if err != nil {
					errs[i] = fmt.Errorf("game %d: %w", i, err)
					cancel()
				}
				recs[i].dropFinal()
				mu.Lock()
				done++
				if cfg.Progress != nil {
					cfg.Progress(done)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range cfg.Games {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	// Report the game that failed, not one that was cancelled because of it.
	var firstErr error
	for _, err := range errs {
		if err != nil && (firstErr == nil || errors.Is(firstErr, context.Canceled) && !errors.Is(err, context.Canceled)) {
			firstErr = err
		}
	}
	if err := stopError(parent, firstErr); err != nil {
		var done []*Record
		for i, r := range recs {
			if r != nil && errs[i] == nil {
				done = append(done, r)
			}
		}
		if len(done) == 0 {
			return nil, err
		}
		res := summarizeGames(g, cfg, done)
		res.Partial = true
		return res, err
	}
	return summarizeGames(g, cfg, recs), nil
}

func (r *Record) dropFinal() {
	if r != nil {
		r.Final = nil // keep memory flat for large runs
	}
}

func summarizeGames(g games.Game, cfg StatsConfig, recs []*Record) *StatsResult {
	n := g.NumPlayers()
	res := &StatsResult{
		Game: g.Spec(), Agents: cfg.Agents, Games: len(recs), Seed: cfg.Seed,
		Wins: make([]int, n), MeanReturns: make([]float64, n), Prefix: cfg.Prefix,
	}
	var br, gbr, length summarize
	prefixes := map[string]struct{}{}
	firstScore := 0.0
	for _, r := range recs {
		best, nBest, winner := math.Inf(-1), 0, -1
		for p, v := range r.Returns {
			res.MeanReturns[p] += v / float64(len(recs))
			switch {
			case v > best:
				best, nBest, winner = v, 1, p
			case v == best:
				nBest++
			}
		}
		if nBest == 1 {
			res.Wins[winner]++
			if winner == 0 {
				firstScore++
			}
		} else {
			res.Draws++
			if r.Returns[0] == best {
				firstScore += 1 / float64(nBest)
			}
		}
		if r.Scores != nil {
			if res.MeanScores == nil {
				res.MeanScores = make([]float64, n)
			}
			for p, v := range r.Scores {
				res.MeanScores[p] += v / float64(len(recs))
			}
		}
		var gsum summarize
		for _, b := range r.Branching {
			br.add(float64(b))
			gsum.add(float64(b))
		}
		if gsum.n > 0 {
			gbr.add(gsum.mean)
		}
		length.add(float64(r.Decisions()))
		k := min(cfg.Prefix, len(r.Text))
		prefixes[strings.Join(r.Text[:k], " ")] = struct{}{}
	}
	res.FirstPlayer = Wilson(firstScore, len(recs))
	res.Branching = br.summary()
	res.GameBranching = gbr.summary()
	res.Length = length.summary()
	res.UniquePrefix = len(prefixes)
	return res
}
