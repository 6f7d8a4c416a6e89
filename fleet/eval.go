package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Evaluation on the workers. An evaluation match is an arena tournament
// (arena.TournamentConfig: agents, games per table, seed); the trainer
// queues one task per game of its schedule still missing, on the tasks
// stream (subject N.tasks.eval.ITER) that workers take self-play tasks
// from, and workers play each with arena.PlayGames, which seeds game i
// from (seed, i) exactly as an in-process arena.Tournament does: the
// results are the ones the trainer would have had, game for game. A
// result travels as its own message (evalMagic) on stream N-results
// (subject N.results.ITER, the trainer's consumer "evaluator"); the
// trainer checks it against the match's schedule and game (fault 1's
// rules: seats, one finite return in [-1, 1] per player, lengths), drops
// a bad one with one log line and queues its task again, and
// acknowledges a good one only after its record function has it on
// disk. A worker that cannot play a match (an agent that does not build)
// reports it (evalFailMagic) and Evaluate returns the error, as an
// in-process evaluation would.

// NetToken stands, in an EvalAgent's Spec, where the path of the
// agent's network file goes: the trainer's file in the trainer, the
// worker's cached copy (checked against NetworkSHA256) on a worker.
const NetToken = "{net}"

// EvalAgent is an entrant of an evaluation match.
type EvalAgent struct {
	// Spec is the agent spec, NetToken standing for the network file.
	Spec string `json:"spec"`
	// Network names the object in N-nets holding the agent's network,
	// NetworkSHA256 its bytes' SHA-256; both empty for an agent without
	// a network (a baseline).
	Network       string `json:"network,omitempty"`
	NetworkSHA256 string `json:"network_sha256,omitempty"`
}

// EvalJob is one evaluation match of an iteration: the tournament
// arena.TournamentConfig{Agents, Games, Seed} of game Game.
type EvalJob struct {
	Run       string      `json:"run"`
	Iteration int         `json:"iteration"`
	Match     int         `json:"match"` // the match's index in the iteration's evaluation
	Game      string      `json:"game"`
	Agents    []EvalAgent `json:"agents"`
	Games     int         `json:"games"` // per table
	Seed      uint64      `json:"seed"`
	// Semantics is the trainer's selfplay.Semantics: search semantics
	// change evaluation games too; results of another are dropped.
	Semantics int `json:"semantics"`
}

// Specs returns the agents' specs with their networks at the paths
// files gives (network name -> path).
func (j EvalJob) Specs(files map[string]string) ([]string, error) {
	specs := make([]string, len(j.Agents))
	for k, a := range j.Agents {
		specs[k] = a.Spec
		if a.Network == "" {
			continue
		}
		f, ok := files[a.Network]
		if !ok {
			return nil, fmt.Errorf("fleet: evaluation agent %d: no file for network %s", k+1, a.Network)
		}
		specs[k] = replaceAll(a.Spec, NetToken, f)
	}
	return specs, nil
}

func replaceAll(s, old, new string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte(old), []byte(new)))
}

// schedule returns the job's seating, game by game.
func (j EvalJob) schedule(g games.Game) ([][]int, error) {
	return arena.Schedule(g.NumPlayers(), len(j.Agents), j.Games)
}

// EvalResult is one evaluation game's result, as a worker sends it.
type EvalResult struct {
	Run       string `json:"run"`
	Iteration int    `json:"iteration"`
	Match     int    `json:"match"`
	Index     int    `json:"index"` // the game's schedule index
	// Seats, Returns, Length and Moves are the arena.GameResult's (its
	// move times, which depend on the machine, are left out).
	Seats     []int     `json:"seats"`
	Returns   []float64 `json:"returns"`
	Length    int       `json:"length"`
	Moves     []int     `json:"moves,omitempty"`
	Semantics int       `json:"semantics"`
	Origin    Origin    `json:"origin"`
}

// GameResult is r as arena reports a game (without move times).
func (r EvalResult) GameResult() arena.GameResult {
	return arena.GameResult{Seats: r.Seats, Returns: r.Returns, Length: r.Length, Moves: r.Moves}
}

// evalMagic starts a result message; evalFailMagic a worker's report
// of a match it cannot play.
const (
	evalMagic     = "CNPYEVR1"
	evalFailMagic = "CNPYEVF1"
)

