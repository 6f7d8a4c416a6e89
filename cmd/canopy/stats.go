package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"text/tabwriter"

	"github.com/canopy-go/canopy/arena"
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
--parallel.`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			game := fs.String("game", "", "game spec")
			agents := fs.String("agents", "random,random", "agent spec per seat")
			n := fs.Int("games", 1000, "number of games")
			prefix := fs.Int("prefix", 4, "count distinct games by their first K moves")
			parallel := fs.Int("parallel", 0, "games played at once (default: number of CPUs)")
			seed := fs.Uint64("seed", 1, "random seed")
			netBackend := agentBackendFlag(fs)
			asJSON := fs.Bool("json", false, "print as JSON")
			quiet := fs.Bool("quiet", false, "no progress line")
			return func(e *env, args []string) error {
				if err := setAgentBackend(*netBackend, e.Stderr); err != nil {
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
				if *n <= 0 {
					return usagef("--games must be positive")
				}
				if *parallel < 0 || *prefix < 0 {
					return usagef("--parallel and --prefix must not be negative (0 picks the default)")
				}
				if _, err := arena.NewAgents(g, specs, *seed); err != nil {
					return usagef("--agents: %v", err)
				}
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
				defer stop()
				pr := newProgress(e.Stderr, "games", *n, *quiet)
				res, err := arena.Stats(ctx, g, arena.StatsConfig{
					Agents: specs, Games: *n, Seed: *seed, Parallel: *parallel, Prefix: *prefix,
					Progress: func(done int) { pr.update(done, "") },
				})
				if err != nil {
					return err
				}
				if *asJSON {
					return writeJSON(e.Stdout, res)
				}
				tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
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
		},
	})
}
