package main

import (
	"flag"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/tetrislink"
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
			gameSpec := fs.String("game", "tetrislink", "game spec (tetrislink, tetrislink:players=N)")
			nGames := fs.Int("games", 200, "games per fitness evaluation")
			iters := fs.Int("iters", 20, "optimiser iterations")
			pop := fs.Int("pop", 8, "candidates per iteration")
			evalGames := fs.Int("final-games", 2000, "games for the final evaluation")
			aliasFlag(fs, "eval", "final-games") // an agent's eval= is its leaf evaluator
			seed := fs.Uint64("seed", 1, "random seed")
			netBackend := agentBackendFlag(fs)
			asJSON := fs.Bool("json", false, "print the result as JSON (progress goes to stderr)")
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
				if *nGames < 1 || *iters < 0 || *pop < 2 || *evalGames < 1 {
					return usagef("--games and --final-games must be >= 1, --iters >= 0, --pop >= 2")
				}
				// Each iteration plays --pop x --games games: bound the
				// whole run as arena and stats bound theirs.
				if total := float64(*iters)*float64(*pop)*float64(*nGames) + float64(*evalGames); total > maxGames {
					return usagef("--iters %d --pop %d --games %d --final-games %d make %.3g games in all; the limit is %d (fewer iterations or games)", *iters, *pop, *nGames, *evalGames, total, maxGames)
				}
				// runTune holds --pop candidates (weights and fitness, 40
				// bytes each) and one float64 per game of an evaluation.
				var m memEstimate
				m.add("candidates", 40*float64(*pop))
				m.add("game results", 8*float64(max(*nGames, *evalGames)))
				if err := m.check(fmt.Sprintf("--pop %d --games %d --final-games %d", *pop, *nGames, *evalGames)); err != nil {
					return err
				}
				res := runTune(g, tuneConfig{games: *nGames, iters: *iters, pop: *pop, eval: *evalGames, seed: *seed}, func(line string) {
					if *asJSON {
						fmt.Fprintln(e.Stderr, line)
					} else {
						fmt.Fprintln(e.Stdout, line)
					}
				})
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

type tuneConfig struct {
	games, iters, pop, eval int
	seed                    uint64
}

// tuneStep records one iteration of the optimiser.
type tuneStep struct {
	Iter        int       `json:"iter"`
	Mean        []float64 `json:"mean"`
	Sigma       []float64 `json:"sigma"`
	BestFitness float64   `json:"best_fitness"`
	BestWeights string    `json:"best_weights"`
}

type tuneResult struct {
	Game  string `json:"game"`
	Seed  uint64 `json:"seed"`
	Games int    `json:"games_per_eval"`
	Iters int    `json:"iters"`
	Pop   int    `json:"pop"`
	User  string `json:"user_weights"`
	// Mean is the tuned result: the distribution's final mean, which
	// Weights, Rate, Lo and Hi describe (evaluated on EvalGames fresh
	// games).
	Mean      string    `json:"mean_weights"`
	Weights   []float64 `json:"weights"`
	Rate      float64   `json:"score_rate"`
	Lo        float64   `json:"ci_lo"`
	Hi        float64   `json:"ci_hi"`
	EvalGames int       `json:"eval_games"`
	// BestCandidate is the sampled candidate with the highest fitness
	// (BestFitness, over Games games in iteration BestIter); "" with no
	// iterations. Its fitness is optimistic: it is what selected it.
	BestCandidate string     `json:"best_candidate,omitempty"`
	BestFitness   float64    `json:"best_candidate_fitness,omitempty"`
	BestIter      int        `json:"best_candidate_iter,omitempty"`
	History       []tuneStep `json:"history"`
}

const tuneMaxWeight = tetrislink.RandomWeightMax

// runTune runs the cross-entropy method and evaluates its final mean.
func runTune(g *tetrislink.Game, c tuneConfig, progress func(string)) tuneResult {
	rng := games.NewRand(c.seed)
	mean := tetrislink.UserWeights
	sigma := [4]float64{4, 4, 4, 4}
	nElite := max(2, c.pop/4)
	res := tuneResult{Game: g.Spec(), Seed: c.seed, Games: c.games, Iters: c.iters, Pop: c.pop,
		User: tetrislink.UserWeights.String(), EvalGames: c.eval}
	type cand struct {
		w   tetrislink.Weights
		fit float64
	}
	for it := range c.iters {
		cands := make([]cand, c.pop)
		for i := range cands {
			for k := range 4 {
				v := mean[k] + sigma[k]*rng.NormFloat64()
				cands[i].w[k] = math.Round(100*math.Min(tuneMaxWeight, math.Max(0, v))) / 100
			}
		}
		base := c.seed<<32 + uint64(it+1)<<20
		for i := range cands {
			cands[i].fit = scoreRate(g, cands[i].w, c.games, base)
		}
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].fit > cands[j].fit })
		var m, sd [4]float64
		for _, e := range cands[:nElite] {
			for k := range 4 {
				m[k] += e.w[k] / float64(nElite)
			}
		}
		for _, e := range cands[:nElite] {
			for k := range 4 {
				sd[k] += (e.w[k] - m[k]) * (e.w[k] - m[k]) / float64(nElite)
			}
		}
		for k := range 4 {
			mean[k] = m[k]
			sigma[k] = math.Max(0.3, 0.7*math.Sqrt(sd[k])+0.3*sigma[k])
		}
		step := tuneStep{Iter: it + 1, Mean: round2(mean[:]), Sigma: round2(sigma[:]), BestFitness: cands[0].fit, BestWeights: cands[0].w.String()}
		res.History = append(res.History, step)
		if res.BestCandidate == "" || step.BestFitness > res.BestFitness {
			res.BestCandidate, res.BestFitness, res.BestIter = step.BestWeights, step.BestFitness, step.Iter
		}
		progress(fmt.Sprintf("iter %d/%d: best %s scores %.1f%% over %d games; mean %v sigma %v",
			it+1, c.iters, step.BestWeights, 100*step.BestFitness, c.games, step.Mean, step.Sigma))
	}
	var best tetrislink.Weights // the final mean, rounded
	for k := range 4 {
		best[k] = math.Round(100*mean[k]) / 100
	}
	// Fresh seeds, disjoint from every iteration's.
	rate := scoreRate(g, best, c.eval, c.seed<<32+uint64(c.iters+1)<<20+1<<19)
	lo, hi := wilson95(rate*float64(c.eval), c.eval)
	res.Mean, res.Weights, res.Rate, res.Lo, res.Hi = best.String(), best[:], rate, lo, hi
	return res
}

