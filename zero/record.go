package zero

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/internal/atomicfile"
	"github.com/canopy-go/canopy/nets"
)

// Record is one finished iteration: the line it contributes to
// metrics.jsonl.
type Record struct {
	Iteration int            `json:"iteration"`
	Started   time.Time      `json:"started"`
	Finished  time.Time      `json:"finished"`
	SelfPlay  SelfPlayRecord `json:"selfplay"`
	Train     TrainRecord    `json:"train"`
	Eval      EvalRecord     `json:"eval"`
	// Elo is the network's rating over every evaluation game of the run
	// so far (rolling: recomputed each iteration), anchored at
	// iteration 0 = 0: the Bayesian Bradley-Terry log-strength (Gaussian
	// prior, which keeps all-win records finite) on the Elo scale
	// (x 400/ln 10), with its 95% Laplace interval.
	Elo *Rating `json:"elo,omitempty"`
}

// SelfPlayRecord summarises an iteration's self-play.
type SelfPlayRecord struct {
	Games       int     `json:"games"`
	Positions   int     `json:"positions"`
	NewGames    int     `json:"new_games"` // played in the session that finished it
	Seconds     float64 `json:"seconds"`   // of that session
	EvalsPerSec float64 `json:"evals_per_sec"`
}

// TrainRecord summarises an iteration's training.
type TrainRecord struct {
	Positions     int       `json:"positions"` // replay window
	Steps         int       `json:"steps"`
	Samples       int64     `json:"samples"`
	Epochs        float64   `json:"epochs"`
	FirstLoss     nets.Loss `json:"first_loss"`
	FinalLoss     nets.Loss `json:"final_loss"`
	SamplesPerSec float64   `json:"samples_per_sec"`
	Seconds       float64   `json:"seconds"`
	// HeldOut is the loss of the network training starts from (the
	// previous iteration's) on up to HeldOutLimit of this iteration's new
	// positions, which it never trained on (train.HeldOutLoss: as the
	// network plays, no L2). Far above FinalLoss, it says training
	// memorises games rather than learning positions. Absent from
	// iterations trained before it was recorded.
	HeldOut          *nets.Loss `json:"held_out,omitempty"`
	HeldOutPositions int        `json:"held_out_positions,omitempty"`
	// SkippedShards names the shards of the window training skipped
	// (Options.SkipBad), each with the reason.
	SkippedShards []string `json:"skipped_shards,omitempty"`
	// ReplayRatio is the training samples (steps x batch) per position
	// of this iteration's new self-play; 0 without new positions.
	ReplayRatio float64 `json:"replay_ratio,omitempty"`
}

// HeldOutLimit is the most new positions the held-out loss is measured on.
const HeldOutLimit = 2048

// EvalRecord is an iteration's evaluation.
type EvalRecord struct {
	Previous string  `json:"previous"` // the network self-play used
	Scores   []Score `json:"scores"`   // against Previous, then each baseline
	Matches  []Match `json:"matches"`
	Accepted bool    `json:"accepted"` // passed the gate (always, without one)
	// Alone: the network alone (no search) against each baseline, when
	// Config.EvalPolicyGames > 0. Its games are not in Matches (nor in
	// the Elo), which rate the searching agents.
	Alone []Score `json:"alone,omitempty"`
	// Solver set (connect4): share of optimal moves, and what uniformly
	// random moves would score on the same positions.
	SolverPolicy *float64 `json:"solver_policy,omitempty"`
	SolverSearch *float64 `json:"solver_search,omitempty"`
	SolverRandom *float64 `json:"solver_random,omitempty"`
	// Seconds is the evaluation's wall time (with Options.OverlapEval it
	// ran beside the next iteration's self-play and training). Absent
	// from iterations evaluated before it was recorded.
	Seconds float64 `json:"seconds,omitempty"`
}

// Rating is an Elo value with its interval.
type Rating struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