// evalFailure is a worker's report of an evaluation game it could not
// play (its agents do not build, its game failed).
type evalFailure struct {
	Run       string `json:"run"`
	Iteration int    `json:"iteration"`
	Match     int    `json:"match"`
	Index     int    `json:"index"`
	Origin    Origin `json:"origin"`
	Error     string `json:"error"`
}

// evalMsgID is the Nats-Msg-Id of an evaluation task and of its result.
func evalMsgID(run string, iter, match, index int) string {
	return run + ".eval." + strconv.Itoa(iter) + "." + strconv.Itoa(match) + "." + strconv.Itoa(index)
}

// check reports why r cannot be game r.Index of job's match (whose
// schedule is sched, of a game of players players), or nil.
func (j EvalJob) check(r *EvalResult, sched [][]int, players int) error {
	switch {
	case r.Index < 0 || r.Index >= len(sched):
		return fmt.Errorf("game %d: the match has %d games", r.Index, len(sched))
	case !slices.Equal(r.Seats, sched[r.Index]):
		return fmt.Errorf("game %d: seats %v, the schedule has %v", r.Index, r.Seats, sched[r.Index])
	case len(r.Returns) != players:
		return fmt.Errorf("game %d: %d returns for a game of %d players", r.Index, len(r.Returns), players)
	case r.Length < 0:
		return fmt.Errorf("game %d: length %d", r.Index, r.Length)
	case r.Moves != nil && len(r.Moves) != players:
		return fmt.Errorf("game %d: moves of %d seats for a game of %d players", r.Index, len(r.Moves), players)
	}
	for p, v := range r.Returns {
		if !(v >= -1 && v <= 1) {
			return fmt.Errorf("game %d: seat %d's return is %v, outside [-1, 1]", r.Index, p, v)
		}
	}
	sum := 0
	for p, m := range r.Moves {
		if m < 0 {
			return fmt.Errorf("game %d: seat %d made %d moves", r.Index, p, m)
		}
		sum += m
	}
	if r.Moves != nil && sum != r.Length {
		return fmt.Errorf("game %d: %d moves by seat, length %d", r.Index, sum, r.Length)
	}
	return nil
}

// EvalStats count what an Evaluate call received.
type EvalStats struct {
	Results    int // results recorded
	Duplicates int // results already recorded
	Stale      int // results of another run or of an earlier iteration
	Bad        int // messages that do not parse (terminated)
	Invalid    int // results that do not fit their match (terminated, queued again)
	Mismatched int // results of another self-play semantics (terminated, queued again)
}

