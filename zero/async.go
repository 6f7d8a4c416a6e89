package zero

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"
)

// The asynchronous pipeline (Config.Async) runs the steps of the
// synchronous loop (selfPlay, train, evaluate, finish) in three
// goroutines instead of one after the other:
//
//   - self-play (playAhead) plays iteration i's games as soon as network
//     i-1-Config.Ahead (i-2 by default) exists, starting with the newest
//     network and switching to a newer one as soon as it is trained
//     (fleet.Trainer.Newest); so the games of iteration i are played by
//     networks i-1-Ahead to i-1, each game recording its own
//     (origins.jsonl), and the workers find the next iteration's tasks
//     queued as soon as one iteration's games are in;
//   - training (pipeline) trains iteration i once its games are all on
//     disk, ReplayRatio samples per new position, publishes the network
//     to self-play at once and hands the iteration to
//   - evaluation (evaluateInOrder), which evaluates the iterations in
//     order (its matches played by the workers, fleeteval.go) and writes
//     each one's record when its evaluation is complete, while the next
//     iteration trains and the one after it is played.
//
// Every step keeps its own files and skip-when-done rule, so a killed
// run resumes as the synchronous one does: the first iteration without
// a record is trained (or its training result reused), the self-play
// directories resume game by game. Network i-1-Ahead as the floor keeps
// every iteration's manifest network fixed (checkpoint
// max(0, i-1-Ahead)) whatever the timing, so that a resumed self-play
// directory matches its manifest (Ahead is a setting of the run).

// playedIter is an iteration whose self-play is complete.
type playedIter struct {
	iteration int
	started   time.Time
	rec       SelfPlayRecord
}

// pipeline finishes the iterations after recs asynchronously and returns
// all the records.
func (r *runner) pipeline(ctx context.Context, recs []Record, clock *eta) ([]Record, error) {
	first := len(recs) + 1
	if first > r.cfg.Iterations {
		return recs, nil
	}
	// Network first-1 is trained: its iteration has a record.
	_, play := r.checkpoint(first - 1)
	sum, err := fileSHA(play)
	if err != nil {
		return recs, err
	}
	r.newest = newNewestNet(first-1, play, sum)
	defer func() { r.newest = nil }()
	// Both goroutines report progress.
	status := r.opt.Status
	var mu sync.Mutex
	r.opt.Status = func(line string) {
		mu.Lock()
		defer mu.Unlock()
		status(line)
	}
	defer func() { r.opt.Status = status }()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	played := make(chan playedIter, r.cfg.Iterations)
	spErr := make(chan error, 1)
	go func() { spErr <- r.playAhead(ctx, first, played) }()
	// Evaluation runs in a goroutine of its own: the training of
	// iteration i+1 does not wait for iteration i's evaluation. Records
	// are written in order, each when its evaluation is complete.
	trained := make(chan trainedIter, r.cfg.Iterations)
	evDone := r.startEvaluator(ctx, cancel, recs, trained, clock)
	// stop ends the other goroutines and returns the records written and
	// the first error: evaluation's or self-play's before err, which may
	// be only their cancellation's consequence.
	stop := func(err error) ([]Record, error) {
		cancel()
		close(trained)
		ev := <-evDone
		sp := <-spErr
		for _, e := range []error{ev.err, sp} {
			if e != nil && !errors.Is(e, context.Canceled) {
				return ev.recs, e
			}
		}
		if err == nil {
			err = errors.Join(ev.err, sp)
		}
		return ev.recs, err
	}
	for i := first; i <= r.cfg.Iterations; i++ {
		var p playedIter
		var ok bool
		select {
		case p, ok = <-played:
		case <-ctx.Done():
		}
		if !ok {
			return stop(ctx.Err())
		}
		rec := Record{Iteration: i, Started: p.started.UTC(), SelfPlay: p.rec}
		r.logf("iteration %d/%d: training on the games of networks %s-%s (asynchronous)", i, r.cfg.Iterations, iterName(max(0, i-1-r.cfg.ahead())), iterName(i-1))
		tr, err := r.train(ctx, i)
		if err != nil {
			return stop(fmt.Errorf("iteration %d: training: %w", i, err))
		}
		rec.Train = tr
		_, play := r.checkpoint(i)
		sum, err := fileSHA(play)
		if err != nil {
			return stop(fmt.Errorf("iteration %d: %w", i, err))
		}
		r.newest.set(i, play, sum)
		trained <- trainedIter{rec: rec, started: p.started}
	}
	close(trained)
	ev := <-evDone
	if ev.err != nil {
		<-spErr
		return ev.recs, ev.err
	}
	return ev.recs, <-spErr
}

