package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	register(&command{
		Name:    "stats",
		Summary: "play many games between fixed seats and report game statistics",
		Usage:   "--game G --agents A,B[,...] --games N [--prefix K] [--parallel P] [--seed S] [--json]",
		Help: `Plays N games with the agents in fixed seats (the first agent always moves
first) and reports the first player's win rate with a 95% Wilson interval
(draws count half), the branching factor per decision (min/mean/max), game
length in decisions, mean returns and scores, and the number of distinct
games by their first K moves. Results depend only on --seed, not on
--parallel. One agent spec plays every seat (the default: random).

At most 10000000 games per run. Interrupted (Ctrl-C), it prints the
statistics of the games finished so far, marked partial, and exits with
status 1.`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			game, agents, netBackend := new(string), new(string), new(string)
			n, prefix, parallel, seed := new(int), new(int), new(int), new(uint64)
			asJSON, quiet := new(bool), new(bool)
			spec.Table{
				gameOption(game, "", ""),
				agentsOption(agents, "random", "one per seat, or one for every seat"),
				spec.Int("games", n, 1000, 1, maxGames, "number of games"),
				spec.Int("prefix", prefix, 4, 0, 1<<20, "count distinct games by their first K moves (0: 4)"),
				parallelOption(parallel),
				seedOption(seed, ""),
				backendOption(netBackend, agentBackendNote),
				jsonOption(asJSON, ""),
				quietOption(quiet),
			}.Flags(fs)
			return func(e *env, args []string) error {
				aenv, err := agentEnv(*netBackend, e.Stderr)
				if err != nil {
					return err
				}
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				g, err := newGame(*game)
				if err != nil {
					return err
				}
				specs := splitAgents(*agents)
				if len(specs) == 1 {
					for len(specs) < g.NumPlayers() {
						specs = append(specs, specs[0])
					}
				}
				if len(specs) != g.NumPlayers() {
					return usagef("--agents: %s has %d players, got %d agent(s)", g.Spec(), g.NumPlayers(), len(specs))
				}
				if err := checkAgentMemory(g, specs, gamesAtOnce(*parallel, *n)); err != nil {
					return err
				}
				ags, err := arena.NewAgents(g, specs, aenv.WithSeed(*seed))
				if err != nil {
					return usagef("--agents: %v", err)
				}
				arena.CloseAgents(ags)
				ctx, stop := signalContext()
				defer stop()
				pr := newProgress(e.Stderr, "games", *n, *quiet)
				res, runErr := arena.Stats(ctx, g, arena.StatsConfig{
					Agents: specs, Games: *n, Seed: *seed, Parallel: *parallel, Prefix: *prefix,
					Progress: func(done int) { pr.update(done, "") },
				})
				if res == nil {
					return runErr
				}
				if err := writeStats(e.Stdout, res, *n, *asJSON); err != nil {
					return err
				}
				return partialError(ctx, runErr, res.Games, *n)
			}
		},
	})
}

// maxGames bounds --games of stats and the total games of arena: results
// are kept per game (1e7 games take a few GB).
const maxGames = 10_000_000

// gamesAtOnce is how many games a run of n games with --parallel p plays
// at once (p 0: GOMAXPROCS), for memory estimates.
func gamesAtOnce(p, n int) int {
	if p <= 0 {
		p = runtime.GOMAXPROCS(0)
	}
	return max(min(p, n), 1)
}

// partialError turns the error that stopped a run of total games after
// done of them, whose partial results were printed, into the command's
// error (nil stays nil).
func partialError(ctx context.Context, err error, done, total int) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("interrupted (%s) after %d of %d games; the results printed are partial", signalName(ctx), done, total)
	}
	return fmt.Errorf("%v (the results printed are partial: %d of %d games)", err, done, total)
}

// writeStats prints stats results as text or JSON. A partial result
// (Ctrl-C) says so in its first line (JSON: "partial": true).
func writeStats(w io.Writer, res *arena.StatsResult, requested int, asJSON bool) error {
	if asJSON {
		return writeJSON(w, res)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if res.Partial {
		fmt.Fprintf(tw, "PARTIAL\t%d of %d games finished (stopped early)\n", res.Games, requested)
	}
	fmt.Fprintf(tw, "game\t%s\n", res.Game)
	fmt.Fprintf(tw, "agents\t%v\n", res.Agents)
	fmt.Fprintf(tw, "games\t%d (seed %d)\n", res.Games, res.Seed)
	fmt.Fprintf(tw, "first-player win rate\t%s (draws count half)\n", res.FirstPlayer)
	fmt.Fprintf(tw, "wins per seat\t%v, draws %d\n", res.Wins, res.Draws)
	fmt.Fprintf(tw, "mean returns\t%.3f\n", res.MeanReturns)
	if res.MeanScores != nil {
		fmt.Fprintf(tw, "mean scores\t%.2f\n", res.MeanScores)
	}
	fmt.Fprintf(tw, "branching per decision\t%s\n", res.Branching)
	fmt.Fprintf(tw, "game length (decisions)\t%s\n", res.Length)
	fmt.Fprintf(tw, "distinct games by first %d moves\t%d\n", res.Prefix, res.UniquePrefix)
	return tw.Flush()
}