// Evaluate has the workers play the games of the matches jobs (all of
// one iteration, jobs[k].Match == k) that have does not report as
// recorded, and passes each result to record, which must have it on disk
// when it returns nil (the result's message is acknowledged then; an
// error stops Evaluate). files maps each network named in the jobs to
// its file, stored in N-nets unless there already. It returns when every
// game has a result, or with ctx's error (the tasks stay queued for a
// later call), or with the error of a worker that could not play a game.
//
// Evaluate may run in a goroutine of its own beside SelfPlay (one
// Evaluate at a time).
func (t *Trainer) Evaluate(ctx context.Context, jobs []EvalJob, files map[string]string, have func(match, index int) bool, record func(EvalResult) error) (EvalStats, error) {
	var st EvalStats
	if len(jobs) == 0 {
		return st, nil
	}
	iter, run := jobs[0].Iteration, jobs[0].Run
	g, err := games.New(jobs[0].Game)
	if err != nil {
		return st, fmt.Errorf("fleet: the evaluation's game: %w", err)
	}
	scheds := make([][][]int, len(jobs))
	need := map[[2]int]bool{}
	for k := range jobs {
		j := &jobs[k]
		if j.Semantics == 0 {
			j.Semantics = selfplay.Semantics
		}
		if j.Match != k || j.Iteration != iter || j.Run != run || j.Game != jobs[0].Game {
			return st, fmt.Errorf("fleet: evaluation match %d: want match %d of run %s, iteration %d, game %s", j.Match, k, run, iter, jobs[0].Game)
		}
		if scheds[k], err = j.schedule(g); err != nil {
			return st, fmt.Errorf("fleet: evaluation match %d: %w", k, err)
		}
		for _, a := range j.Agents {
			if a.Network == "" {
				continue
			}
			f, ok := files[a.Network]
			if !ok {
				return st, fmt.Errorf("fleet: evaluation match %d: no file for network %s", k, a.Network)
			}
			if err := t.publishNet(ctx, Job{Network: a.Network, NetworkSHA256: a.NetworkSHA256}, f); err != nil {
				return st, err
			}
		}
		for i := range scheds[k] {
			if !have(k, i) {
				need[[2]int{k, i}] = true
			}
		}
	}
	// queue purges the iteration's evaluation tasks left on the server
	// and queues those of need under a new generation of message ids: as
	// for self-play tasks (Trainer.queue), a server killed may hold tasks
	// its consumer no longer delivers, whose ids would drop the new ones
	// as duplicates.
	queue := func() error {
		h := t.hs()
		if err := h.tasks.Purge(ctx, jetstream.WithPurgeSubject(h.n.evalTaskSubject(iter))); err != nil {
			return fmt.Errorf("fleet: removing iteration %d's earlier evaluation tasks: %w", iter, err)
		}
		again := generation()
		for key := range need {
			if err := t.queueEval(ctx, jobs[key[0]], key[1], again); err != nil {
				return err
			}
		}
		return nil
	}
	if err := queue(); err != nil {
		return st, err
	}
	t.logf("  fleet: %d evaluation games of iteration %d queued for the workers", len(need), iter)
	var lost backoff
	checked := time.Now()
	// As in collect: no result for 3 AckWaits and nothing left on the
	// server for the workers means stranded or lost tasks.
	lastResult, probed := time.Now(), time.Time{}
	strandedAfter := 3 * t.ackWait()
	var cons jetstream.Consumer // looked up again after a failure
	for len(need) > 0 {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		if err := t.ls().err(); err != nil {
			return st, err
		}
		var err error
		if cons == nil {
			h := t.hs()
			cons, err = h.js.Consumer(ctx, h.n.results(), evalConsumer)
		}
		var batch jetstream.MessageBatch
		if err == nil {
			batch, err = cons.Fetch(64, jetstream.FetchMaxWait(t.FetchWait))
		}
		if err != nil {
			cons = nil
			if ctx.Err() != nil {
				continue
			}
			lost.fail(ctx, t.logf, "fetching evaluation results", err)
			if time.Since(checked) >= goneEvery || notYet(err) {
				checked = time.Now()
				if t.gone(ctx) {
					// The server lost the fleet's store: make it again
					// (SelfPlay may be doing the same) and queue what is
					// missing, under new message ids.
					if err := t.recreate(ctx); err != nil {
						if errors.Is(err, ErrNameInUse) {
							return st, err
						}
						continue
					}
					if err := queue(); err != nil {
						return st, err
					}
				}
			}
			continue
		}
		for m := range batch.Messages() {
			data := m.Data()
			if bytes.HasPrefix(data, []byte(evalFailMagic)) {
				var f evalFailure
				if err := decodeJSON(data, evalFailMagic, &f); err != nil {
					st.Bad++
					t.logf("  fleet: dropped message %s: %v", m.Subject(), err)
					m.Term()
					continue
				}
				m.Ack()
				if f.Run != run || f.Iteration != iter || !need[[2]int{f.Match, f.Index}] {
					continue
				}
				return st, fmt.Errorf("fleet: worker %s (%s) could not play evaluation game %d of match %d (%v): %s",
					f.Origin.Worker, f.Origin.Backend, f.Index+1, f.Match, specsOf(jobs[f.Match]), f.Error)
			}
			var r EvalResult
			if !bytes.HasPrefix(data, []byte(evalMagic)) {
				err = errors.New("not an evaluation result (bad magic)")
			} else {
				err = decodeJSON(data, evalMagic, &r)
			}
			if err != nil {
				st.Bad++
				t.logf("  fleet: dropped message %s: %v", m.Subject(), err)
				m.Term()
				continue
			}
			key := [2]int{r.Match, r.Index}
			switch {
			case r.Run != run || r.Iteration < iter:
				st.Stale++
				m.Ack()
				continue
			case r.Iteration > iter:
				// A later iteration's (queued by a session killed
				// later than this one's evaluation): kept for its turn.
				m.NakWithDelay(time.Second)
				continue
			case r.Match < 0 || r.Match >= len(jobs):
				st.Invalid++
				t.logf("  fleet: dropped evaluation result %s: match %d, the iteration has %d", m.Subject(), r.Match, len(jobs))
				m.Term()
				continue
			case !need[key]:
				st.Duplicates++
				m.Ack()
				continue
			case r.Semantics != jobs[r.Match].Semantics:
				st.Mismatched++
				t.logf("  fleet: dropped evaluation game %d of match %d from worker %s: %s", r.Index, r.Match, r.Origin.Worker,
					semanticsAdvice(build(), jobs[r.Match].Semantics, r.Origin.Build, r.Semantics))
				t.requeueEval(ctx, jobs[r.Match], r.Index, m)
				m.Term()
				continue
			}
			if err := jobs[r.Match].check(&r, scheds[r.Match], g.NumPlayers()); err != nil {
				st.Invalid++
				t.logf("  fleet: dropped invalid evaluation result (match %d, %s): %v; queued it again", r.Match, m.Subject(), err)
				t.requeueEval(ctx, jobs[r.Match], r.Index, m)
				m.Term()
				continue
			}
			if err := record(r); err != nil {
				m.Nak()
				return st, err
			}
			delete(need, key)
			lastResult = time.Now()
			st.Results++
			m.Ack() // a lost ack means a redelivery, which need drops
			if ctx.Err() != nil {
				return st, ctx.Err() // the rest of the batch comes back after AckWait
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			cons = nil
			lost.fail(ctx, t.logf, "fetching evaluation results", err)
		} else {
			lost.ok(t.logf, "fetching evaluation results")
		}
		if len(need) > 0 && ctx.Err() == nil && time.Since(lastResult) >= strandedAfter && time.Since(probed) >= goneEvery {
			probed = time.Now()
			if t.stranded(ctx) {
				if err := queue(); err != nil {
					t.logf("  fleet: warning: cannot queue the %d missing evaluation games again: %v (retrying)", len(need), err)
				} else {
					t.logf("  fleet: no evaluation result for %s and nothing left on the server for the workers: queued the %d missing evaluation games again (their tasks were stranded or lost: a server restart?)",
						time.Since(lastResult).Round(time.Second), len(need))
					lastResult = time.Now()
				}
			}
		}
	}
	return st, nil
}

func specsOf(j EvalJob) []string {
	var s []string
	for _, a := range j.Agents {
		s = append(s, a.Spec)
	}
	return s
}

// queueEval queues game index of job's match, with message id suffix
// again (see task.Again).
func (t *Trainer) queueEval(ctx context.Context, job EvalJob, index int, again string) error {
	h := t.hs()
	body, err := json.Marshal(task{Run: job.Run, Iteration: job.Iteration, ID: index, Again: again, Eval: &job})
	if err != nil {
		return err
	}
	if _, err := h.js.Publish(ctx, h.n.evalTaskSubject(job.Iteration), body,
		jetstream.WithMsgID(evalMsgID(job.Run, job.Iteration, job.Match, index)+again)); err != nil {
		return fmt.Errorf("fleet: queueing evaluation tasks: %w", err)
	}
	return nil
}

// requeueEval queues game index of job's match again after its result
// message m was dropped (see requeue).
func (t *Trainer) requeueEval(ctx context.Context, job EvalJob, index int, m jetstream.Msg) {
	again := ".again." + strconv.FormatInt(time.Now().UnixNano(), 36)
	if md, err := m.Metadata(); err == nil {
		again = ".again." + strconv.FormatUint(md.Sequence.Stream, 10)
	}
	if err := t.queueEval(ctx, job, index, again); err != nil && ctx.Err() == nil {
		t.logf("  fleet: warning: cannot queue evaluation game %d again: %v (the next trainer start queues it)", index, err)
	}
}

// evalTask is an evaluation task in a worker's hands.
type evalTask struct {
	task
	m jetstream.Msg
}

// evaluate plays the evaluation tasks ts, match by match, publishing
// each game's result and then acknowledging its task.
func (w *Worker) evaluate(ctx context.Context, js jetstream.JetStream, ts []evalTask) error {
	var order []string
	groups := map[string][]evalTask{}
	for _, t := range ts {
		k := evalMsgID(t.Run, t.Iteration, t.Eval.Match, -1)
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], t)
	}
	// The matches waiting their turn keep their tasks too (evalMatch
	// renews those of the match in play).
	var cur atomic.Int32
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(max(w.ackWait/3, 100*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				for k := int(cur.Load()) + 1; k < len(order); k++ {
					for _, t := range groups[order[k]] {
						t.m.InProgress()
					}
				}
			}
		}
	}()
	for k, key := range order {
		cur.Store(int32(k))
		w.evalMatch(ctx, js, groups[key])
	}
	return nil
}

