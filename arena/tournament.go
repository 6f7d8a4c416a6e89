package arena

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search/engine"
)

// TournamentConfig configures Tournament.
type TournamentConfig struct {
	// Agents are the entrants' agent specs (at least 2, and at least the
	// game's number of players). The same spec may be listed twice; the
	// entries are then rated as separate agents.
	Agents []string
	// Env carries the services the agents are built with (a network
	// engine pool: search/engine's Pool; one is made when it has none).
	// Its seed is not used: seeds derive from Seed.
	Env agent.Env
	// Games is the number of games per table (see Schedule): per pairing
	// for two-player games.
	Games    int
	Seed     uint64
	Parallel int // concurrent games (default GOMAXPROCS)
	// Bootstrap is the number of bootstrap resamples for the Elo
	// intervals (0: DefaultBootstrap; negative: none).
	Bootstrap int
	// Progress, when non-nil, is called after each finished game with the
	// number of games done (from one goroutine at a time).
	Progress func(done int)
	// OnGame, when non-nil, is called with each finished game (index i in
	// schedule order, its record and its chance seed), concurrently from
	// the goroutines that play the games. An error stops the tournament
	// as a failed game does.
	OnGame func(i int, rec *Record, chanceSeed uint64) error
	// Played holds games finished by an earlier run of the same
	// tournament, by schedule index (e.g. read back from its game logs
	// with Log.Result): they are not played again but count in the
	// result and in Progress. Each entry's Seats must be the schedule's.
	Played map[int]GameResult
}

// GameResult is the outcome of one tournament game.
type GameResult struct {
	Seats   []int     `json:"seats"` // agent index per seat
	Returns []float64 `json:"returns"`
	Length  int       `json:"length"` // player decisions
	// Moves and Think: decisions per seat and their total wall-clock time
	// in seconds (Record.Moves, Record.Think); nil when not recorded.
	Moves []int     `json:"moves,omitempty"`
	Think []float64 `json:"think_s,omitempty"`
}

// TournamentResult is what Tournament reports.
type TournamentResult struct {
	Game          string   `json:"game"`
	Agents        []string `json:"agents"`
	GamesPerTable int      `json:"games_per_table"`
	TotalGames    int      `json:"total_games"`
	Seed          uint64   `json:"seed"`
	Bootstrap     int      `json:"bootstrap"`
	// Pairwise[a][b] is agent a's record against agent b.
	Pairwise [][]PairStats `json:"pairwise"`
	// Length[a] summarises the length (player decisions) of a's games.
	Length []Summary `json:"game_length_decisions"`
	// PerAgent[a] holds the columns the studies report: sole and shared
	// wins, pairwise score, mean ordinal, time per move (Summaries).
	PerAgent []AgentSummary `json:"per_agent"`
	// Elo: maximum-likelihood Elo, mean 0, bootstrap 95% intervals.
	Elo []Rating `json:"elo"`
	// BradleyTerry: Bayesian Plackett-Luce MAP log-strengths (natural
	// log, prior sd BTPriorSD), Laplace 95% intervals.
	BradleyTerry []Rating `json:"bradley_terry"`
	// ILSR: Plackett-Luce log-strengths by ILSR (alpha ILSRAlpha), mean 0.
	ILSR []float64 `json:"ilsr"`
	// PlackettLuce: Plackett-Luce ratings over full finishing orders with
	// Davidson-Luce ties, Elo scale, mean 0, prior sd EloPriorSD, Laplace
	// 95% intervals and flags (FitPlackettLuce); nil when it could not be
	// fitted, with the reason in PlackettLuceError (agents that never met,
	// e.g. in a partial tournament).
	PlackettLuce      *PLFit `json:"plackett_luce,omitempty"`
	PlackettLuceError string `json:"plackett_luce_error,omitempty"`
	// Games holds every game's outcome, in schedule order.
	Games []GameResult `json:"-"`
	// Partial marks the result of a tournament that stopped early (see
	// Tournament): it covers only TotalGames finished games.
	Partial bool `json:"partial,omitempty"`
}

// Schedule returns the seating of every game of a tournament between k
// agents in a game for n players with games per table: out[i][s] is the
// agent in seat s of game i.
//
// Tables are the n-element subsets of the agents in lexicographic order
// (for two players: every pairing i<j). Game r of a table with members
// m_0<...<m_{n-1} seats member m_{(s+r) mod n} in seat s, a cyclic
// rotation: with games a multiple of n every agent sits in every seat
// equally often, and every pair of agents meets equally often; otherwise
// the first games%n rotations are played once more. For two players this
// alternates seats, starting with the lower index moving first.
func Schedule(n, k, games int) ([][]int, error) {
	if n < 2 {
		return nil, fmt.Errorf("tournaments need a game for 2 or more players, got %d", n)
	}
	if k < n {
		return nil, fmt.Errorf("a %d-player game needs at least %d agents, got %d", n, n, k)
	}
	if games <= 0 {
		return nil, fmt.Errorf("games per table must be positive, got %d", games)
	}
	var out [][]int
	members := make([]int, n)
	var rec func(pos, from int)
	rec = func(pos, from int) {
		if pos == n {
			for r := range games {
				seats := make([]int, n)
				for s := range seats {
					seats[s] = members[(s+r)%n]
				}
				out = append(out, seats)
			}
			return
		}
		for a := from; a <= k-(n-pos); a++ {
			members[pos] = a
			rec(pos+1, a+1)
		}
	}
	rec(0, 0)
	return out, nil
}

