package zero

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/fleet"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/selfplay"
)

// An asynchronous fleet run has the workers play its evaluation matches
// (fleet.Trainer.Evaluate): the same tournaments, game for game, as
// r.match plays in this process (arena.PlayGames seeds game k of a match
// from the match's seed and k wherever it is played), so the scores and
// matches of the iteration's record are the ones an in-process
// evaluation would write. Each result is on disk (evalDir/iter-NNNN.json,
// rewritten atomically) before the trainer acknowledges it: a killed run
// queues only the games still missing. The rest of the evaluation (the
// network alone against the baselines, the solver set) runs in the
// trainer, in the evaluation goroutine of the pipeline (async.go).

// evalDir holds the evaluation results the workers sent, per iteration.
const evalDir = "evaluation"

// fleetEval reports whether the evaluation matches are played by the
// fleet's workers: in an asynchronous fleet run.
func (r *runner) fleetEval() bool { return r.trainer != nil && r.cfg.Async }

// matchResult is one evaluation match's score and games.
type matchResult struct {
	sc Score
	ms []Match
}

// evalFile is what evalDir/iter-NNNN.json holds: per match, the job the
// workers played and the results received so far.
type evalFile struct {
	Matches []evalFileMatch `json:"matches"`
}

type evalFileMatch struct {
	Job     fleet.EvalJob            `json:"job"`
	Results map[int]fleet.EvalResult `json:"results"` // by schedule index
}

// fleetMatches has the workers play iteration i's matches against
// opponents (the previous network, then the baselines) and returns each
// match's score and games, as r.match would.
func (r *runner) fleetMatches(ctx context.Context, i int, opponents []string) ([]matchResult, error) {
	players := r.g.NumPlayers()
	files := map[string]string{}
	entrant := func(name string) (fleet.EvalAgent, error) {
		it, ok := netIter(name)
		if !ok {
			return fleet.EvalAgent{Spec: name}, nil
		}
		_, net := r.checkpoint(it)
		sum, err := fileSHA(net)
		if err != nil {
			return fleet.EvalAgent{}, err
		}
		files[filepath.Base(net)] = net
		return fleet.EvalAgent{Spec: r.azSpec(fleet.NetToken), Network: filepath.Base(net), NetworkSHA256: sum}, nil
	}
	me, err := entrant(iterName(i))
	if err != nil {
		return nil, err
	}
	// The jobs, and the results a killed session left on disk for the
	// same jobs.
	path := r.path(evalDir, iterName(i)+".json")
	var stored evalFile
	if _, err := readJSON(path, &stored); err != nil {
		return nil, err
	}
	var ef evalFile
	var seatNames [][]string
	for k, opp := range opponents {
		them, err := entrant(opp)
		if err != nil {
			return nil, err
		}
		_, names := seatAgents(players, [2]string{}, [2]string{iterName(i), opp})
		job := fleet.EvalJob{Run: r.fleetRun, Iteration: i, Match: k, Game: r.g.Spec(), Games: r.cfg.EvalGames,
			Seed: games.DeriveSeed(r.cfg.Seed, 1<<20+uint64(i)), Semantics: selfplay.Semantics}
		job.Agents = append(job.Agents, me)
		for range len(names) - 1 {
			job.Agents = append(job.Agents, them)
		}
		m := evalFileMatch{Job: job, Results: map[int]fleet.EvalResult{}}
		if k < len(stored.Matches) && sameEvalJob(stored.Matches[k].Job, job) {
			m.Results = stored.Matches[k].Results
		}
		ef.Matches = append(ef.Matches, m)
		seatNames = append(seatNames, names)
	}
	if n := ef.results(); n > 0 {
		r.logf("  evaluation: %d games' results already on disk (%s)", n, path)
	}
	jobs := make([]fleet.EvalJob, len(ef.Matches))
	for k, m := range ef.Matches {
		jobs[k] = m.Job
	}
	total := len(opponents) * r.cfg.EvalGames
	var mu sync.Mutex // guards ef
	have := func(match, index int) bool {
		mu.Lock()
		defer mu.Unlock()
		_, ok := ef.Matches[match].Results[index]
		return ok
	}
	st, err := r.trainer.Evaluate(ctx, jobs, files, have, func(res fleet.EvalResult) error {
		mu.Lock()
		defer mu.Unlock()
		ef.Matches[res.Match].Results[res.Index] = res
		r.opt.Status(fmt.Sprintf("iteration %d evaluation (fleet): %d/%d games", i, ef.results(), total))
		return writeJSON(path, ef)
	})
	if err != nil {
		return nil, err
	}
	if st.Invalid+st.Mismatched+st.Bad > 0 {
		r.logf("  evaluation (fleet): dropped %d invalid results, %d of another self-play version, %d unreadable", st.Invalid, st.Mismatched, st.Bad)
	}
	out := make([]matchResult, len(ef.Matches))
	for k, m := range ef.Matches {
		specs := make([]string, len(m.Job.Agents))
		for a, ag := range m.Job.Agents {
			specs[a] = ag.Spec
		}
		results := make([]arena.GameResult, 0, m.Job.Games)
		for idx := range m.Job.Games { // one table: the match's agents are one game's seats
			res, ok := m.Results[idx]
			if !ok {
				return nil, fmt.Errorf("evaluation match %d: game %d has no result", k, idx)
			}
			results = append(results, res.GameResult())
		}
		tr, err := arena.Rate(r.g.Spec(), specs, results, arena.RateOptions{Seed: m.Job.Seed, GamesPerTable: m.Job.Games})
		if err != nil {
			return nil, fmt.Errorf("evaluation match %d: %w", k, err)
		}
		sc, ms := score(tr, seatNames[k], opponents[k], r.cfg.EvalGames)
		out[k] = matchResult{sc, ms}
	}
	return out, nil
}

// results counts the results in f.
func (f *evalFile) results() int {
	n := 0
	for _, m := range f.Matches {
		n += len(m.Results)
	}
	return n
}

// sameEvalJob reports whether two jobs are the same match.
func sameEvalJob(a, b fleet.EvalJob) bool {
	return a.Run == b.Run && a.Iteration == b.Iteration && a.Match == b.Match && a.Game == b.Game && a.Games == b.Games &&
		a.Seed == b.Seed && a.Semantics == b.Semantics && slices.Equal(a.Agents, b.Agents)
}
