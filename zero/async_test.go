package zero

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/fleet"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
)

func tinyAsync() Config {
	c := tiny()
	c.Iterations = 3
	c.Async, c.ReplayRatio = true, 2
	return c
}

// startWorkers runs n in-process fleet workers against the server at
// addr until the returned function is called.
func startWorkers(t *testing.T, addr string, n int) (stop func() []*fleet.Worker) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	ws := make([]*fleet.Worker, n)
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, err := fleet.Connect(ctx, "nats://"+addr, fleet.Security{}, fmt.Sprint("test worker ", k), func(string, ...any) {})
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("worker %d: %v", k, err)
				}
				return
			}
			defer nc.Close()
			w, err := fleet.NewWorker(nc, fleet.WorkerOptions{Name: "canopy", Backend: "cpu", Trees: 3, Cache: t.TempDir(), Report: -1})
			if err != nil {
				t.Error(err)
				return
			}
			ws[k] = w
			if err := w.Run(ctx); err != nil {
				t.Errorf("worker %d: %v", k, err)
			}
		}()
	}
	return func() []*fleet.Worker {
		cancel()
		wg.Wait()
		return ws
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// checkAsyncRun checks a finished asynchronous run of c in dir: every
// iteration has its record, a training of ReplayRatio samples per new
// position, and all its games on disk once, each played by network i-2
// or i-1 as origins.jsonl says.
func checkAsyncRun(t *testing.T, dir string, c Config) {
	t.Helper()
	recs, err := (&runner{dir: dir}).records()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != c.Iterations {
		t.Fatalf("%d iteration records, want %d", len(recs), c.Iterations)
	}
	r := &runner{dir: dir, cfg: c}
	for _, rec := range recs {
		i := rec.Iteration
		spDir := r.path(selfplayDir, iterName(i))
		var m selfplay.Manifest
		if ok, err := readJSON(filepath.Join(spDir, selfplay.ManifestName), &m); !ok || err != nil {
			t.Fatalf("iteration %d's manifest: %v", i, err)
		}
		if m.Totals.Games != c.Games {
			t.Errorf("iteration %d: %d games on disk, want %d", i, m.Totals.Games, c.Games)
		}
		if want := asyncSteps(c.ReplayRatio, m.Totals.Positions, c.Train.Batch); rec.Train.Steps != want {
			t.Errorf("iteration %d: %d training steps, want %d (ratio %g, %d new positions, batch %d)", i, rec.Train.Steps, want, c.ReplayRatio, m.Totals.Positions, c.Train.Batch)
		}
		allowed := map[string]string{}
		for k := max(0, i-1-c.ahead()); k <= i-1; k++ {
			_, play := r.checkpoint(k)
			sum, err := fileSHA(play)
			if err != nil {
				t.Fatal(err)
			}
			allowed[sum] = iterName(k)
		}
		f, err := os.Open(filepath.Join(spDir, originsName))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var o gameOrigin
			if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
				t.Fatal(err)
			}
			if allowed[o.Network] == "" {
				t.Errorf("iteration %d: game %d played by network %.12s, not one of %s-%s", i, o.ID, o.Network, iterName(max(0, i-1-c.ahead())), iterName(i-1))
			}
			seen[o.ID] = true
		}
		f.Close()
		if len(seen) != c.Games {
			t.Errorf("iteration %d: origins of %d games, want %d", i, len(seen), c.Games)
		}
	}
}

// An asynchronous run with an embedded server and two in-process
// workers completes its iterations (each publishing a network the
// next iteration's games are played with), every game on disk once,
// trained at the replay ratio. A few seconds on 2 cores.
func TestAsyncRun(t *testing.T) {
	addr := freeAddr(t)
	stop := startWorkers(t, addr, 2)
	dir := t.TempDir()
	c := tinyAsync()
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := Run(ctx, dir, c, Options{Log: &log, Fleet: &Fleet{URL: "embedded", Listen: addr, AckWait: 2 * time.Second}})
	ws := stop()
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	checkAsyncRun(t, dir, c)
	var games int64
	for _, w := range ws {
		if w != nil {
			g, _, _, _ := w.Counts()
			games += g
		}
	}
	if games < int64(c.Iterations*c.Games) {
		t.Errorf("the workers published %d games, want at least %d", games, c.Iterations*c.Games)
	}
	if !strings.Contains(log.String(), "now played with network") {
		t.Logf("no iteration switched networks mid-way (timing):\n%s", log.String())
	}
}