// Tournament plays every game of Schedule(g.NumPlayers(), len(Agents),
// Games) but those in cfg.Played, in parallel, and rates the agents. Game
// i (in schedule order) uses only seeds derived from DeriveSeed(cfg.Seed,
// i) (agents seeded per seat as in NewAgents, chance from ChanceSeed), and
// the bootstrap uses its own derived seed, so the result depends neither
// on cfg.Parallel nor on which games an earlier run played (except the
// measured times per move). The first failing game (or the end of ctx) stops the
// tournament and is returned as the error (ctx.Err() itself when ctx
// ended), together with the ratings of the games that finished before it,
// marked Partial; the result is nil when no game finished.
func Tournament(ctx context.Context, g games.Game, cfg TournamentConfig) (*TournamentResult, error) {
	k := len(cfg.Agents)
	if k < 2 {
		return nil, fmt.Errorf("a tournament needs at least 2 agents, got %d", k)
	}
	sched, err := Schedule(g.NumPlayers(), k, cfg.Games)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", g.Spec(), err)
	}
	switch {
	case cfg.Bootstrap == 0:
		cfg.Bootstrap = DefaultBootstrap
	case cfg.Bootstrap < 0:
		cfg.Bootstrap = 0
	}
	results := make([]GameResult, len(sched))
	for i, r := range cfg.Played {
		if i < 0 || i >= len(sched) {
			return nil, fmt.Errorf("played game %d: the schedule has %d games", i+1, len(sched))
		}
		if !slices.Equal(r.Seats, sched[i]) {
			return nil, fmt.Errorf("played game %d: seats %v, the schedule has %v", i+1, r.Seats, sched[i])
		}
		results[i] = r
	}
	var todo []int
	for i := range sched {
		if _, ok := cfg.Played[i]; !ok {
			todo = append(todo, i)
		}
	}
	done := len(cfg.Played)
	firstErr := PlayGames(ctx, g, cfg, todo, func(i int, rec *Record, r GameResult) error {
		if cfg.OnGame != nil {
			if err := cfg.OnGame(i, rec, ChanceSeed(cfg.Seed, i)); err != nil {
				return err
			}
		}
		results[i] = r
		return nil
	}, func() {
		done++
		if cfg.Progress != nil {
			cfg.Progress(done)
		}
	})
	if se, ok := errors.AsType[setupError](firstErr); ok {
		return nil, se.err
	}
	opt := RateOptions{Bootstrap: cfg.Bootstrap, Seed: cfg.Seed, GamesPerTable: cfg.Games}
	err = firstErr
	if err == nil {
		return Rate(g.Spec(), cfg.Agents, results, opt)
	}
	var played []GameResult
	for _, r := range results {
		if r.Seats != nil {
			played = append(played, r)
		}
	}
	if len(played) == 0 {
		return nil, err
	}
	res, rerr := Rate(g.Spec(), cfg.Agents, played, opt)
	if rerr != nil {
		return nil, err
	}
	res.Partial = true
	return res, err
}

// setupError is a PlayGames error from before any game was played (an
// agent spec that does not build).
type setupError struct{ err error }

func (e setupError) Error() string { return e.err.Error() }
func (e setupError) Unwrap() error { return e.err }

