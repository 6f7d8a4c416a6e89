package tetrislink

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/canopy-go/canopy/games"
)

// TuneConfig sets the cross-entropy search of Tune.
type TuneConfig struct {
	Games      int    // games per fitness evaluation (>= 1)
	Iters      int    // optimiser iterations (>= 0)
	Pop        int    // candidates per iteration (>= 2)
	FinalGames int    // games for the final evaluation of the mean (>= 1)
	Seed       uint64 // every game's seed derives from it
}

// TuneStep records one iteration of the optimiser.
type TuneStep struct {
	Iter        int       `json:"iter"`
	Mean        []float64 `json:"mean"`
	Sigma       []float64 `json:"sigma"`
	BestFitness float64   `json:"best_fitness"`
	BestWeights string    `json:"best_weights"`
}

// TuneResult is what Tune found. Lo and Hi, the 95% interval of Rate, are
// left for the caller (the interval's home is package arena, above this
// one).
type TuneResult struct {
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
	History       []TuneStep `json:"history"`
}

// Tune optimises the heuristic's four weights against UserWeights with the
// cross-entropy method: each iteration samples c.Pop weight vectors from a
// normal distribution (clipped to [0, RandomWeightMax], rounded to 0.01),
// scores each over c.Games games (ScoreRate, the same seeds for every
// candidate of an iteration) and refits the mean and spread to the best
// quarter. The final mean is then scored on c.FinalGames fresh games.
// progress, when not nil, receives one line per iteration. The result
// depends only on g and c, not on scheduling.
func Tune(g *Game, c TuneConfig, progress func(string)) TuneResult {
	rng := games.NewRand(c.Seed)
	mean := UserWeights
	sigma := [4]float64{4, 4, 4, 4}
	nElite := max(2, c.Pop/4)
	res := TuneResult{Game: g.Spec(), Seed: c.Seed, Games: c.Games, Iters: c.Iters, Pop: c.Pop,
		User: UserWeights.String(), EvalGames: c.FinalGames}
	type cand struct {
		w   Weights
		fit float64
	}
	for it := range c.Iters {
		cands := make([]cand, c.Pop)
		for i := range cands {
			for k := range 4 {
				v := mean[k] + sigma[k]*rng.NormFloat64()
				cands[i].w[k] = math.Round(100*math.Min(RandomWeightMax, math.Max(0, v))) / 100
			}
		}
		base := c.Seed<<32 + uint64(it+1)<<20
		for i := range cands {
			cands[i].fit = ScoreRate(g, cands[i].w, c.Games, base)
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
		step := TuneStep{Iter: it + 1, Mean: round2(mean[:]), Sigma: round2(sigma[:]), BestFitness: cands[0].fit, BestWeights: cands[0].w.String()}
		res.History = append(res.History, step)
		if res.BestCandidate == "" || step.BestFitness > res.BestFitness {
			res.BestCandidate, res.BestFitness, res.BestIter = step.BestWeights, step.BestFitness, step.Iter
		}
		if progress != nil {
			progress(fmt.Sprintf("iter %d/%d: best %s scores %.1f%% over %d games; mean %v sigma %v",
				it+1, c.Iters, step.BestWeights, 100*step.BestFitness, c.Games, step.Mean, step.Sigma))
		}
	}
	var best Weights // the final mean, rounded
	for k := range 4 {
		best[k] = math.Round(100*mean[k]) / 100
	}
	// Fresh seeds, disjoint from every iteration's.
	res.Rate = ScoreRate(g, best, c.FinalGames, c.Seed<<32+uint64(c.Iters+1)<<20+1<<19)
	res.Mean, res.Weights = best.String(), best[:]
	return res
}

func round2(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Round(100*x) / 100
	}
	return out
}

// ScoreRate plays n games of w against UserWeights (w takes seat i mod
// players in game i, the user weights the other seats) on GOMAXPROCS
// goroutines and returns w's mean of (return+1)/2. Game i uses seeds derived
// from base+i, so the result does not depend on scheduling.
func ScoreRate(g *Game, w Weights, n int, base uint64) float64 {
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
			players := make([]*Heuristic, np)
			for i := range next {
				seat := i % np
				for p := range players {
					pw := UserWeights
					if p == seat {
						pw = w
					}
					players[p] = NewHeuristic(pw, false, (base+uint64(i))*8+uint64(p))
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