func round2(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Round(100*x) / 100
	}
	return out
}

// scoreRate plays n games of w against the user weights (w takes seat
// i mod players in game i, user weights the other seats) in parallel and
// returns w's mean of (return+1)/2. Game i uses seeds derived from base+i,
// so the result does not depend on scheduling.
func scoreRate(g *tetrislink.Game, w tetrislink.Weights, n int, base uint64) float64 {
	np := g.NumPlayers()
	out := make([]float64, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := g.NewState()
			ret := make([]float64, np)
			players := make([]*tetrislink.Heuristic, np)
			for i := range next {
				seat := i % np
				for p := range players {
					pw := tetrislink.UserWeights
					if p == seat {
						pw = w
					}
					players[p] = tetrislink.NewHeuristic(pw, false, (base+uint64(i))*8+uint64(p))
				}
				s.Reset()
				for !s.IsTerminal() {
					s.Apply(players[s.CurrentPlayer()].Choose(s))
				}
				s.Returns(ret)
				out[i] = (ret[seat] + 1) / 2
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	sum := 0.0
	for _, v := range out {
		sum += v
	}
	return sum / float64(n)
}

// wilson95 is the 95% Wilson score interval for k successes in n trials.
func wilson95(k float64, n int) (lo, hi float64) {
	const z = 1.959963984540054
	nf := float64(n)
	p := k / nf
	den := 1 + z*z/nf
	centre := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return math.Max(0, centre-half), math.Min(1, centre+half)
}
