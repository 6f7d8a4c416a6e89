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
