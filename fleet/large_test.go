package fleet

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/canopy-go/canopy/selfplay"
	"github.com/nats-io/nats.go/jetstream"
)

// TestLargeGamesThroughObjectStore runs an iteration on a server whose
// max_payload (1.25 KiB) is smaller than some of the games: those travel
// through the object store N-large, the others as messages, and every
// game arrives as in-process self-play plays it, with the objects
// deleted afterwards. Before, each worker that finished such a game
// stopped with an error, and the next one took the task and died too.
func TestLargeGamesThroughObjectStore(t *testing.T) {
	const maxPayload = 1280
	f := startFleetWith(t, ServerOptions{MaxPayload: maxPayload}, Setup{AckWait: 2 * time.Second})
	job, netPath := tinyJob(t, f.dir, 8)
	want := localGames(t, job, netPath)
	var small, large int
	for _, r := range want {
		data, err := EncodeGame(nil, &Game{Run: job.Run, Iteration: job.Iteration, NetworkSHA256: job.NetworkSHA256,
			Semantics: selfplay.Semantics, Origin: Origin{Worker: "host/12345", Backend: "cpu (some words)", Build: "(devel) 0123456789ab"}, Record: r}, len(r.Obs)/r.Positions())
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) > messageLimit(maxPayload) {
			large++
		} else {
			small++
		}
	}
	t.Logf("%d games above the message limit, %d below", large, small)
	if large == 0 || small == 0 {
		t.Fatalf("%d games above the message limit and %d below: want some of each", large, small)
	}
	if !strings.Contains(f.log.String(), "max_payload is 1.2 KiB") {
		t.Errorf("the trainer does not report the server's max_payload:\n%s", f.log.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wctx, stopWorkers := context.WithCancel(ctx)
	var dones []chan error
	for range 2 {
		_, d := startWorker(t, wctx, f.srv.URL(), 3)
		dones = append(dones, d)
	}
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	got := map[int]*selfplay.GameRecord{}
	res := make(chan error, 1)
	go func() {
		_, err := f.tr.SelfPlay(ctx, job, netPath, o, func(g *Game, _ Stats) { got[g.Record.ID] = g.Record })
		res <- err
	}()
	select {
	case err := <-res:
		if err != nil {
			t.Fatal(err)
		}
	case err := <-dones[0]:
		t.Fatalf("a worker stopped: %v", err)
	case err := <-dones[1]:
		t.Fatalf("a worker stopped: %v", err)
	}
	stopWorkers()
	for _, d := range dones {
		if err := <-d; err != nil {
			t.Errorf("worker: %v", err)
		}
	}
	for id, r := range want {
		if !sameRecord(got[id], r) {
			t.Errorf("game %d from the fleet differs from in-process self-play's", id)
		}
	}
	// Every large game's object was deleted once its game was on disk.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		list, err := f.tr.h.large.List(ctx)
		if errors.Is(err, jetstream.ErrNoObjectsFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d objects left in %s", len(list), f.tr.h.n.large())
		}
	}
	checkGamesAcked(t, ctx, f)
}

// TestFailedTaskQueuedAgain has a broken "worker" take every task,
// publish games 1 and 2, and give up on game 0 as a worker does when its
// game could not be sent on maxDeliveries deliveries (a failure report,
// the task terminated): the trainer logs the failure, counts it and
// queues the task again, which a sound worker then plays.
func TestFailedTaskQueuedAgain(t *testing.T) {
	f := startFleet(t, Setup{AckWait: 2 * time.Second})
	job, netPath := tinyJob(t, f.dir, 3)
	want := localGames(t, job, netPath)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	res := f.selfPlayInBackground(ctx, job, netPath, o)
	js, tasks := takeTasks(t, ctx, f.nc, 3)
	obs := len(want[0].Obs) / want[0].Positions()
	for id := 1; id < 3; id++ {
		data, err := EncodeGame(nil, &Game{Run: job.Run, Iteration: job.Iteration, NetworkSHA256: job.NetworkSHA256, Semantics: selfplay.Semantics, Record: want[id]}, obs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "test.games.1", data, jetstream.WithMsgID(msgID(job.Run, job.Iteration, id))); err != nil {
			t.Fatal(err)
		}
	}
	body, err := encodeJSON(failMagic, taskFailure{Run: job.Run, Iteration: job.Iteration, ID: 0, Origin: Origin{Worker: "broken/1"},
		Deliveries: maxDeliveries, Error: "storing game 0: disk full"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "test.games.1", body); err != nil {
		t.Fatal(err)
	}
	for _, m := range tasks {
		if err := m.Term(); err != nil {
			t.Fatal(err)
		}
	}
	r := f.finishWithWorker(t, ctx, res, "the trainer still waits for game 0 30 s after a worker gave up on it")
	if r.st.Games != 3 || r.st.Failed != 1 || o.Manifest().Totals.Games != 3 {
		t.Fatalf("stats %+v, %d games on disk; want 3 games and 1 failed task", r.st, o.Manifest().Totals.Games)
	}
	if !strings.Contains(f.log.String(), "broken/1") || !strings.Contains(f.log.String(), "disk full") {
		t.Errorf("the trainer's log does not name the failure:\n%s", f.log.String())
	}
}
