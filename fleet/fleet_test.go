package fleet

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/tictactoe"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// testFleet is an embedded server with a trainer, for tests.
type testFleet struct {
	srv *Server
	nc  *nats.Conn
	tr  *Trainer
	dir string
	log *syncBuffer // the trainer's
}

func startFleet(t testing.TB, s Setup) *testFleet {
	t.Helper()
	return startFleetWith(t, ServerOptions{}, s)
}

// startFleetWith starts a fleet on a server with so (its store and
// address set here).
func startFleetWith(t testing.TB, so ServerOptions, s Setup) *testFleet {
	t.Helper()
	dir := t.TempDir()
	so.StoreDir, so.Listen = filepath.Join(dir, "nats"), "127.0.0.1:0"
	srv, err := StartServer(so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	nc := connect(t, srv.URL())
	if s.Name == "" {
		s.Name = "test"
	}
	if s.Run == "" {
		s.Run = "r1"
	}
	log := &syncBuffer{}
	tr, err := NewTrainer(context.Background(), nc, s, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	tr.FetchWait = 100 * time.Millisecond
	return &testFleet{srv: srv, nc: nc, tr: tr, dir: dir, log: log}
}

func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := Connect(context.Background(), url, Security{}, "test", func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// tinyJob writes a random tictactoe network and returns a job of n games
// with few simulations.
func tinyJob(t testing.TB, dir string, n int) (Job, string) {
	t.Helper()
	g := games.MustNew("tictactoe")
	net, _, err := nets.OpenNet("init", g)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "iter-0000.safetensors")
	if err := net.Save(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st := selfplay.DefaultSettings()
	st.Sims = 8
	return Job{Run: "r1", Iteration: 1, Game: g.Spec(), Settings: st, Seed: 7, Games: n,
		Network: filepath.Base(path), NetworkSHA256: sha(data)}, path
}

func openOutput(t testing.TB, dir string, job Job) *selfplay.Output {
	t.Helper()
	g := games.MustNew(job.Game)
	o, err := selfplay.OpenOutput(dir, selfplay.Manifest{Game: job.Game, ObsShape: g.ObservationShape(), Actions: g.NumActions(),
		Network: job.Network, NetworkSHA256: job.NetworkSHA256, Backend: "fleet", Settings: job.Settings, Seed: job.Seed, Games: job.Games}, true)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// localGames plays job's games in this process, the reference.
func localGames(t testing.TB, job Job, netPath string) map[int]*selfplay.GameRecord {
	t.Helper()
	g := games.MustNew(job.Game)
	net, _, err := nets.OpenNet(netPath, g)
	if err != nil {
		t.Fatal(err)
	}
	be, _, err := nets.OpenBackendSpec("cpu", net, nets.BackendOptions{MaxBatch: 64})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(g, be, engine.Options{Leaves: job.Settings.Leaves, Batch: 64, Slots: engine.SlotsFor(16, job.Settings.Leaves)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	out := map[int]*selfplay.GameRecord{}
	var mu sync.Mutex
	err = selfplay.Run(context.Background(), e, selfplay.Config{Settings: job.Settings, Seed: job.Seed, NumGames: job.Games, Trees: 16,
		OnGame: func(r *selfplay.GameRecord) error { mu.Lock(); out[r.ID] = r; mu.Unlock(); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func startWorker(t testing.TB, ctx context.Context, url string, trees int) (*Worker, chan error) {
	t.Helper()
	w, err := NewWorker(connect(t, url), WorkerOptions{Name: "test", Backend: "cpu", Trees: trees, Cache: t.TempDir(), Report: -1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return w, done
}

func TestTrainerCollectsWorkersGames(t *testing.T) {
	f := startFleet(t, Setup{AckWait: 2 * time.Second})
	job, netPath := tinyJob(t, f.dir, 24)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wctx, stopWorkers := context.WithCancel(ctx)
	var dones []chan error
	for range 2 {
		_, d := startWorker(t, wctx, f.srv.URL(), 4)
		dones = append(dones, d)
	}
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	got := map[int]*selfplay.GameRecord{}
	st, err := f.tr.SelfPlay(ctx, job, netPath, o, func(fg *Game, _ Stats) {
		r, from := fg.Record, fg.Origin
		if from.Worker == "" || !strings.HasPrefix(from.Backend, "cpu") || from.Build == "" {
			t.Errorf("game %d: origin %+v, want the worker's name, backend and build", r.ID, from)
		}
		if got[r.ID] != nil {
			t.Errorf("game %d handed over twice", r.ID)
		}
		got[r.ID] = r
	})
	if err != nil {
		t.Fatal(err)
	}
	stopWorkers()
	for _, d := range dones {
		if err := <-d; err != nil {
			t.Errorf("worker: %v", err)
		}
	}
	if st.Games != job.Games || o.Manifest().Totals.Games != job.Games || len(o.Pending()) != 0 {
		t.Fatalf("stats %+v, manifest %+v, pending %v; want all %d games once", st, o.Manifest().Totals, o.Pending(), job.Games)
	}
	want := localGames(t, job, netPath)
	for id, r := range want {
		if !sameRecord(got[id], r) {
			t.Errorf("game %d from the fleet differs from in-process self-play's", id)
		}
	}
}

// TestDeadWorkerDoesNotBlock has a "worker" take tasks and die with them
// (never acknowledging, never renewing): a live worker still finishes the
// iteration once the dead one's tasks come back after AckWait.
func TestDeadWorkerDoesNotBlock(t *testing.T) {
	f := startFleet(t, Setup{AckWait: time.Second})
	job, netPath := tinyJob(t, f.dir, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	res := f.selfPlayInBackground(ctx, job, netPath, o)
	// The dead worker: takes 6 tasks as soon as they are queued.
	takeTasks(t, ctx, connect(t, f.srv.URL()), 6)
	wctx, stop := context.WithCancel(ctx)
	_, done := startWorker(t, wctx, f.srv.URL(), 4)
	r := <-res
	stop()
	if err := <-done; err != nil {
		t.Errorf("worker: %v", err)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := o.Manifest().Totals.Games; got != job.Games || r.st.Games != job.Games {
		t.Fatalf("%d games on disk, %d received; want %d", got, r.st.Games, job.Games)
	}
}

// TestStaleAndDuplicateGamesDropped publishes games by hand: one of
// another run, one of another iteration, and the same game twice under
// different message ids (so that JetStream's window keeps both): the
// trainer writes each wanted game once and drops the rest.
func TestStaleAndDuplicateGamesDropped(t *testing.T) {
	f := startFleet(t, Setup{})
	job, netPath := tinyJob(t, f.dir, 3)
	want := localGames(t, job, netPath)
	js, err := jetstream.New(f.nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	obs := len(want[0].Obs) / want[0].Positions()
	send := func(run string, iter, id int, msgID string) {
		data, err := EncodeGame(nil, &Game{Run: run, Iteration: iter, NetworkSHA256: job.NetworkSHA256, Semantics: selfplay.Semantics, Record: want[id]}, obs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "test.games.1", data, jetstream.WithMsgID(msgID)); err != nil {
			t.Fatal(err)
		}
	}
	send("other", 1, 0, "a")
	send(job.Run, 2, 0, "b")
	send(job.Run, 1, 0, "c")
	send(job.Run, 1, 0, "d") // the same game again, past the id window
	send(job.Run, 1, 0, "c") // dropped by JetStream
	send(job.Run, 1, 1, "e")
	send(job.Run, 1, 2, "f")
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	st, err := f.tr.SelfPlay(ctx, job, netPath, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st != (Stats{Games: 3, Duplicates: 1, Stale: 2}) {
		t.Errorf("stats %+v, want 3 games, 1 duplicate, 2 stale", st)
	}
	if m := o.Manifest(); m.Totals.Games != 3 || m.Totals.Positions != want[0].Positions()+want[1].Positions()+want[2].Positions() {
		t.Errorf("manifest totals %+v", m.Totals)
	}
	// Everything was acknowledged: nothing is left for a restarted trainer.
	checkGamesAcked(t, ctx, f)
}

// checkGamesAcked fails when game messages are still in f's stream 5 s
// after an iteration. The trainer acknowledges (Ack, Term) without
// waiting for the server's reply (a lost one means a redelivery, which
// the id check drops), so the server may still be processing the last
// ones when SelfPlay returns: it is given a moment.
func checkGamesAcked(t *testing.T, ctx context.Context, f *testFleet) {
	t.Helper()
	var left uint64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, err := f.tr.h.games.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if left = info.State.Msgs; left == 0 || time.Now().After(deadline) {
			break
		}
	}
	if left != 0 {
		t.Errorf("%d game messages left in the stream 5 s after the iteration", left)
	}
}

// cloneRecord is a deep copy of r.
func cloneRecord(r *selfplay.GameRecord) *selfplay.GameRecord {
	c := *r
	c.Obs, c.Policy, c.Legal = slices.Clone(r.Obs), slices.Clone(r.Policy), slices.Clone(r.Legal)
	c.Value, c.RootQ, c.Ply, c.Returns = slices.Clone(r.Value), slices.Clone(r.RootQ), slices.Clone(r.Ply), slices.Clone(r.Returns)
	return &c
}

// widen returns rows of width w from src (rows of width w-1), each with
// pad appended.
func widen[T any](src []T, w int, pad T) []T {
	var out []T
	for lo := 0; lo < len(src); lo += w - 1 {
		out = append(out, src[lo:lo+w-1]...)
		out = append(out, pad)
	}
	return out
}

// TestBadGamesDropped publishes well-formed game messages that do not fit
// the job's game (other shapes, NaN or out-of-range values, other
// lengths) under the ids the trainer waits for, before the real games:
// the trainer drops each with one log line, counts it, never writes it
// and acknowledges it for good, then takes the real games.
func TestBadGamesDropped(t *testing.T) {
	f := startFleet(t, Setup{})
	var log bytes.Buffer
	f.tr.log = &log
	job, netPath := tinyJob(t, f.dir, 3)
	want := localGames(t, job, netPath)
	js, err := jetstream.New(f.nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	obs := len(want[0].Obs) / want[0].Positions()
	actions := len(want[0].Policy) / want[0].Positions()
	n := 0
	send := func(id int, r *selfplay.GameRecord, obs int) {
		t.Helper()
		n++
		data, err := EncodeGame(nil, &Game{Run: job.Run, Iteration: job.Iteration, NetworkSHA256: job.NetworkSHA256, Semantics: selfplay.Semantics, Record: r}, obs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "test.games.1", data, jetstream.WithMsgID(fmt.Sprint("m", n))); err != nil {
			t.Fatal(err)
		}
	}
	nan := float32(math.NaN())
	bad := []struct {
		what  string
		edit  func(r *selfplay.GameRecord)
		obsTo int // the observation size sent (0: the game's)
	}{
		{"an observation too large", func(r *selfplay.GameRecord) { r.Obs = widen(r.Obs, obs+1, 0) }, obs + 1},
		{"an observation too small", func(r *selfplay.GameRecord) { r.Obs = r.Obs[:len(r.Obs)-r.Positions()] }, obs - 1},
		{"one action more", func(r *selfplay.GameRecord) {
			r.Policy, r.Legal = widen(r.Policy, actions+1, 0), widen(r.Legal, actions+1, 0)
		}, 0},
		{"a NaN observation", func(r *selfplay.GameRecord) { r.Obs[3] = nan }, 0},
		{"a NaN value", func(r *selfplay.GameRecord) { r.Value[0] = nan }, 0},
		{"a value of 2", func(r *selfplay.GameRecord) { r.Value[len(r.Value)-1] = 2 }, 0},
		{"an infinite root value", func(r *selfplay.GameRecord) { r.RootQ[0] = float32(math.Inf(1)) }, 0},
		{"a NaN policy", func(r *selfplay.GameRecord) { r.Policy[1] = nan }, 0},
		{"a legal entry of 2", func(r *selfplay.GameRecord) { r.Legal[0] = 2 }, 0},
		{"three returns", func(r *selfplay.GameRecord) { r.Returns = append(r.Returns, 0) }, 0},
		{"a return of 2 (JSON has no NaN)", func(r *selfplay.GameRecord) { r.Returns[0] = 2 }, 0},
		{"a negative ply", func(r *selfplay.GameRecord) { r.Ply[0] = -1 }, 0},
	}
	for k, b := range bad {
		r := cloneRecord(want[k%3])
		b.edit(r)
		o := obs
		if b.obsTo != 0 {
			o = b.obsTo
		}
		send(r.ID, r, o)
	}
	for id := range 3 {
		send(id, want[id], obs)
	}
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	got := map[int]*selfplay.GameRecord{}
	st, err := f.tr.SelfPlay(ctx, job, netPath, o, func(g *Game, _ Stats) { got[g.Record.ID] = g.Record })
	if err != nil {
		t.Fatal(err)
	}
	if st != (Stats{Games: 3, Invalid: len(bad)}) {
		t.Errorf("stats %+v, want 3 games and %d invalid", st, len(bad))
	}
	for id, r := range want {
		if !sameRecord(got[id], r) {
			t.Errorf("game %d written is not the real game", id)
		}
	}
	if lines := strings.Count(log.String(), "dropped invalid game"); lines != len(bad) {
		t.Errorf("%d lines about invalid games, want one per game (%d):\n%s", lines, len(bad), log.String())
	}
	// The shards on disk pass self-play's own checks on resume.
	if _, err := selfplay.OpenOutput(filepath.Join(f.dir, "sp"), o.Manifest(), true); err != nil {
		t.Fatal(err)
	}
	// Acknowledged for good: nothing is left to deliver again.
	checkGamesAcked(t, ctx, f)
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTrainerBacksOffWhenStoreLost disables the server's JetStream while
// the trainer collects (as a server does when its store fails; a
// cluster without a leader answers alike), so that every fetch fails at
// once: for 2 s the trainer must ask the server a few times with growing
// waits and log the failure a few times, not thousands.
func TestTrainerBacksOffWhenStoreLost(t *testing.T) {
	f := startFleet(t, Setup{})
	var log syncBuffer
	f.tr.log = &log
	job, netPath := tinyJob(t, f.dir, 4)
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.tr.SelfPlay(ctx, job, netPath, o, nil)
		done <- err
	}()
	for !strings.Contains(log.String(), "games queued") {
		select {
		case err := <-done:
			t.Fatalf("SelfPlay returned early: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	time.Sleep(300 * time.Millisecond) // collecting by now: fetching games
	// What a server does when its store fails: JetStream goes away and
	// every request to it is answered at once with no responders.
	if err := f.srv.ns.DisableJetStream(); err != nil {
		t.Fatal(err)
	}
	// The messages the server receives (the trainer's pull requests;
	// nothing else publishes meanwhile) and the lines the trainer logs.
	inMsgs := func() int64 {
		v, err := f.srv.ns.Varz(nil)
		if err != nil {
			t.Fatal(err)
		}
		return v.InMsgs
	}
	before, msgs0 := strings.Count(log.String(), "\n"), inMsgs()
	const window = 2 * time.Second
	time.Sleep(window)
	lines, n := strings.Count(log.String(), "\n")-before, inMsgs()-msgs0
	select {
	case err := <-done:
		t.Fatalf("SelfPlay returned while the store was away: %v", err)
	default:
	}
	// The store back, the trainer fetches again (within backoffMax).
	if err := f.srv.ns.EnableJetStream(&server.JetStreamConfig{StoreDir: filepath.Join(f.dir, "nats")}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(2 * backoffMax)
	for !strings.Contains(log.String(), "works again") {
		select {
		case err := <-done:
			t.Fatalf("SelfPlay returned: %v\n%s", err, log.String())
		case <-deadline:
			t.Fatalf("the trainer did not fetch again %s after the store came back:\n%s", 2*backoffMax, log.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("SelfPlay did not return 10 s after its context ended")
	}
	t.Logf("%d messages to the server and %d log lines in %s", n, lines, window)
	defer func() { t.Logf("trainer's log:\n%s", log.String()) }()
	if n > 20 || lines > 5 {
		t.Errorf("%d messages to the server and %d log lines in %s without a store: want a few of each (back off, rate-limit)\n%.1000s", n, lines, window, log.String())
	}
}

// TestInvalidGameIsPlayedAgain has a broken "worker" take every task,
// publish an invalid copy of game 0 and the real games 1 and 2, and
// acknowledge all three tasks: the trainer must queue game 0 again, for
// a sound worker to play, rather than wait for it for ever.
func TestInvalidGameIsPlayedAgain(t *testing.T) {
	f := startFleet(t, Setup{AckWait: 2 * time.Second})
	job, netPath := tinyJob(t, f.dir, 3)
	want := localGames(t, job, netPath)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	res := f.selfPlayInBackground(ctx, job, netPath, o)
	js, tasks := takeTasks(t, ctx, f.nc, 3)
	obs := len(want[0].Obs) / want[0].Positions()
	for id := range 3 {
		r := want[id]
		if id == 0 {
			r = cloneRecord(r)
			r.Value[0] = float32(math.NaN())
		}
		data, err := EncodeGame(nil, &Game{Run: job.Run, Iteration: job.Iteration, NetworkSHA256: job.NetworkSHA256, Semantics: selfplay.Semantics, Record: r}, obs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "test.games.1", data, jetstream.WithMsgID(msgID(job.Run, job.Iteration, id))); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range tasks {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}
	r := f.finishWithWorker(t, ctx, res, "the trainer still waits for game 0 30 s after its only copy was dropped")
	if r.st.Games != 3 || r.st.Invalid != 1 || o.Manifest().Totals.Games != 3 {
		t.Fatalf("stats %+v, %d games on disk; want 3 games and 1 invalid", r.st, o.Manifest().Totals.Games)
	}
}

// selfPlayResult is what a trainer's SelfPlay call returned.
type selfPlayResult struct {
	st  Stats
	err error
}

// selfPlayInBackground runs f's trainer on job and sends its result.
func (f *testFleet) selfPlayInBackground(ctx context.Context, job Job, netPath string, o *selfplay.Output) <-chan selfPlayResult {
	res := make(chan selfPlayResult, 1)
	go func() {
		st, err := f.tr.SelfPlay(ctx, job, netPath, o, nil)
		res <- selfPlayResult{st, err}
	}()
	return res
}

// finishWithWorker starts a worker of 2 trees, waits up to 30 s for the
// trainer's result on res (failing with stuck, which says what the trainer
// still waits for), stops the worker and fails on either's error.
func (f *testFleet) finishWithWorker(t *testing.T, ctx context.Context, res <-chan selfPlayResult, stuck string) selfPlayResult {
	t.Helper()
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	_, done := startWorker(t, wctx, f.srv.URL(), 2)
	var r selfPlayResult
	select {
	case r = <-res:
	case <-time.After(30 * time.Second):
		t.Fatal(stuck)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("worker: %v", err)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r
}

// takeTasks takes n tasks from the workers' consumer, as a hand-driven
// worker on nc would, once the trainer has made it; it returns nc's
// JetStream context too, for the games the test then publishes.
func takeTasks(t *testing.T, ctx context.Context, nc *nats.Conn, n int) (jetstream.JetStream, []jetstream.Msg) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(ctx, "test-tasks", workersConsumer)
	for err != nil && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
		cons, err = js.Consumer(ctx, "test-tasks", workersConsumer)
	}
	var tasks []jetstream.Msg
	for len(tasks) < n && ctx.Err() == nil {
		mb, err := cons.Fetch(n-len(tasks), jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range mb.Messages() {
			tasks = append(tasks, m)
		}
	}
	return js, tasks
}