func (r Record) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "loss %.3f (policy %.3f, value %.3f)", r.Train.FinalLoss.Total, r.Train.FinalLoss.Policy, r.Train.FinalLoss.Value)
	for _, s := range r.Eval.Scores {
		fmt.Fprintf(&b, ", vs %s %.0f%%", s.Opponent, 100*s.Score)
	}
	for _, s := range r.Eval.Alone {
		fmt.Fprintf(&b, ", alone vs %s %.0f%%", s.Opponent, 100*s.Score)
	}
	if r.Eval.SolverPolicy != nil {
		fmt.Fprintf(&b, ", solver %.0f%%/%.0f%%", 100**r.Eval.SolverPolicy, 100**r.Eval.SolverSearch)
	}
	if r.Elo != nil {
		fmt.Fprintf(&b, ", Elo %+.0f", r.Elo.Value)
	}
	return b.String()
}

// rollingElo rates every network and baseline over all evaluation games
// of recs and sets each record's Elo, anchored at iteration 0.
func rollingElo(game string, recs []Record, seed uint64) error {
	index := map[string]int{}
	var names []string
	var results []arena.GameResult
	agentOf := func(n string) int {
		k, ok := index[n]
		if !ok {
			k = len(names)
			index[n] = k
			names = append(names, n)
		}
		return k
	}
	for _, r := range recs {
		for _, m := range r.Eval.Matches {
			for _, gr := range ratedGames(m) {
				for _, n := range gr.names {
					gr.res.Seats = append(gr.res.Seats, agentOf(n))
				}
				results = append(results, gr.res)
			}
		}
	}
	if len(names) < 2 {
		return nil
	}
	res, err := arena.Rate(game, names, results, arena.RateOptions{Seed: seed})
	if err != nil {
		return err
	}
	const scale = 400 / math.Ln10
	anchor := 0.0
	if k, ok := index[iterName(0)]; ok {
		anchor = res.BradleyTerry[k].Value
	}
	for i := range recs {
		if k, ok := index[iterName(recs[i].Iteration)]; ok {
			e := res.BradleyTerry[k]
			recs[i].Elo = &Rating{Value: scale * (e.Value - anchor), Lo: scale * (e.Lo - anchor), Hi: scale * (e.Hi - anchor)}
		}
	}
	return nil
}

// ratedGame is a game as the rating sees it: its seats' names and
// returns (seats filled in by rollingElo).
type ratedGame struct {
	names []string
	res   arena.GameResult
}

// ratedGames returns m as the rating takes it. A game of P > 2 players
// that evaluation plays as one agent against P-1 copies of another
// (zero's play) counts as P-1 two-player comparisons of that agent with
// each copy, ordered by their returns: the ratings model distinct agents
// per table, and these are the comparisons its score counts.
func ratedGames(m Match) []ratedGame {
	count := map[string]int{}
	for _, n := range m.Seats {
		count[n]++
	}
	if len(count) == len(m.Seats) {
		return []ratedGame{{names: m.Seats, res: arena.GameResult{Returns: m.Returns}}}
	}
	focal := -1
	for s, n := range m.Seats {
		if count[n] == 1 {
			focal = s
		}
	}
	if focal < 0 || len(count) != 2 {
		return nil // not a shape evaluation plays
	}
	var out []ratedGame
	for s, n := range m.Seats {
		if s != focal {
			out = append(out, ratedGame{names: []string{m.Seats[focal], n},
				res: arena.GameResult{Returns: []float64{m.Returns[focal], m.Returns[s]}}})
		}
	}
	return out
}

// publish recomputes the rolling Elo, rewrites metrics.jsonl (one record
// per finished iteration) and the plots.
func (r *runner) publish(recs []Record) error {
	if err := rollingElo(r.g.Spec(), recs, r.cfg.Seed); err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, rec := range recs {
		line, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := atomicfile.WriteFile(r.path(MetricsName), buf.Bytes()); err != nil {
		return err
	}
	return writePlots(r.path(plotsDir), r.g.Spec(), recs)
}