// evalMatch plays the tasks ts, all of one match.
func (w *Worker) evalMatch(ctx context.Context, js jetstream.JetStream, ts []evalTask) {
	job := *ts[0].Eval
	var mu sync.Mutex // guards held
	held := map[int]evalTask{}
	var indices []int
	for _, t := range ts {
		if _, ok := held[t.ID]; ok || t.Eval.Match != job.Match {
			t.m.NakWithDelay(time.Second) // a second copy: leave it a while
			continue
		}
		held[t.ID] = t
		indices = append(indices, t.ID)
	}
	take := func(i int) (evalTask, bool) {
		mu.Lock()
		defer mu.Unlock()
		t, ok := held[i]
		delete(held, i)
		return t, ok
	}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, t := range held {
			t.m.Nak() // unplayed: back to the queue for anyone
		}
	}()
	// A game that cannot be played is reported to the trainer, which
	// stops with the error (as an in-process evaluation does).
	failed := func(i int, err error) {
		t, ok := take(i)
		if !ok {
			return
		}
		w.logf("worker: evaluation game %d of iteration %d's match %d: %v", i+1, job.Iteration, job.Match, err)
		body, jerr := encodeJSON(evalFailMagic, evalFailure{Run: job.Run, Iteration: job.Iteration, Match: job.Match, Index: i,
			Origin: w.origin, Error: err.Error()})
		if jerr == nil {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, jerr = js.Publish(pctx, w.h.n.resultSubject(job.Iteration), body)
			cancel()
		}
		if jerr != nil {
			t.m.NakWithDelay(time.Minute)
			return
		}
		t.m.Term()
	}
	// Keep the tasks in hand from the start (a network may take a while
	// to download).
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	tick := time.NewTicker(max(w.ackWait/3, 100*time.Millisecond))
	defer tick.Stop()
	go func() {
		for {
			select {
			case <-pctx.Done():
				return
			case <-tick.C:
				mu.Lock()
				for _, t := range held {
					t.m.InProgress()
				}
				mu.Unlock()
			}
		}
	}()
	g, err := games.New(job.Game)
	if err != nil {
		for _, i := range indices {
			failed(i, err)
		}
		return
	}
	files := map[string]string{}
	for _, a := range job.Agents {
		if a.Network == "" {
			continue
		}
		path, err := w.fetchNetwork(ctx, a.Network, a.NetworkSHA256)
		if err != nil {
			if ctx.Err() == nil {
				w.logf("%v (the evaluation tasks go back to the queue)", err)
				for _, i := range indices {
					if t, ok := take(i); ok {
						t.m.NakWithDelay(time.Second)
					}
				}
			}
			return
		}
		files[a.Network] = path
	}
	specs, err := job.Specs(files)
	if err != nil {
		for _, i := range indices {
			failed(i, err)
		}
		return
	}
	t0 := time.Now()
	w.playSince.Store(t0.UnixNano())
	defer func() {
		w.playSince.Store(0)
		w.busyNs.Add(int64(time.Since(t0)))
	}()
	cfg := arena.TournamentConfig{Agents: specs, Env: agent.Env{}.With(w.pool), Games: job.Games, Seed: job.Seed, Parallel: len(indices)}
	err = arena.PlayGames(pctx, g, cfg, indices, func(i int, _ *arena.Record, gr arena.GameResult) error {
		r := EvalResult{Run: job.Run, Iteration: job.Iteration, Match: job.Match, Index: i, Seats: gr.Seats, Returns: gr.Returns,
			Length: gr.Length, Moves: gr.Moves, Semantics: selfplay.Semantics, Origin: w.origin}
		body, err := encodeJSON(evalMagic, r)
		if err != nil {
			return err
		}
		mu.Lock()
		again := held[i].Again
		mu.Unlock()
		for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
			_, err = js.Publish(ctx, w.h.n.resultSubject(job.Iteration), body, jetstream.WithMsgID(evalMsgID(job.Run, job.Iteration, job.Match, i)+again))
			if err == nil || ctx.Err() != nil || !transient(err) {
				break
			}
			w.logf("worker: publishing evaluation game %d: %v (retrying in %s)", i+1, err, wait)
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
		if err != nil {
			return err
		}
		w.evals.Add(1)
		if t, ok := take(i); ok {
			t.m.Ack()
		}
		return nil
	}, nil)
	if err != nil && ctx.Err() == nil {
		// The games not played yet fail with the first failure.
		mu.Lock()
		left := make([]int, 0, len(held))
		for i := range held {
			left = append(left, i)
		}
		mu.Unlock()
		for _, i := range left {
			failed(i, err)
		}
	}
}
