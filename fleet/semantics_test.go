package fleet

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/canopy-go/canopy/selfplay"
	"github.com/nats-io/nats.go/jetstream"
)

// TestOtherSemanticsDropped publishes games of another self-play
// semantics (another build's self-play, which may play other games for
// the same seed) under the ids the trainer waits for, from two workers,
// before the real games: they are dropped and counted, with one log line
// per worker, and the real games are written. Before, they were written.
func TestOtherSemanticsDropped(t *testing.T) {
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
	n := 0
	send := func(id, semantics int, worker string) {
		t.Helper()
		n++
		data, err := EncodeGame(nil, &Game{Run: job.Run, Iteration: job.Iteration, NetworkSHA256: job.NetworkSHA256, Semantics: semantics,
			Origin: Origin{Worker: worker, Backend: "cpu"}, Record: want[id]}, obs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, "test.games.1", data, jetstream.WithMsgID(fmt.Sprint("m", n))); err != nil {
			t.Fatal(err)
		}
	}
	for id := range 3 {
		send(id, selfplay.Semantics+1, "old-a")
		send(id, 0, "old-b") // a worker from before semantics existed
	}
	for id := range 3 {
		send(id, selfplay.Semantics, "good")
	}
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	origins := map[int]Origin{}
	st, err := f.tr.SelfPlay(ctx, job, netPath, o, func(r *selfplay.GameRecord, from Origin, _ Stats) { origins[r.ID] = from })
	if err != nil {
		t.Fatal(err)
	}
	if st != (Stats{Games: 3, Mismatched: 6}) {
		t.Errorf("stats %+v, want 3 games and 6 of another semantics", st)
	}
	for id := range 3 {
		if origins[id].Worker != "good" {
			t.Errorf("game %d was taken from %+v", id, origins[id])
		}
	}
	if lines := strings.Count(f.log.String(), "self-play semantics"); lines != 2 {
		t.Errorf("%d lines about games of other semantics, want one per worker (2):\n%s", lines, f.log.String())
	}
	checkGamesAcked(t, ctx, f)
}

// TestWorkerRefusesOtherSemantics: a worker whose build plays other
// self-play semantics than the job's stops with a message saying so,
// instead of playing games the trainer would drop.
func TestWorkerRefusesOtherSemantics(t *testing.T) {
	f := startFleet(t, Setup{})
	job, netPath := tinyJob(t, f.dir, 2)
	job.Semantics = selfplay.Semantics + 1
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tctx, stopTrainer := context.WithCancel(ctx)
	defer stopTrainer()
	go f.tr.SelfPlay(tctx, job, netPath, openOutput(t, filepath.Join(f.dir, "sp"), job), nil)
	_, done := startWorker(t, ctx, f.srv.URL(), 2)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "semantics") {
			t.Fatalf("worker: %v, want a refusal naming the semantics", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the worker still runs 20 s after a job of other semantics")
	}
}