// trainedIter is an iteration trained and waiting for its evaluation.
type trainedIter struct {
	rec     Record
	started time.Time
}

// evaluateInOrder evaluates the iterations of in, in order, writing
// each one's record when its evaluation is complete; it returns recs
// with the records it wrote.
func (r *runner) evaluateInOrder(ctx context.Context, recs []Record, in <-chan trainedIter, clock *eta) ([]Record, error) {
	for t := range in {
		i := t.rec.Iteration
		ev, err := r.evaluate(ctx, i, i-1)
		if err != nil {
			return recs, fmt.Errorf("iteration %d: evaluation: %w", i, err)
		}
		rec := t.rec
		rec.Eval = ev
		rec.Finished = time.Now().UTC()
		if recs, err = r.finish(recs, rec, t.started, clock); err != nil {
			return recs, err
		}
	}
	return recs, nil
}

// playAhead plays the self-play of iterations first.. in order, each as
// soon as network i-1-Ahead (i-2 by default) is trained, and sends each
// one complete to out, which it closes when it returns.
func (r *runner) playAhead(ctx context.Context, first int, out chan<- playedIter) error {
	defer close(out)
	for i := first; i <= r.cfg.Iterations; i++ {
		floor := max(0, i-1-r.cfg.ahead())
		if err := r.newest.wait(ctx, floor); err != nil {
			return err
		}
		t0 := time.Now()
		_, start := r.checkpoint(floor)
		it, _, _ := r.newest.get()
		r.logf("iteration %d/%d: self-play with %s (asynchronous: each newer network as soon as it is trained)", i, r.cfg.Iterations, iterName(it))
		sp, err := r.selfPlay(ctx, i, start)
		if err != nil {
			return fmt.Errorf("iteration %d: self-play: %w", i, err)
		}
		out <- playedIter{iteration: i, started: t0, rec: sp}
	}
	return nil
}

// asyncSteps is the number of training steps of batch positions that
// takes ratio samples per new position (at least one step).
func asyncSteps(ratio float64, fresh, batch int) int {
	return max(1, int(math.Ceil(ratio*float64(fresh)/float64(batch))))
}

// fileSHA returns the hex SHA-256 of the file at path: the network
// identity a fleet job carries (Job.NetworkSHA256), as nets.OpenNet
// reports it for the networks it decodes.
func fileSHA(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:]), nil
}

// newestNet is the newest trained network of an asynchronous run: the
// training goroutine sets it, the self-play one reads and waits for it.
// It is safe for concurrent use.
type newestNet struct {
	mu        sync.Mutex
	iter      int
	file, sha string        // the file self-play uses and its SHA-256
	changed   chan struct{} // closed and replaced by each set
}

func newNewestNet(iter int, file, sha string) *newestNet {
	return &newestNet{iter: iter, file: file, sha: sha, changed: make(chan struct{})}
}

func (n *newestNet) set(iter int, file, sha string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.iter, n.file, n.sha = iter, file, sha
	close(n.changed)
	n.changed = make(chan struct{})
}

func (n *newestNet) get() (iter int, file, sha string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.iter, n.file, n.sha
}

// wait waits until network iter (or a later one) is the newest.
func (n *newestNet) wait(ctx context.Context, iter int) error {
	for {
		n.mu.Lock()
		have, ch := n.iter, n.changed
		n.mu.Unlock()
		if have >= iter {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}
