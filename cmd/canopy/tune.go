package main

import (
	"flag"
	"fmt"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games/tetrislink"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	register(&command{
		Name:    "tune",
		Summary: "optimise the Tetris Link heuristic's four weights against the 'user' weights",
		Usage:   "--game tetrislink [--games N] [--iters K] [--pop P] [--final-games E] [--seed S] [--json]",
		Help: `Tune the four weights (connect/group/block/points) of the Tetris Link
heuristic agent with the cross-entropy method: each iteration samples --pop
weight vectors from a normal distribution (weights clipped to [0,15]), plays
each against the hand-set 'user' weights over --games games with seats
alternating (the same game seeds for every candidate of an iteration), and
refits the distribution's mean and spread to the best quarter. Fitness is
the candidate's score rate: win 1, draw 1/2, loss 0 (with 3-4 players, the
rank-based return mapped to [0,1]). The final mean (the tuned weights) is
then evaluated on --final-games fresh games and printed with a 95% Wilson
interval, followed by the single candidate that scored highest during the
search (its score comes from the games that selected it, so it is
optimistic).

Memory grows with --pop, --games and --final-games (one number per candidate or
game): sizes the machine cannot hold are refused up front.`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			gameSpec, netBackend := new(string), new(string)
			nGames, iters, pop, evalGames, seed := new(int), new(int), new(int), new(int), new(uint64)
			asJSON := new(bool)
			spec.Table{
				gameOption(gameSpec, "tetrislink", "tune knows tetrislink and tetrislink:players=N"),
				spec.Int("games", nGames, 200, 1, maxGames, "games per fitness evaluation"),
				spec.Int("iters", iters, 20, 0, maxGames, "optimiser iterations"),
				spec.Int("pop", pop, 8, 2, maxGames, "candidates per iteration"),
				spec.Int("final-games", evalGames, 2000, 1, maxGames, "games for the final evaluation"),
				seedOption(seed, ""),
				backendOption(netBackend, agentBackendNote),
				jsonOption(asJSON, "the result; progress goes to stderr"),
			}.Flags(fs)
			aliasFlag(fs, "eval", "final-games") // an agent's eval= is its leaf evaluator
			return func(e *env, args []string) error {
				if _, err := agentEnv(*netBackend, e.Stderr); err != nil {
					return err
				}
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				gg, err := newGame(*gameSpec)
				if err != nil {
					return err
				}
				g, ok := gg.(*tetrislink.Game)
				if !ok {
					return usagef("--game %s: tune only knows the Tetris Link heuristic (use --game tetrislink)", *gameSpec)
				}
				// Each iteration plays --pop x --games games: bound the
				// whole run as arena and stats bound theirs.
				if total := float64(*iters)*float64(*pop)*float64(*nGames) + float64(*evalGames); total > maxGames {
					return usagef("--iters %d --pop %d --games %d --final-games %d make %.3g games in all; the limit is %d (fewer iterations or games)", *iters, *pop, *nGames, *evalGames, total, maxGames)
				}
				// Tune holds --pop candidates (weights and fitness, 40
				// bytes each) and one float64 per game of an evaluation.
				var m memEstimate
				m.add("candidates", 40*float64(*pop))
				m.add("game results", 8*float64(max(*nGames, *evalGames)))
				if err := m.check(fmt.Sprintf("--pop %d --games %d --final-games %d", *pop, *nGames, *evalGames)); err != nil {
					return err
				}
				res := tetrislink.Tune(g, tetrislink.TuneConfig{Games: *nGames, Iters: *iters, Pop: *pop, FinalGames: *evalGames, Seed: *seed}, func(line string) {
					if *asJSON {
						fmt.Fprintln(e.Stderr, line)
					} else {
						fmt.Fprintln(e.Stdout, line)
					}
				})
				ci := arena.Wilson(res.Rate*float64(res.EvalGames), res.EvalGames)
				res.Lo, res.Hi = ci.Lo, ci.Hi
				if *asJSON {
					return writeJSON(e.Stdout, res)
				}
				fmt.Fprintf(e.Stdout, "tuned weights (final mean) %s (connect/group/block/points): score rate %.1f%% [%.1f, %.1f] (95%% CI) against user %s over %d fresh games\n",
					res.Mean, 100*res.Rate, 100*res.Lo, 100*res.Hi, res.User, res.EvalGames)
				if res.BestCandidate != "" {
					fmt.Fprintf(e.Stdout, "best single candidate %s: scored %.1f%% over %d games in iteration %d (the games that selected it: optimistic)\n",
						res.BestCandidate, 100*res.BestFitness, res.Games, res.BestIter)
				}
				return nil
			}
		},
	})
}
