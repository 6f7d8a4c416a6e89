package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/nats-io/nats.go/jetstream"
)

// syntheticGames plays n Connect Four games (the built-in small network
// with random weights, 16 simulations a move) whose records stand in for
// any game id (Game with the id set): the synthetic games of the ingest
// benchmarks. It returns a connect4 job for them and its network file.
func syntheticGames(b *testing.B, dir string, n int) ([]*selfplay.GameRecord, Job, string) {
	b.Helper()
	g := games.MustNew("connect4")
	net, _, err := nets.OpenNet("init", g)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "iter-0000.safetensors")
	if err := net.Save(path); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	be, _, err := nets.OpenBackendSpec("cpu", net, nets.BackendOptions{MaxBatch: 64})
	if err != nil {
		b.Fatal(err)
	}
	st := selfplay.DefaultSettings()
	st.Sims = 16
	e, err := engine.New(g, be, engine.Options{Leaves: st.Leaves, Batch: 64, Slots: engine.SlotsFor(16, st.Leaves)})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	var recs []*selfplay.GameRecord
	var mu sync.Mutex
	err = selfplay.Run(context.Background(), e, selfplay.Config{Settings: st, Seed: 1, NumGames: n, Trees: 16,
		OnGame: func(r *selfplay.GameRecord) error { mu.Lock(); recs = append(recs, r); mu.Unlock(); return nil }})
	if err != nil {
		b.Fatal(err)
	}
	job := Job{Run: "r1", Game: g.Spec(), Settings: st, Semantics: selfplay.Semantics, Seed: 1,
		Network: filepath.Base(path), NetworkSHA256: sha(data)}
	return recs, job, path
}

