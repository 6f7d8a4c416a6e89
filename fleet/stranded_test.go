package fleet

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
)

// TestRestartedTrainerQueuesStrandedTasksAgain: tasks that the server
// holds but does not deliver must not stop a restarted trainer. In
// TestAsyncFleetSurvivesKills (cmd/canopy), a server killed with SIGKILL
// came back holding tasks behind its consumer's stored ack floor, never
// delivered again; the restarted trainer queued the missing games under
// the same message ids, which the duplicate window dropped, and it
// waited for ever. Here the tasks are stranded by handing them back
// with a delay of an hour.
func TestRestartedTrainerQueuesStrandedTasksAgain(t *testing.T) {
	s := Setup{Name: "test", Run: "r1", AckWait: 2 * time.Second}
	f := startFleet(t, s)
	job, netPath := tinyJob(t, f.dir, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	// The first trainer session queues the tasks; they are stranded,
	// and the session ends.
	sctx, stop := context.WithCancel(ctx)
	res := f.selfPlayInBackground(sctx, job, netPath, o)
	_, tasks := takeTasks(t, ctx, connect(t, f.srv.URL()), job.Games)
	for _, m := range tasks {
		if err := m.NakWithDelay(time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if r := <-res; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("the first session ended with %v (stats %+v); want it cancelled", r.err, r.st)
	}
	f.tr.Close()
	// The restarted trainer, within the duplicate window.
	tr, err := NewTrainer(ctx, f.nc, s, f.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	tr.FetchWait = 100 * time.Millisecond
	f.tr = tr
	res = f.selfPlayInBackground(ctx, job, netPath, o)
	r := f.finishWithWorker(t, ctx, res, "the restarted trainer still waits for the games of the stranded tasks 30 s on")
	if got := o.Manifest().Totals.Games; got != job.Games || r.st.Games != job.Games {
		t.Fatalf("%d games on disk, %d received; want %d", got, r.st.Games, job.Games)
	}
}

// TestLostTaskQueuedAgain: a task lost on the server while the trainer
// runs (deleted here; a server restarted under a live trainer may come
// back without it, or strand it) is queued again once no game has come
// for 3 AckWaits and the server has nothing left for the workers.
func TestLostTaskQueuedAgain(t *testing.T) {
	f := startFleet(t, Setup{AckWait: 500 * time.Millisecond})
	job, netPath := tinyJob(t, f.dir, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o := openOutput(t, filepath.Join(f.dir, "sp"), job)
	res := f.selfPlayInBackground(ctx, job, netPath, o)
	tasks := f.tr.hs().tasks
	for {
		info, err := tasks.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == uint64(job.Games) {
			if err := tasks.DeleteMsg(ctx, info.State.FirstSeq); err != nil {
				t.Fatal(err)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r := f.finishWithWorker(t, ctx, res, "the trainer still waits for the game of the lost task 30 s on")
	if got := o.Manifest().Totals.Games; got != job.Games || r.st.Games != job.Games {
		t.Fatalf("%d games on disk, %d received; want %d", got, r.st.Games, job.Games)
	}
	if !strings.Contains(f.log.String(), "queued the 1 missing games again") {
		t.Errorf("the trainer's log does not say that it queued the missing game again:\n%s", f.log)
	}
}

// TestRestartedEvaluationQueuesStrandedTasksAgain: as
// TestRestartedTrainerQueuesStrandedTasksAgain, for evaluation tasks,
// which a restarted trainer queues again for the results it lacks.
func TestRestartedEvaluationQueuesStrandedTasksAgain(t *testing.T) {
	s := Setup{Name: "test", Run: "r1", AckWait: 2 * time.Second}
	f := startFleet(t, s)
	job, netPath := tinyJob(t, f.dir, 1)
	ev, files := tinyEval(job, netPath, 1)
	sched, err := ev.schedule(games.MustNew(ev.Game))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f.publishJob(t, ctx, job, netPath)
	var mu sync.Mutex
	got := map[int]bool{}
	have := func(_, i int) bool { mu.Lock(); defer mu.Unlock(); return got[i] }
	record := func(r EvalResult) error { mu.Lock(); defer mu.Unlock(); got[r.Index] = true; return nil }
	// The first session queues the evaluation tasks; they are stranded
	// and the session ends.
	sctx, stop := context.WithCancel(ctx)
	first := make(chan error, 1)
	go func() { _, err := f.tr.Evaluate(sctx, []EvalJob{ev}, files, have, record); first <- err }()
	_, tasks := takeTasks(t, ctx, connect(t, f.srv.URL()), len(sched))
	for _, m := range tasks {
		if err := m.NakWithDelay(time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("the first session ended with %v; want it cancelled", err)
	}
	f.tr.Close()
	tr, err := NewTrainer(ctx, f.nc, s, f.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	tr.FetchWait = 100 * time.Millisecond
	f.tr = tr
	wctx, stopWorker := context.WithCancel(ctx)
	defer stopWorker()
	_, done := startWorker(t, wctx, f.srv.URL(), 2)
	second := make(chan error, 1)
	go func() { _, err := tr.Evaluate(ctx, []EvalJob{ev}, files, have, record); second <- err }()
	select {
	case err := <-second:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the restarted trainer still waits for the results of the stranded evaluation tasks 30 s on")
	}
	stopWorker()
	if err := <-done; err != nil {
		t.Errorf("worker: %v", err)
	}
	if len(got) != len(sched) {
		t.Fatalf("%d results recorded, want %d", len(got), len(sched))
	}
}

// TestLostEvalTaskQueuedAgain: as TestLostTaskQueuedAgain, for an
// evaluation task.
func TestLostEvalTaskQueuedAgain(t *testing.T) {
	f := startFleet(t, Setup{AckWait: 500 * time.Millisecond})
	job, netPath := tinyJob(t, f.dir, 1)
	ev, files := tinyEval(job, netPath, 1)
	sched, err := ev.schedule(games.MustNew(ev.Game))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f.publishJob(t, ctx, job, netPath)
	var mu sync.Mutex
	got := map[int]bool{}
	res := make(chan error, 1)
	go func() {
		_, err := f.tr.Evaluate(ctx, []EvalJob{ev}, files, func(int, int) bool { return false },
			func(r EvalResult) error { mu.Lock(); defer mu.Unlock(); got[r.Index] = true; return nil })
		res <- err
	}()
	tasks := f.tr.hs().tasks
	for {
		info, err := tasks.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == uint64(len(sched)) {
			if err := tasks.DeleteMsg(ctx, info.State.FirstSeq); err != nil {
				t.Fatal(err)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	wctx, stopWorker := context.WithCancel(ctx)
	defer stopWorker()
	_, done := startWorker(t, wctx, f.srv.URL(), 2)
	select {
	case err := <-res:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the trainer still waits for the result of the lost evaluation task 30 s on")
	}
	stopWorker()
	if err := <-done; err != nil {
		t.Errorf("worker: %v", err)
	}
	if len(got) != len(sched) {
		t.Fatalf("%d results recorded, want %d", len(got), len(sched))
	}
	if !strings.Contains(f.log.String(), "queued the 1 missing evaluation games again") {
		t.Errorf("the trainer's log does not say that it queued the missing evaluation game again:\n%s", f.log)
	}
}
