package zero

import (
	"github.com/canopy-go/canopy/plots"
)

// writePlots draws the run's charts (plots.ZeroFigures: loss terms, Elo
// with intervals, scores against the baselines, solver accuracy) as SVG
// and PNG files in dir, each written atomically.
func writePlots(dir, game string, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	_, err := plots.WriteFiles(dir, plots.ZeroFigures(game, iterations(recs)))
	return err
}

// iterations is what the charts use of recs.
func iterations(recs []Record) []plots.Iteration {
	its := make([]plots.Iteration, len(recs))
	for i, r := range recs {
		l := r.Train.FinalLoss
		its[i] = plots.Iteration{
			Iteration:    r.Iteration,
			Loss:         plots.Loss{Total: l.Total, Policy: l.Policy, Value: l.Value, L2: l.L2},
			SolverPolicy: r.Eval.SolverPolicy, SolverSearch: r.Eval.SolverSearch, SolverRandom: r.Eval.SolverRandom,
		}
		its[i].Scores, its[i].Alone = plotScores(r.Eval.Scores), plotScores(r.Eval.Alone)
		if h := r.Train.HeldOut; h != nil {
			its[i].HeldOut = &plots.Loss{Total: h.Total, Policy: h.Policy, Value: h.Value, L2: h.L2}
		}
		if e := r.Elo; e != nil {
			its[i].Elo = &plots.Interval{Value: e.Value, Lo: e.Lo, Hi: e.Hi}
		}
	}
	return its
}

func plotScores(scores []Score) []plots.Score {
	var out []plots.Score
	for _, s := range scores {
		out = append(out, plots.Score{Opponent: s.Opponent, Interval: plots.Interval{Value: s.Score, Lo: s.Lo, Hi: s.Hi}})
	}
	return out
}