// encodeAs is the message of record r played as game id of job.
func encodeAs(b *testing.B, job Job, r *selfplay.GameRecord, id int) []byte {
	c := *r
	c.ID = id
	data, err := EncodeGame(nil, &Game{Run: job.Run, Iteration: job.Iteration, NetworkSHA256: job.NetworkSHA256,
		Semantics: job.Semantics, Origin: Origin{Worker: "synthetic"}, Record: &c}, len(r.Obs)/r.Positions())
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkTrainerIngest measures the trainer's own ceiling: the games
// per second one Trainer.SelfPlay takes in (fetch, decode, validate,
// write shards and manifest, acknowledge) from an embedded server's
// file-backed stream where the games of a job of 2,000 Connect Four
// games (about 1 KB-10 KB each) are already waiting, published before
// the timer starts. Nothing plays; one trainer goroutine, as in a run.
func BenchmarkTrainerIngest(b *testing.B) {
	const n = 2000
	f := startFleet(b, Setup{})
	recs, job, netPath := syntheticGames(b, f.dir, 32)
	ctx := context.Background()
	var size, positions int64
	iter := 0
	for b.Loop() {
		b.StopTimer()
		iter++
		job.Iteration, job.Games = iter, n
		var acks []jetstream.PubAckFuture
		size, positions = 0, 0
		for id := range n {
			data := encodeAs(b, job, recs[id%len(recs)], id)
			size += int64(len(data))
			positions += int64(recs[id%len(recs)].Positions())
			a, err := f.tr.h.js.PublishAsync(f.tr.h.n.gameSubject(iter), data, jetstream.WithMsgID(msgID(job.Run, iter, id)))
			if err != nil {
				b.Fatal(err)
			}
			acks = append(acks, a)
		}
		for _, a := range acks {
			select {
			case <-a.Ok():
			case err := <-a.Err():
				b.Fatal(err)
			}
		}
		o := openOutput(b, filepath.Join(f.dir, fmt.Sprint("sp", iter)), job)
		b.StartTimer()
		st, err := f.tr.SelfPlay(ctx, job, netPath, o, nil)
		if err != nil {
			b.Fatal(err)
		}
		if st.Games != n {
			b.Fatalf("stats %+v, want %d games", st, n)
		}
	}
	s := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(n/s, "games/s")
	b.ReportMetric(float64(positions)/s, "positions/s")
	b.ReportMetric(float64(size)/n, "bytes/game")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkSyntheticWorkers simulates many workers against one embedded
// server and one trainer: each of W goroutines has its own connection
// (TCP, as a worker process would), takes up to 8 tasks at a time from
// the shared consumer and, for each, publishes a pre-made Connect Four
// game with its message id, waits for the server's acknowledgement and
// acknowledges the task, as a worker does, but without playing. The
// trainer collects a job of 4,000 games. It reports the games per second
// of the whole fleet, and logs when each job had half, 90%, 99% and all
// of its games.
func BenchmarkSyntheticWorkers(b *testing.B) {
	for _, workers := range []int{1, 8, 50, 200} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			const n = 4000
			f := startFleet(b, Setup{})
			recs, job, netPath := syntheticGames(b, f.dir, 32)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The jobs' messages, pre-encoded for every iteration the
			// loop may run (the encoding is the worker's, not measured).
			var wg sync.WaitGroup
			var mu sync.Mutex
			msgs := map[int][][]byte{}
			messages := func(iter int) [][]byte {
				mu.Lock()
				defer mu.Unlock()
				if m, ok := msgs[iter]; ok {
					return m
				}
				j := job
				j.Iteration = iter
				m := make([][]byte, n)
				for id := range n {
					m[id] = encodeAs(b, j, recs[id%len(recs)], id)
				}
				msgs[iter] = m
				return m
			}
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					nc := connect(b, f.srv.URL())
					js, err := jetstream.New(nc)
					if err != nil {
						b.Error(err)
						return
					}
					var cons jetstream.Consumer
					for cons == nil && ctx.Err() == nil {
						if cons, err = js.Consumer(ctx, "test-tasks", workersConsumer); err != nil {
							cons = nil
							time.Sleep(100 * time.Millisecond)
						}
					}
					for ctx.Err() == nil {
						mb, err := cons.Fetch(8, jetstream.FetchMaxWait(500*time.Millisecond))
						if err != nil {
							continue
						}
						for m := range mb.Messages() {
							var t task
							if json.Unmarshal(m.Data(), &t) != nil {
								m.Term()
								continue
							}
							data := messages(t.Iteration)[t.ID]
							if _, err := js.Publish(ctx, f.tr.h.n.gameSubject(t.Iteration), data,
								jetstream.WithMsgID(msgID(t.Run, t.Iteration, t.ID))); err != nil {
								m.Nak()
								continue
							}
							m.Ack()
						}
					}
				}()
			}
			iter := 0
			for b.Loop() {
				b.StopTimer()
				iter++
				job.Iteration, job.Games = iter, n
				messages(iter)
				o := openOutput(b, filepath.Join(f.dir, fmt.Sprint("sp", iter)), job)
				b.StartTimer()
				t0 := time.Now()
				var marks []string
				got := 0
				st, err := f.tr.SelfPlay(ctx, job, netPath, o, func(*Game, Stats) {
					got++
					if got == n/2 || got == n*9/10 || got == n*99/100 || got == n-5 || got == n {
						marks = append(marks, fmt.Sprintf("%d at %s", got, time.Since(t0).Round(time.Millisecond)))
					}
				})
				if err != nil {
					b.Fatal(err)
				}
				if st.Games != n {
					b.Fatalf("stats %+v, want %d games", st, n)
				}
				b.Logf("job %d: %d games in %s (%v)", iter, n, time.Since(t0), marks)
			}
			s := b.Elapsed().Seconds() / float64(b.N)
			cancel()
			wg.Wait()
			b.ReportMetric(n/s, "games/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkNetworkFetch measures what publishing a network costs the
// server: one object of 1.5 MB (the default Connect Four network's
// file) in N-nets, fetched whole (GetBytes, as a worker does) by W
// clients at once, each with its own connection. It reports the
// aggregate MB/s the server sends and the ms one fetch takes.
func BenchmarkNetworkFetch(b *testing.B) {
	const size = 1511416
	for _, clients := range []int{1, 50} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			f := startFleet(b, Setup{})
			ctx := context.Background()
			data := make([]byte, size)
			for i := range data {
				data[i] = byte(i * 7)
			}
			meta := jetstream.ObjectMeta{Name: "net", Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunkSize(f.nc.MaxPayload())}}
			if _, err := f.tr.h.nets.Put(ctx, meta, bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
			stores := make([]jetstream.ObjectStore, clients)
			for k := range stores {
				js, err := jetstream.New(connect(b, f.srv.URL()))
				if err != nil {
					b.Fatal(err)
				}
				if stores[k], err = js.ObjectStore(ctx, "test-nets"); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				var wg sync.WaitGroup
				for _, st := range stores {
					wg.Add(1)
					go func() {
						defer wg.Done()
						gctx, cancel := context.WithTimeout(ctx, netFetchTimeout) // as a worker does
						defer cancel()
						got, err := st.GetBytes(gctx, "net")
						if err != nil || len(got) != size {
							b.Errorf("fetch: %d bytes, %v", len(got), err)
						}
					}()
				}
				wg.Wait()
			}
			s := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(float64(clients)*size/s/1e6, "MB/s")
			b.ReportMetric(1000*s, "ms/round")
			b.ReportMetric(0, "ns/op")
		})
	}
}
