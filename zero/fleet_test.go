package zero

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/canopy-go/canopy/fleet"
)

// A run whose self-play two fleet workers play ends with the networks of
// the same run played in one process, byte for byte. About 4 s on 2
// cores: it runs under -short too, so in CI. The three-player case needs
// every player's value targets to cross the wire (they were dropped, and
// the fleet run's network differed).
func TestFleetRunMatchesLocal(t *testing.T) {
	t.Run("tictactoe", func(t *testing.T) { fleetMatchesLocal(t, tiny()) })
	t.Run("tetrislink-3p", func(t *testing.T) { fleetMatchesLocal(t, tinyMulti("tetrislink:players=3", 3, "")) })
}

func fleetMatchesLocal(t *testing.T, c Config) {
	want := t.TempDir()
	if err := Run(context.Background(), want, c, Options{}); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	wctx, stopWorkers := context.WithCancel(ctx)
	done := make(chan error, 2)
	for k := range 2 {
		go func() {
			nc, err := fleet.Connect(wctx, "nats://"+addr, fleet.Security{}, fmt.Sprint("test worker ", k), func(string, ...any) {})
			if err != nil {
				done <- err
				return
			}
			defer nc.Close()
			w, err := fleet.NewWorker(nc, fleet.WorkerOptions{Name: "canopy", Backend: "cpu", Trees: 3, Cache: t.TempDir(), Report: -1})
			if err != nil {
				done <- err
				return
			}
			done <- w.Run(wctx)
		}()
	}
	dir := t.TempDir()
	var log bytes.Buffer
	err = Run(ctx, dir, c, Options{Log: &log, Fleet: &Fleet{URL: "embedded", Listen: addr, AckWait: 2 * time.Second}})
	stopWorkers()
	for range 2 {
		if werr := <-done; werr != nil && wctx.Err() == nil {
			t.Errorf("worker: %v", werr)
		}
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for i := 1; i <= c.Iterations; i++ {
		if !bytes.Equal(checkpointBytes(t, dir, i), checkpointBytes(t, want, i)) {
			t.Errorf("iteration %d: the fleet run's network differs from the in-process run's", i)
		}
	}
}
