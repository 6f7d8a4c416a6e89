package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestWorkerCredentialConfined starts an embedded server with a trainer
// user and a workers' user: a worker with the workers' credentials plays
// an iteration (large games included, through N-large), and the same
// credentials cannot purge or delete a stream, rewrite the job or the
// lease, delete a network, queue tasks or take the trainer's games.
// Before, there was one all-powerful credential.
func TestWorkerCredentialConfined(t *testing.T) {
	dir := t.TempDir()
	write := func(name, pw string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(pw+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	trainer := Security{User: "trainer", PasswordFile: write("trainer.pw", "t-secret")}
	worker := Security{User: "worker", PasswordFile: write("worker.pw", "w-secret")}
	srv, err := StartServer(ServerOptions{StoreDir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0", MaxPayload: 1280,
		Security: trainer, Fleet: "test", Workers: worker})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	quiet := func(string, ...any) {}
	tnc, err := ConnectInProcess(srv, trainer, "trainer", quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer tnc.Close()
	tr, err := NewTrainer(ctx, tnc, Setup{Name: "test", Run: "r1", AckWait: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	tr.FetchWait = 100 * time.Millisecond
	job, netPath := tinyJob(t, dir, 8)
	var wlog syncBuffer
	wnc, err := Connect(ctx, srv.URL(), worker, "worker", func(f string, a ...any) { fmt.Fprintf(&wlog, f+"\n", a...) })
	if err != nil {
		t.Fatal(err)
	}
	defer wnc.Close()
	w, err := NewWorker(wnc, WorkerOptions{Name: "test", Backend: "cpu", Trees: 4, Cache: t.TempDir(), Report: -1, Log: &wlog})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	o := openOutput(t, filepath.Join(dir, "sp"), job)
	res := make(chan error, 1)
	go func() { _, err := tr.SelfPlay(ctx, job, netPath, o, nil); res <- err }()
	select {
	case err := <-res:
		if err != nil {
			t.Fatal(err)
		}
	case err := <-done:
		t.Fatalf("the worker stopped: %v", err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("worker: %v", err)
	}
	if got := o.Manifest().Totals.Games; got != job.Games {
		t.Fatalf("%d games on disk, want %d", got, job.Games)
	}
	if strings.Contains(strings.ToLower(wlog.String()), "permission") {
		t.Errorf("the worker met a permissions violation doing its work:\n%s", wlog.String())
	}

	// What the workers' credentials must not do.
	js, err := jetstream.New(wnc)
	if err != nil {
		t.Fatal(err)
	}
	try := func(what string, f func(ctx context.Context) error) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		if err := f(c); err == nil {
			t.Errorf("a worker could %s", what)
		}
	}
	api := func(subject string) func(c context.Context) error {
		return func(c context.Context) error {
			m, err := wnc.RequestWithContext(c, subject, nil)
			if err != nil {
				return err
			}
			if strings.Contains(string(m.Data), `"error"`) {
				return errors.New(string(m.Data))
			}
			return nil
		}
	}
	try("purge the tasks", api("$JS.API.STREAM.PURGE.test-tasks"))
	try("purge the games", api("$JS.API.STREAM.PURGE.test-games"))
	try("delete the games stream", func(c context.Context) error { return js.DeleteStream(c, "test-games") })
	try("delete the job bucket", func(c context.Context) error { return js.DeleteKeyValue(c, "test-state") })
	try("rewrite the job", func(c context.Context) error {
		_, err := js.Publish(c, "$KV.test-state.job", []byte(`{"run":"evil"}`))
		return err
	})
	try("take the lease", func(c context.Context) error {
		_, err := js.Publish(c, "$KV.test-state.lease", []byte(`{"run":"evil"}`))
		return err
	})
	try("delete a network", func(c context.Context) error {
		_, err := js.Publish(c, "$O.test-nets.M.aXRlci0wMDAwLnNhZmV0ZW5zb3Jz", []byte(`{"deleted":true}`))
		return err
	})
	try("queue a task", func(c context.Context) error {
		_, err := js.Publish(c, "test.tasks.1", []byte(`{"run":"r1","iteration":1,"id":0}`))
		return err
	})
	try("take the trainer's games", func(c context.Context) error {
		_, err := js.Consumer(c, "test-games", trainerConsumer)
		return err
	})
	// The trainer's side is intact.
	e, err := tr.h.state.Get(ctx, jobKey)
	if err != nil {
		t.Fatal(err)
	}
	if string(e.Value()) == `{"run":"evil"}` {
		t.Error("the job was rewritten")
	}
	if _, err := tr.h.nets.GetInfo(ctx, job.Network); err != nil {
		t.Errorf("the network: %v", err)
	}
	for _, st := range []string{"test-tasks", "test-games", "KV_test-state", "OBJ_test-nets"} {
		if _, err := tr.h.js.Stream(ctx, st); err != nil {
			t.Errorf("stream %s: %v", st, err)
		}
	}
}
