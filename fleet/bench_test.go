package fleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkOverhead compares, per game, what the fleet adds (encode,
// acknowledged publish, fetch, decode, ack: one game's round trip through
// an embedded server's file-backed stream) with what playing the game
// costs (Connect Four, the built-in small network with random weights,
// 16 simulations a move, 16 games at once, on the CPU backend). It
// reports both in ms/game and the first as a share of the second
// (overhead-%).
func BenchmarkOverhead(b *testing.B) {
	g := games.MustNew("connect4")
	net, _, err := nets.OpenNet("init", g)
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
	const n = 32
	var recs []*selfplay.GameRecord
	t0 := time.Now()
	err = selfplay.Run(context.Background(), e, selfplay.Config{Settings: st, Seed: 1, NumGames: n, Trees: 16,
		OnGame: func(r *selfplay.GameRecord) error { recs = append(recs, r); return nil }})
	if err != nil {
		b.Fatal(err)
	}
	gen := time.Since(t0) / n
	obs := len(recs[0].Obs) / recs[0].Positions()

	f := startFleet(b, Setup{})
	js, err := jetstream.New(f.nc)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cons, err := js.Consumer(ctx, "test-games", trainerConsumer)
	if err != nil {
		b.Fatal(err)
	}
	var buf []byte
	i := 0
	b.ResetTimer()
	for b.Loop() {
		r := recs[i%n]
		i++
		buf, err = EncodeGame(buf[:0], &Game{Run: "bench", Iteration: 1, NetworkSHA256: "x", Record: r}, obs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := js.Publish(ctx, "test.games.1", buf, jetstream.WithMsgID(fmt.Sprint(i))); err != nil {
			b.Fatal(err)
		}
		mb, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for m := range mb.Messages() {
			if _, err := DecodeGame(m.Data()); err != nil {
				b.Fatal(err)
			}
			if err := m.Ack(); err != nil {
				b.Fatal(err)
			}
			got++
		}
		if got != 1 {
			b.Fatalf("fetched %d games, want 1 (%v)", got, mb.Error())
		}
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(gen.Microseconds())/1000, "generate-ms/game")
	b.ReportMetric(float64(per.Microseconds())/1000, "fleet-ms/game")
	b.ReportMetric(100*per.Seconds()/gen.Seconds(), "overhead-%")
	b.ReportMetric(float64(len(buf)), "bytes/game")
}

// BenchmarkLargeGame measures one 1.6 MB game's round trip (a synthetic
// record: 100 positions of 3,700 observation values and 170 actions)
// through an embedded server, as one message on a server that allows it
// (max_payload 8 MiB) and through the object store N-large on a stock
// server (max_payload 1 MiB): store, reference, fetch, check, delete.
func BenchmarkLargeGame(b *testing.B) {
	const p, obs, actions = 100, 3700, 170
	r := &selfplay.GameRecord{ID: 0, Obs: make([]float32, p*obs), Policy: make([]float32, p*actions), Legal: make([]uint8, p*actions),
		Value: make([]float32, p), RootQ: make([]float32, p), Ply: make([]int32, p), Returns: []float64{1, -1}}
	for _, bench := range []struct {
		name       string
		maxPayload int32
	}{{"message-8MiB", 8 << 20}, {"object-store-1MiB", 1 << 20}} {
		b.Run(bench.name, func(b *testing.B) {
			f := startFleetWith(b, ServerOptions{MaxPayload: bench.maxPayload}, Setup{})
			w, err := NewWorker(f.nc, WorkerOptions{Name: "test"})
			if err != nil {
				b.Fatal(err)
			}
			w.h = f.tr.h
			ctx := context.Background()
			cons, err := f.tr.h.js.Consumer(ctx, "test-games", trainerConsumer)
			if err != nil {
				b.Fatal(err)
			}
			g := &Game{Run: "bench", Iteration: 1, NetworkSHA256: "x", Record: r}
			var size int
			i := 0
			for b.Loop() {
				i++
				data, err := EncodeGame(nil, g, obs)
				if err != nil {
					b.Fatal(err)
				}
				size = len(data)
				msg := data
				large := int64(len(data)) > messageLimit(int64(bench.maxPayload))
				if large {
					if msg, err = w.putLarge(ctx, g, fmt.Sprint(i), data); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := f.tr.h.js.Publish(ctx, "test.games.1", msg, jetstream.WithMsgID(fmt.Sprint(i))); err != nil {
					b.Fatal(err)
				}
				mb, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
				if err != nil {
					b.Fatal(err)
				}
				for m := range mb.Messages() {
					body := m.Data()
					if large {
						var ref gameRef
						if err := decodeJSON(body, refMagic, &ref); err != nil {
							b.Fatal(err)
						}
						if body, err = f.tr.fetchLarge(ctx, ref); err != nil {
							b.Fatal(err)
						}
						f.tr.dropObject(ctx, ref.Object)
					}
					if _, err := DecodeGame(body); err != nil {
						b.Fatal(err)
					}
					m.Ack()
				}
			}
			b.ReportMetric(float64(size), "bytes/game")
		})
	}
}