// PlayGames plays the games of indices (schedule indices of the
// tournament cfg: cfg.Agents, Env, Games, Seed and Parallel are used)
// concurrently, exactly as Tournament plays them: game i seeded from
// DeriveSeed(cfg.Seed, i) and its chance from ChanceSeed(cfg.Seed, i), so
// that a game's result does not depend on which process plays it, with
// which others, or how many at once. It calls onGame with each finished
// game (concurrently, from the goroutines that play them; an error stops
// the games as a failed game does) and then progress (one call at a time,
// may be nil). It returns the first failure (ctx's error when ctx ended),
// or nil. A distributed evaluation plays a tournament's games this way on
// many machines and rates them with Rate.
func PlayGames(ctx context.Context, g games.Game, cfg TournamentConfig, indices []int, onGame func(i int, rec *Record, r GameResult) error, progress func()) error {
	k := len(cfg.Agents)
	if k < 2 {
		return setupError{fmt.Errorf("a tournament needs at least 2 agents, got %d", k)}
	}
	sched, err := Schedule(g.NumPlayers(), k, cfg.Games)
	if err != nil {
		return setupError{fmt.Errorf("%s: %w", g.Spec(), err)}
	}
	for _, i := range indices {
		if i < 0 || i >= len(sched) {
			return setupError{fmt.Errorf("game %d: the schedule has %d games", i+1, len(sched))}
		}
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = runtime.GOMAXPROCS(0)
	}
	env := engine.WithPool(cfg.Env)
	// Validate each spec once, up front, for a clean error naming it.
	for i, sp := range cfg.Agents {
		specs := make([]string, g.NumPlayers())
		for s := range specs {
			specs[s] = sp
		}
		ags, err := NewAgents(g, specs, env.WithSeed(cfg.Seed))
		if err != nil {
			return setupError{fmt.Errorf("agent %d (%q): %w", i+1, sp, err)}
		}
		// Kept until the end: their hold on shared resources (a network
		// agent's engine) keeps those open between games.
		defer CloseAgents(ags)
	}
	var (
		mu       sync.Mutex
		firstErr error // the first game to fail, in time order
		wg       sync.WaitGroup
	)
	next := make(chan int)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range max(1, min(cfg.Parallel, len(indices))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				seats := sched[i]
				specs := make([]string, len(seats))
				for s, a := range seats {
					specs[s] = cfg.Agents[a]
				}
				ags, err := NewAgents(g, specs, env.WithSeed(DeriveSeed(cfg.Seed, uint64(i))))
				var rec *Record
				if err == nil {
					rec, err = PlayGame(ctx, g, ags, specs, ChanceSeed(cfg.Seed, i))
					CloseAgents(ags)
				}
				if err == nil {
					think := make([]float64, len(rec.Think))
					for p, d := range rec.Think {
						think[p] = d.Seconds()
					}
					err = onGame(i, rec, GameResult{Seats: seats, Returns: rec.Returns, Length: rec.Decisions(), Moves: rec.Moves, Think: think})
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("game %d (%v): %w", i+1, specs, err)
					cancel()
				}
				if progress != nil {
					progress()
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, i := range indices {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return stopError(parent, firstErr)
}

// ChanceSeed is the seed of game i's chance outcomes in a tournament
// seeded with seed (what its game log records as Seed).
func ChanceSeed(seed uint64, i int) uint64 {
	return DeriveSeed(DeriveSeed(seed, uint64(i)), 1<<32)
}

// stopError is the error that stopped a run of games: parent's own error
// when parent ended (the games then fail with it, wrapped), else the
// first game's failure (nil when nothing failed).
func stopError(parent context.Context, first error) error {
	if perr := parent.Err(); perr != nil && (first == nil || errors.Is(first, perr)) {
		return perr
	}
	return first
}

// RateOptions configures Rate.
type RateOptions struct {
	Bootstrap     int    // Elo bootstrap resamples (0 for none)
	Seed          uint64 // the bootstrap uses DeriveSeed(Seed, 1<<40)
	GamesPerTable int    // recorded in the result only
}

// Rate builds the tables and ratings of a TournamentResult from played
// games (Tournament calls it; it is exported for results gathered
// elsewhere, e.g. from game logs).
func Rate(game string, agents []string, results []GameResult, opt RateOptions) (*TournamentResult, error) {
	k := len(agents)
	outs := make([]Outcome, len(results))
	lens := make([]summarize, k)
	for i, r := range results {
		outs[i] = Outcome{Agents: r.Seats, Returns: r.Returns}
		for _, a := range r.Seats {
			if a >= 0 && a < k {
				lens[a].add(float64(r.Length))
			}
		}
	}
	res := &TournamentResult{
		Game: game, Agents: agents, GamesPerTable: opt.GamesPerTable, TotalGames: len(results),
		Seed: opt.Seed, Bootstrap: opt.Bootstrap, Games: results, Length: make([]Summary, k),
	}
	var err error
	if res.Pairwise, err = PairwiseTable(k, outs); err != nil {
		return nil, err
	}
	for a := range lens {
		res.Length[a] = lens[a].summary()
	}
	if res.PerAgent, err = Summaries(agents, results); err != nil {
		return nil, err
	}
	if res.Elo, err = BootstrapElo(agents, outs, EloPriorSD, opt.Bootstrap, DeriveSeed(opt.Seed, 1<<40)); err != nil {
		return nil, fmt.Errorf("Elo: %w", err)
	}
	if res.BradleyTerry, err = FitBradleyTerry(agents, outs, BTPriorSD); err != nil {
		return nil, fmt.Errorf("Bradley-Terry: %w", err)
	}
	if res.ILSR, err = FitILSR(k, outs, ILSRAlpha); err != nil {
		return nil, err
	}
	// The outcomes are valid (PairwiseTable checked them): what remains
	// are data the model cannot rate, which leave the other columns be.
	if res.PlackettLuce, err = FitPlackettLuce(agents, outs, PLOptions{}); err != nil {
		res.PlackettLuceError = err.Error()
	}
	return res, nil
}