// An asynchronous run interrupted while the second iteration trains and
// the third's games are played resumes where it stopped and finishes
// with every game once.
func TestAsyncRunResumes(t *testing.T) {
	addr := freeAddr(t)
	stop := startWorkers(t, addr, 2)
	defer stop()
	dir := t.TempDir()
	c := tinyAsync()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fl := &Fleet{URL: "embedded", Listen: addr, AckWait: 2 * time.Second}
	// Stop the first session once iteration 2's training has started.
	rctx, interrupt := context.WithCancel(ctx)
	log := &watchWriter{match: "iteration 2/3: training", hit: interrupt}
	err := Run(rctx, dir, c, Options{Log: log, Fleet: fl})
	if err == nil {
		t.Fatalf("the interrupted run finished:\n%s", log.String())
	}
	// Iteration 1's record waits for its evaluation, which no longer
	// holds up iteration 2's training: it may or may not be written.
	if n, _ := Finished(dir); n > 1 {
		t.Fatalf("%d iterations finished before the interruption, want at most 1:\n%s", n, log.String())
	}
	var log2 bytes.Buffer
	if err := Run(ctx, dir, c, Options{Log: &log2, Fleet: fl}); err != nil {
		t.Fatalf("%v\n%s", err, log2.String())
	}
	checkAsyncRun(t, dir, c)
}

// watchWriter keeps what is written and calls hit once when a write
// contains match.
type watchWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	match string
	hit   func()
	done  bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done && bytes.Contains(p, []byte(w.match)) {
		w.done = true
		w.hit()
	}
	return w.buf.Write(p)
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// checkFleetEvaluation checks that every iteration of the finished
// asynchronous run of c in dir was evaluated by the workers with the
// results an in-process evaluation of the same networks gives: the same
// scores and matches in the record, and the same games (seats, returns,
// length, moves by seat) as arena.Tournament plays in this process.
func checkFleetEvaluation(t *testing.T, dir string, c Config) {
	t.Helper()
	recs, err := (&runner{dir: dir}).records()
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{dir: dir, cfg: c, g: games.MustNew(c.Game),
		opt: Options{Log: io.Discard, Status: func(string) {}, Agents: agent.Env{}.With(engine.NewPool(engine.PoolOptions{Backend: c.Backend}))}}
	for _, rec := range recs {
		i := rec.Iteration
		var ef evalFile
		if ok, err := readJSON(r.path(evalDir, iterName(i)+".json"), &ef); !ok || err != nil {
			t.Fatalf("iteration %d: no evaluation results from the workers (%v)", i, err)
		}
		local, err := r.evaluate(context.Background(), i, i-1)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(local.Scores, rec.Eval.Scores) || !reflect.DeepEqual(local.Matches, rec.Eval.Matches) {
			t.Errorf("iteration %d: the workers' evaluation\n%+v\n%+v\ndiffers from the in-process one\n%+v\n%+v", i, rec.Eval.Scores, rec.Eval.Matches, local.Scores, local.Matches)
		}
		opponents := append([]string{iterName(i - 1)}, c.Baselines...)
		if len(ef.Matches) != len(opponents) {
			t.Fatalf("iteration %d: %d matches on disk, want %d", i, len(ef.Matches), len(opponents))
		}
		for k, opp := range opponents {
			agents, _ := seatAgents(r.g.NumPlayers(), [2]string{r.spec(iterName(i)), r.spec(opp)}, [2]string{})
			res, err := arena.Tournament(context.Background(), r.g, arena.TournamentConfig{Agents: agents, Env: r.opt.Agents,
				Games: c.EvalGames, Parallel: c.EvalGames, Seed: games.DeriveSeed(c.Seed, 1<<20+uint64(i)), Bootstrap: -1})
			if err != nil {
				t.Fatal(err)
			}
			m := ef.Matches[k]
			if len(m.Results) != len(res.Games) {
				t.Fatalf("iteration %d match %d: %d results, want %d", i, k, len(m.Results), len(res.Games))
			}
			for idx, want := range res.Games {
				got := m.Results[idx]
				want.Think = nil
				if !reflect.DeepEqual(got.GameResult(), want) {
					t.Errorf("iteration %d match %d game %d: the worker played %+v, this process %+v", i, k, idx, got.GameResult(), want)
				}
				if got.Origin.Worker == "" {
					t.Errorf("iteration %d match %d game %d: no worker named", i, k, idx)
				}
			}
		}
	}
}

