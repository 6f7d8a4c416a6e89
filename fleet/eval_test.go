package fleet

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/nats-io/nats.go/jetstream"
)

// tinyEval returns an evaluation match of the network at netPath (job's)
// against random, games per table.
func tinyEval(job Job, netPath string, games int) (EvalJob, map[string]string) {
	ev := EvalJob{Run: job.Run, Iteration: job.Iteration, Game: job.Game, Games: games, Seed: 11, Semantics: selfplay.Semantics,
		Agents: []EvalAgent{{Spec: "az:net=" + NetToken + ",sims=4", Network: job.Network, NetworkSHA256: job.NetworkSHA256}, {Spec: "random"}}}
	return ev, map[string]string{job.Network: netPath}
}

// localEval plays ev's tournament in this process, the reference.
func localEval(t *testing.T, ev EvalJob, files map[string]string) []arena.GameResult {
	t.Helper()
	specs, err := ev.Specs(files)
	if err != nil {
		t.Fatal(err)
	}
	res, err := arena.Tournament(context.Background(), games.MustNew(ev.Game), arena.TournamentConfig{Agents: specs,
		Env: agent.Env{}.With(engine.NewPool(engine.PoolOptions{Backend: "cpu"})), Games: ev.Games, Seed: ev.Seed, Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	for k := range res.Games {
		res.Games[k].Think = nil
	}
	return res.Games
}

// publishJob publishes job (and its network) as SelfPlay would, without
// queueing its games: workers take tasks only once they have a job.
func (f *testFleet) publishJob(t *testing.T, ctx context.Context, job Job, netPath string) {
	t.Helper()
	if err := f.tr.publishNet(ctx, job, netPath); err != nil {
		t.Fatal(err)
	}
	job.Semantics = selfplay.Semantics
	data, _ := json.Marshal(job)
	if _, err := f.tr.hs().state.Put(ctx, jobKey, data); err != nil {
		t.Fatal(err)
	}
}

// Evaluation games played by workers are the games the same tournament
// plays in this process; results that do not fit the match (a return
// outside [-1, 1], other seats), that do not parse, or that are of
// another run are dropped, the wanted ones queued again (the bad
// worker acknowledged their tasks), and every game recorded exactly
// once.
func TestEvalResultsValidated(t *testing.T) {
	f := startFleet(t, Setup{AckWait: 2 * time.Second})
	job, netPath := tinyJob(t, f.dir, 1)
	ev, files := tinyEval(job, netPath, 4)
	want := localEval(t, ev, files)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f.publishJob(t, ctx, job, netPath)
	var mu sync.Mutex
	got := map[int]EvalResult{}
	recorded := 0
	type result struct {
		st  EvalStats
		err error
	}
	res := make(chan result, 1)
	go func() {
		st, err := f.tr.Evaluate(ctx, []EvalJob{ev}, files, func(int, int) bool { return false }, func(r EvalResult) error {
			mu.Lock()
			defer mu.Unlock()
			got[r.Index] = r
			recorded++
			return nil
		})
		res <- result{st, err}
	}()
	js, tasks := takeTasks(t, ctx, f.nc, 4)
	bad := []EvalResult{
		{Run: ev.Run, Iteration: ev.Iteration, Index: 0, Seats: want[0].Seats, Returns: []float64{2, -2}, Length: 1, Semantics: selfplay.Semantics},
		{Run: ev.Run, Iteration: ev.Iteration, Index: 1, Seats: []int{0, 1}, Returns: []float64{1, -1}, Length: 1, Semantics: selfplay.Semantics},
		{Run: "other", Iteration: ev.Iteration, Index: 2, Seats: want[2].Seats, Returns: want[2].Returns, Length: want[2].Length, Semantics: selfplay.Semantics},
	}
	if slices := want[1].Seats; slices[0] == 0 {
		t.Fatalf("game 1's seats %v: the test wants them other than [0 1]", slices)
	}
	for _, r := range bad {
		body, err := encodeJSON(evalMagic, r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "test.results.1", body, jetstream.WithMsgID(evalMsgID(r.Run, r.Iteration, 0, r.Index))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.Publish(ctx, "test.results.1", []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	// The hand-driven worker "finished" games 0 and 1 (their results
	// were bad) and hands back 2 and 3.
	for _, m := range tasks {
		var tk task
		if err := json.Unmarshal(m.Data(), &tk); err != nil {
			t.Fatal(err)
		}
		var err error
		if tk.ID < 2 {
			err = m.DoubleAck(ctx)
		} else {
			err = m.Nak()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	_, done := startWorker(t, wctx, f.srv.URL(), 2)
	var r result
	select {
	case r = <-res:
	case <-time.After(30 * time.Second):
		t.Fatalf("Evaluate still waits after 30 s:\n%s", f.log.String())
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.st.Invalid != 2 || r.st.Bad != 1 || r.st.Stale != 1 || r.st.Results != 4 || recorded != 4 {
		t.Errorf("stats %+v, %d recorded; want 2 invalid, 1 bad, 1 stale, 4 results recorded", r.st, recorded)
	}
	// All recorded: a second call (a restarted trainer) queues nothing.
	if st, err := f.tr.Evaluate(ctx, []EvalJob{ev}, files, func(int, int) bool { return true }, nil); err != nil || st.Results != 0 {
		t.Errorf("Evaluate with every result recorded: %+v, %v", st, err)
	}
	for i, w := range want {
		if g := got[i].GameResult(); !reflect.DeepEqual(g, w) {
			t.Errorf("game %d: the worker played %+v, this process %+v", i, g, w)
		}
	}
	if !strings.Contains(f.log.String(), "outside [-1, 1]") {
		t.Errorf("no log line about the bad return:\n%s", f.log.String())
	}
}

// A worker that cannot play an evaluation game (an agent that does not
// build) reports it, and Evaluate returns the error naming it.
func TestEvalFailureReported(t *testing.T) {
	f := startFleet(t, Setup{AckWait: 2 * time.Second})
	job, netPath := tinyJob(t, f.dir, 1)
	ev, files := tinyEval(job, netPath, 2)
	ev.Agents[1].Spec = "nosuchagent"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f.publishJob(t, ctx, job, netPath)
	_, done := startWorker(t, ctx, f.srv.URL(), 2)
	_, err := f.tr.Evaluate(ctx, []EvalJob{ev}, files, func(int, int) bool { return false }, func(EvalResult) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "nosuchagent") {
		t.Fatalf("Evaluate returned %v, want the worker's error naming the agent", err)
	}
	cancel()
	<-done
}

// FuzzEvalResult feeds the trainer's parse and check of evaluation
// results arbitrary messages: an error or a result that fits the match
// (its seats, returns in [-1, 1]), never a panic.
func FuzzEvalResult(f *testing.F) {
	g := games.MustNew("tictactoe")
	ev := EvalJob{Run: "r", Iteration: 1, Game: g.Spec(), Games: 4, Seed: 1, Agents: []EvalAgent{{Spec: "random"}, {Spec: "random"}}}
	sched, err := ev.schedule(g)
	if err != nil {
		f.Fatal(err)
	}
	for _, r := range []EvalResult{
		{Run: "r", Iteration: 1, Index: 1, Seats: sched[1], Returns: []float64{1, -1}, Length: 5, Moves: []int{3, 2}},
		{Run: "r", Iteration: 1, Index: 9, Seats: []int{0}, Returns: []float64{2}},
	} {
		b, _ := encodeJSON(evalMagic, r)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < len(evalMagic) {
			return
		}
		var r EvalResult
		if decodeJSON(data, evalMagic, &r) != nil {
			return
		}
		if ev.check(&r, sched, g.NumPlayers()) != nil {
			return
		}
		if !reflect.DeepEqual(r.Seats, sched[r.Index]) {
			t.Fatalf("accepted seats %v for game %d, the schedule has %v", r.Seats, r.Index, sched[r.Index])
		}
		for _, v := range r.Returns {
			if !(v >= -1 && v <= 1) {
				t.Fatalf("accepted return %v", v)
			}
		}
	})
}
