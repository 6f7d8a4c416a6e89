package fleet

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/nats-io/nats.go/jetstream"
)

// TestAsyncJobTakesNewerNetwork: an asynchronous job's network changes
// while its games are played (Trainer.Newest). The trainer publishes the
// newer network, workers play their next tasks with it, and the games
// of both networks are taken, each the game in-process self-play plays
// with the network it records; none is dropped as stale.
func TestAsyncJobTakesNewerNetwork(t *testing.T) {
	f := startFleet(t, Setup{AckWait: 2 * time.Second})
	// Many short games, one at a time: the switch after the first 4 comes
	// while most are still to play.
	job, net0 := tinyJob(t, f.dir, 200)
	job.Async = true
	// A second network: the first with one weight changed.
	g := games.MustNew(job.Game)
	net, _, err := nets.OpenNet(net0, g)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range net.Params() {
		for i := range p.Data {
			p.Data[i] *= 1.5
		}
	}
	net1 := filepath.Join(f.dir, "iter-0001.safetensors")
	if err := net.Save(net1); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(net1)
	if err != nil {
		t.Fatal(err)
	}
	sha1 := sha(data)
	var switched atomic.Bool
	f.tr.Newest = func() (string, string) {
		if switched.Load() {
			return net1, sha1
		}
		return "", ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	wctx, stopWorkers := context.WithCancel(ctx)
	var dones []chan error
	_, d := startWorker(t, wctx, f.srv.URL(), 1)
	dones = append(dones, d)
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	got := map[int]*Game{}
	st, err := f.tr.SelfPlay(ctx, job, net0, o, func(fg *Game, _ Stats) {
		got[fg.Record.ID] = fg
		if len(got) == 4 {
			switched.Store(true)
		}
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
	if st.Games != job.Games || st.Stale != 0 || len(o.Pending()) != 0 {
		t.Fatalf("stats %+v, pending %v; want all %d games, none stale", st, o.Pending(), job.Games)
	}
	job1 := job
	job1.NetworkSHA256 = sha1
	want := map[string]map[int]*Game{}
	for _, j := range []struct {
		job  Job
		path string
	}{{job, net0}, {job1, net1}} {
		want[j.job.NetworkSHA256] = map[int]*Game{}
		for id, r := range localGames(t, j.job, j.path) {
			want[j.job.NetworkSHA256][id] = &Game{Record: r}
		}
	}
	by := map[string]int{}
	for id, fg := range got {
		by[fg.NetworkSHA256]++
		w, ok := want[fg.NetworkSHA256]
		if !ok {
			t.Fatalf("game %d records network %s, neither of the job's", id, fg.NetworkSHA256)
		}
		if !sameRecord(fg.Record, w[id].Record) {
			t.Errorf("game %d (network %.8s) differs from in-process self-play's with that network", id, fg.NetworkSHA256)
		}
	}
	if by[job.NetworkSHA256] < 4 || by[sha1] == 0 {
		t.Errorf("games by network %v: want the first 4 or more with the first network and some with the second", by)
	}
	checkGamesAcked(t, ctx, f)
}

// TestNoDeliveryLost: games are each delivered to the trainer once
// while they trickle in. Before, the trainer's fetch ended with a
// context whose deadline was 10% after the server's expiry of the pull
// request: a game the server sent near the expiry could reach a fetch
// that had stopped reading, was lost, and came again only after AckWait
// (30 s by default: a 4,000-game job of 200 simulated workers took 35 s
// instead of 4). With an AckWait of an hour, such a loss stalls the test.
func TestNoDeliveryLost(t *testing.T) {
	f := startFleet(t, Setup{AckWait: time.Hour})
	job, netPath := tinyJob(t, f.dir, 2000)
	recs := localGames(t, Job{Game: job.Game, Settings: job.Settings, Seed: job.Seed, Games: 8}, netPath)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Games trickle in, one acknowledged publish at a time.
	nc := connect(t, f.srv.URL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for id := range job.Games {
			c := *recs[id%len(recs)]
			c.ID = id
			data, err := EncodeGame(nil, &Game{Run: job.Run, Iteration: job.Iteration, NetworkSHA256: job.NetworkSHA256, Semantics: selfplay.Semantics, Record: &c},
				len(c.Obs)/c.Positions())
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := js.Publish(ctx, "test.games.1", data, jetstream.WithMsgID(msgID(job.Run, job.Iteration, id))); err != nil {
				if ctx.Err() == nil {
					t.Error(err)
				}
				return
			}
		}
	}()
	// A short fetch wait, as on a loaded machine relative to the work.
	f.tr.FetchWait = 10 * time.Millisecond
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	st, err := f.tr.SelfPlay(ctx, job, netPath, o, nil)
	if err != nil {
		t.Fatalf("%v (stats %+v, %d games pending)", err, st, len(o.Pending()))
	}
	cons, err := f.tr.h.js.Consumer(ctx, "test-games", trainerConsumer)
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Delivered.Consumer != uint64(job.Games) {
		t.Errorf("%d deliveries for %d games: want each delivered once", info.Delivered.Consumer, job.Games)
	}
}

// TestAsyncTakesGamesOfAnEarlierNetwork: a game of an asynchronous job
// played with a network this trainer session has not published (the
// session before was killed after publishing it, and this one starts
// with the manifest's network) is taken, not dropped as stale: its task
// was acknowledged and queueing it again falls in the duplicate window,
// so dropping it lost the game and the trainer waited for ever.
func TestAsyncTakesGamesOfAnEarlierNetwork(t *testing.T) {
	f := startFleet(t, Setup{})
	job, netPath := tinyJob(t, f.dir, 2)
	job.Async = true
	want := localGames(t, job, netPath)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for id := range 2 {
		sum := job.NetworkSHA256
		if id == 0 {
			sum = "0000000000000000000000000000000000000000000000000000000000000001" // the newer network
		}
		data, err := EncodeGame(nil, &Game{Run: job.Run, Iteration: job.Iteration, NetworkSHA256: sum, Semantics: selfplay.Semantics, Record: want[id]},
			len(want[id].Obs)/want[id].Positions())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.tr.h.js.Publish(ctx, "test.games.1", data, jetstream.WithMsgID(msgID(job.Run, job.Iteration, id))); err != nil {
			t.Fatal(err)
		}
	}
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	st, err := f.tr.SelfPlay(ctx, job, netPath, o, nil)
	if err != nil {
		t.Fatalf("%v (stats %+v)", err, st)
	}
	if st.Stale != 0 || o.Manifest().Totals.Games != 2 {
		t.Errorf("stats %+v, %d games on disk; want none stale, 2 games", st, o.Manifest().Totals.Games)
	}
}
