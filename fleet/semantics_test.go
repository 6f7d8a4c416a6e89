package fleet

import (
	"context"
	"encoding/json"
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
	st, err := f.tr.SelfPlay(ctx, job, netPath, o, func(g *Game, _ Stats) { origins[g.Record.ID] = g.Origin })
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
// naming both sides' builds and semantics and the side to upgrade,
// instead of playing games the trainer would drop. A job from a trainer
// older than semantics versions (no "semantics" field: 0) asks for the
// trainer to be upgraded; before, the worker said that the job asked for
// semantics 0 and to run the trainer's build, the older one.
func TestWorkerRefusesOtherSemantics(t *testing.T) {
	for _, tc := range []struct {
		name      string
		semantics int // the job's; 0 = the field left out
		build     string
		want      []string
	}{
		{"older trainer", 0, "", []string{"upgrade the trainer", "older than self-play semantics versions", fmt.Sprint("plays semantics ", selfplay.Semantics)}},
		{"newer trainer", selfplay.Semantics + 1, "v9.9.9 abc", []string{"upgrade the worker", "v9.9.9 abc", fmt.Sprint("semantics ", selfplay.Semantics+1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startFleet(t, Setup{})
			job, _ := tinyJob(t, f.dir, 2)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// The job as the trainer of that build would write it.
			m := map[string]any{}
			data, _ := json.Marshal(job)
			json.Unmarshal(data, &m)
			delete(m, "semantics")
			delete(m, "build")
			if tc.semantics != 0 {
				m["semantics"] = tc.semantics
			}
			if tc.build != "" {
				m["build"] = tc.build
			}
			data, _ = json.Marshal(m)
			if _, err := f.tr.h.state.Put(ctx, jobKey, data); err != nil {
				t.Fatal(err)
			}
			_, done := startWorker(t, ctx, f.srv.URL(), 2)
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("worker: nil error, want a refusal naming the semantics")
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("worker: %v\nwant it to say %q", err, w)
					}
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the worker still runs 20 s after a job of other semantics")
			}
		})
	}
}
