package fleet

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestNetworkPublishedOnce: SelfPlay and Evaluate may publish the same
// network at once (an asynchronous run's new network: the games played
// with it and its evaluation). It must be put once: a second Put of the
// name replaces the first object and purges its chunks under the
// workers reading them, who then wait for chunks that never come (in
// TestAsyncFleetSurvivesKills, for 10 minutes, holding evaluation tasks
// nobody else could take).
func TestNetworkPublishedOnce(t *testing.T) {
	f := startFleet(t, Setup{})
	job, netPath := tinyJob(t, f.dir, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for k := range errs {
		wg.Go(func() { errs[k] = f.tr.publishNet(ctx, job, netPath) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	s, err := f.tr.hs().js.Stream(ctx, "OBJ_"+f.tr.hs().n.nets())
	if err != nil {
		t.Fatal(err)
	}
	if st := s.CachedInfo().State; st.LastSeq != st.Msgs || st.NumDeleted != 0 {
		t.Fatalf("the object store's stream holds %d of the %d messages written to it (%d deleted): the network was put more than once",
			st.Msgs, st.LastSeq, st.NumDeleted)
	}
}

// TestStalledNetworkFetchGivenUp: a network whose chunks stop coming
// (purged here, as a second Put of the name purges them under a reader)
// is given up after the worker's stall limit, with an error it retries
// on, instead of waiting for the 10 minutes of netFetchTimeout.
func TestStalledNetworkFetchGivenUp(t *testing.T) {
	f := startFleet(t, Setup{})
	job, netPath := tinyJob(t, f.dir, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := f.tr.publishNet(ctx, job, netPath); err != nil {
		t.Fatal(err)
	}
	h := f.tr.hs()
	info, err := h.nets.GetInfo(ctx, job.Network)
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.js.Stream(ctx, "OBJ_"+h.n.nets())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject("$O."+h.n.nets()+".C."+info.NUID)); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, f.srv.URL())
	w, err := NewWorker(nc, WorkerOptions{Name: "test", Backend: "cpu", Cache: t.TempDir(), Report: -1})
	if err != nil {
		t.Fatal(err)
	}
	w.netStall = 500 * time.Millisecond
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.attach(ctx, js); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err = w.fetchNetwork(ctx, job.Network, job.NetworkSHA256)
	if !errors.Is(err, errTransient) || time.Since(t0) > 10*time.Second {
		t.Fatalf("fetching a network whose chunks never come: %v after %s; want an error to retry on within a few seconds", err, time.Since(t0).Round(time.Millisecond))
	}
}
