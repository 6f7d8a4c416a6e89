package zero

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// logWatch is a Log that calls seen (once) when a line containing want
// is written.
type logWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (l *logWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.seen != nil && strings.Contains(l.buf.String(), l.want) {
		close(l.seen)
		l.seen = nil
	}
	return len(p), nil
}

// With OverlapEval, iteration 2's evaluation runs while iteration 3
// plays (its evaluation waits here until iteration 3's self-play has
// started, which the synchronous loop never does), and the run's files
// are the synchronous run's: the same networks byte for byte, the same
// evaluation games and scores.
func TestOverlapEvalChangesNothing(t *testing.T) {
	c := tiny()
	c.Iterations = 3
	want := t.TempDir()
	if err := Run(context.Background(), want, c, Options{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := &logWatch{want: "iteration 3/3: self-play", seen: make(chan struct{})}
	seen := log.seen
	var waited, overlapped bool
	opt := Options{Log: log, OverlapEval: true, Status: func(line string) {
		if waited || !strings.Contains(line, "iteration 2 evaluation") {
			return
		}
		waited = true
		select {
		case <-seen:
			overlapped = true
		case <-time.After(20 * time.Second):
		}
	}}
	if err := Run(context.Background(), dir, c, opt); err != nil {
		t.Fatal(err)
	}
	if !overlapped {
		t.Errorf("iteration 3's self-play did not start during iteration 2's evaluation (status seen: %v); log:\n%s", waited, log.buf.String())
	}
	for i := 0; i <= 3; i++ {
		if !bytes.Equal(checkpointBytes(t, dir, i), checkpointBytes(t, want, i)) {
			t.Errorf("iteration %d's network differs from the synchronous run's", i)
		}
	}
	for _, it := range []string{"iter-0001", "iter-0002", "iter-0003"} {
		var ra, rb Record
		if ok, err := readJSON(dir+"/"+itersDir+"/"+it+".json", &ra); !ok || err != nil {
			t.Fatalf("%s: record missing (%v)", it, err)
		}
		readJSON(want+"/"+itersDir+"/"+it+".json", &rb)
		if !sameMatches(ra.Eval.Matches, rb.Eval.Matches) || !reflect.DeepEqual(ra.Eval.Scores, rb.Eval.Scores) {
			t.Errorf("%s: evaluation differs:\n%+v\n%+v", it, ra.Eval.Scores, rb.Eval.Scores)
		}
		if ra.SelfPlay.Positions != rb.SelfPlay.Positions || ra.Train.FinalLoss != rb.Train.FinalLoss {
			t.Errorf("%s: self-play or training differs: %+v %+v / %+v %+v", it, ra.SelfPlay, ra.Train.FinalLoss, rb.SelfPlay, rb.Train.FinalLoss)
		}
		if ra.Eval.Seconds <= 0 {
			t.Errorf("%s: evaluation seconds %v not recorded", it, ra.Eval.Seconds)
		}
	}
}

// A run with OverlapEval interrupted during an evaluation (the next
// iteration's self-play under way beside it) resumes as the synchronous
// loop does, from the first iteration without a record, and ends where
// an uninterrupted run ends.
func TestOverlapEvalResumeIsExact(t *testing.T) {
	c := tiny()
	c.Iterations = 3
	want := t.TempDir()
	if err := Run(context.Background(), want, c, Options{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := false
	opt := Options{OverlapEval: true, Status: func(line string) {
		if strings.Contains(line, "iteration 3 self-play: 2/") {
			stopped = true
			cancel()
		}
	}}
	err := Run(ctx, dir, c, opt)
	if !stopped || !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: stopped %v, error %v; want context.Canceled", stopped, err)
	}
	if n, _ := Finished(dir); n < 1 || n > 2 {
		t.Fatalf("%d iterations finished at the interruption, want 1 or 2", n)
	}
	if err := Run(context.Background(), dir, c, Options{OverlapEval: true}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= 3; i++ {
		if !bytes.Equal(checkpointBytes(t, dir, i), checkpointBytes(t, want, i)) {
			t.Errorf("iteration %d's network differs from the uninterrupted run's", i)
		}
	}
	if n, _ := Finished(dir); n != 3 {
		t.Errorf("%d iterations finished, want 3", n)
	}
}