// The evaluation of an asynchronous fleet run is played by the workers,
// game for game as in this process; a run stopped with part of an
// iteration's evaluation results on disk resumes with them (only the
// games missing are queued) and ends with the same results.
func TestAsyncFleetEvaluation(t *testing.T) {
	addr := freeAddr(t)
	stop := startWorkers(t, addr, 2)
	defer stop()
	dir := t.TempDir()
	c := tinyAsync()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fl := &Fleet{URL: "embedded", Listen: addr, AckWait: 2 * time.Second}
	// Stop the first session once a result of iteration 2's evaluation
	// is on disk.
	rctx, interrupt := context.WithCancel(ctx)
	var once sync.Once
	status := func(line string) {
		if strings.HasPrefix(line, "iteration 2 evaluation (fleet): ") {
			once.Do(interrupt)
		}
	}
	var log1 bytes.Buffer
	err := Run(rctx, dir, c, Options{Log: &log1, Status: status, Fleet: fl})
	if err == nil {
		t.Fatalf("the interrupted run finished:\n%s", log1.String())
	}
	var ef evalFile
	if ok, err := readJSON(filepath.Join(dir, evalDir, iterName(2)+".json"), &ef); !ok || err != nil || ef.results() == 0 {
		t.Fatalf("no evaluation result of iteration 2 on disk after the interruption (%v):\n%s", err, log1.String())
	}
	t.Logf("%d of iteration 2's %d evaluation results on disk at the interruption", ef.results(), (1+len(c.Baselines))*c.EvalGames)
	var log2 bytes.Buffer
	if err := Run(ctx, dir, c, Options{Log: &log2, Fleet: fl}); err != nil {
		t.Fatalf("%v\n%s", err, log2.String())
	}
	if !strings.Contains(log2.String(), "results already on disk") {
		t.Errorf("the resumed run did not take up iteration 2's %d evaluation results:\n%s", ef.results(), log2.String())
	}
	checkAsyncRun(t, dir, c)
	checkFleetEvaluation(t, dir, c)
	if ws := stop(); len(ws) > 0 {
		var evals int64
		for _, w := range ws {
			if w != nil {
				evals += w.EvalGames()
			}
		}
		if want := int64(c.Iterations * c.EvalGames * (1 + len(c.Baselines))); evals < want {
			t.Errorf("the workers played %d evaluation games, want at least %d", evals, want)
		}
	}
}

// With Ahead 2, iteration i's games are queued once network i-3 exists:
// iteration 3's self-play starts from the starting network (its
// manifest names iter-0000), and its games are of networks 0 to 2.
func TestAsyncAhead(t *testing.T) {
	addr := freeAddr(t)
	stop := startWorkers(t, addr, 2)
	defer stop()
	dir := t.TempDir()
	c := tinyAsync()
	c.Ahead = 2
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var log bytes.Buffer
	if err := Run(ctx, dir, c, Options{Log: &log, Fleet: &Fleet{URL: "embedded", Listen: addr, AckWait: 2 * time.Second}}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	checkAsyncRun(t, dir, c)
	r := &runner{dir: dir, cfg: c}
	var m selfplay.Manifest
	if ok, err := readJSON(filepath.Join(r.path(selfplayDir, iterName(3)), selfplay.ManifestName), &m); !ok || err != nil {
		t.Fatalf("iteration 3's manifest: %v", err)
	}
	if _, start := r.checkpoint(0); m.Network != start {
		t.Errorf("iteration 3's self-play started from %s, want %s", m.Network, start)
	}
	c.Async, c.ReplayRatio = false, 0
	if err := c.Check(); err == nil || !strings.Contains(err.Error(), "ahead") {
		t.Errorf("ahead = 2 without async: %v, want an error naming ahead", err)
	}
}
