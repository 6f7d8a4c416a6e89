package zero

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// overlapEval reports whether the synchronous loop evaluates each
// iteration while the next one plays and trains (Options.OverlapEval):
// only when self-play is in this process (a fleet's workers play the
// evaluation's games too) and without a gate (whose verdict chooses the
// next iteration's network).
func (r *runner) overlapEval() bool {
	return r.opt.OverlapEval && r.cfg.Gate == 0 && r.trainer == nil
}

// overlapped finishes the iterations after recs as the synchronous loop
// does, except that iteration i's evaluation runs in a goroutine of its
// own while iteration i+1 plays and trains (at most one evaluation
// behind); records are written in order, each when its evaluation is
// complete. The self-play and training of every iteration are those of
// the synchronous loop (without a gate, iteration i+1 plays with network
// i whatever its evaluation says), and so are the evaluations, so the
// run's files are the same; a run interrupted here resumes as the
// synchronous one does, with the first iteration without a record.
func (r *runner) overlapped(ctx context.Context, recs []Record, clock *eta) ([]Record, error) {
	first := len(recs) + 1
	if first > r.cfg.Iterations {
		return recs, nil
	}
	defer r.serialiseOutput()()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Unbuffered: iteration i+1 is handed over only when iteration i's
	// evaluation is done, so one evaluation at most runs beside the loop.
	trained := make(chan trainedIter)
	evDone := r.startEvaluator(ctx, cancel, recs, trained, clock)
	// stop waits for the evaluation and returns the records written and
	// the first error, the evaluation's before err (which may be only
	// the consequence of the evaluation's failure cancelling ctx).
	stop := func(err error) ([]Record, error) {
		close(trained)
		ev := <-evDone
		if ev.err != nil && (err == nil || !errors.Is(ev.err, context.Canceled)) {
			return ev.recs, ev.err
		}
		return ev.recs, err
	}
	for i := first; i <= r.cfg.Iterations; i++ {
		rec, err := r.playAndTrain(ctx, i, i-1)
		if err != nil {
			return stop(fmt.Errorf("iteration %d: %w", i, err))
		}
		select {
		case trained <- trainedIter{rec: rec, started: rec.Started}:
		case <-ctx.Done():
			return stop(ctx.Err())
		}
	}
	return stop(nil)
}

// evalDone is what an evaluator goroutine ends with: the records it
// wrote, and its error.
type evalDone struct {
	recs []Record
	err  error
}

// startEvaluator evaluates the iterations sent on trained in a goroutine
// of its own (evaluateInOrder: records written in order, each when its
// evaluation is complete), cancelling the loop's context when it fails.
// Its result arrives on the channel returned once trained is closed or
// it fails.
func (r *runner) startEvaluator(ctx context.Context, cancel context.CancelFunc, recs []Record, trained <-chan trainedIter, clock *eta) <-chan evalDone {
	done := make(chan evalDone, 1)
	go func() {
		recs, err := r.evaluateInOrder(ctx, recs, trained, clock)
		if err != nil {
			cancel()
		}
		done <- evalDone{recs, err}
	}()
	return done
}

// serialiseOutput makes Log and Status safe to write from several
// goroutines until the function it returns restores them.
func (r *runner) serialiseOutput() (restore func()) {
	log, status := r.opt.Log, r.opt.Status
	r.opt.Log = &lockedWriter{w: log}
	var mu sync.Mutex
	r.opt.Status = func(line string) {
		mu.Lock()
		defer mu.Unlock()
		status(line)
	}
	return func() { r.opt.Log, r.opt.Status = log, status }
}
