package kernels

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/canopy-go/canopy/internal/cputime"
)

// countTask counts the runs of each part and the threads it saw free.
type countTask struct {
	runs     []atomic.Int32
	maxInner atomic.Int32 // the most threads a kernel call inside a part could take
}

func (c *countTask) RunPart(p int) {
	c.runs[p].Add(1)
	inner := int32(Threads() - int(callsInFlight.Load())) // what job.run computes for a call made here (busy counts the call itself)
	for {
		old := c.maxInner.Load()
		if inner <= old || c.maxInner.CompareAndSwap(old, inner) {
			break
		}
	}
}

// Parallel runs every part exactly once, whatever the parts and threads;
// kernel calls inside a part see no idle thread to split over (when the
// parts took them all); and it allocates nothing.
func TestParallel(t *testing.T) {
	defer SetThreads(SetThreads(0))
	for _, threads := range []int{1, 2, 4} {
		SetThreads(threads)
		for _, parts := range []int{1, 2, 3, 7, 64} {
			c := &countTask{runs: make([]atomic.Int32, parts)}
			Parallel(parts, c)
			for p := range parts {
				if n := c.runs[p].Load(); n != 1 {
					t.Fatalf("threads %d, parts %d: part %d ran %d times", threads, parts, p, n)
				}
			}
			if parts >= threads && c.maxInner.Load() > 1 {
				t.Errorf("threads %d, parts %d: a kernel inside a part could split over %d threads", threads, parts, c.maxInner.Load())
			}
		}
	}
	SetThreads(2)
	c := &countTask{runs: make([]atomic.Int32, 4)}
	if a := testing.AllocsPerRun(50, func() { Parallel(4, c) }); a != 0 && !raceEnabled {
		t.Errorf("Parallel allocates %v times per call", a)
	}
}

// The pool's workers and callers poll for at most spinWait before they
// park: once calls stop, the process stops using CPU.
func TestPoolParksWhenIdle(t *testing.T) {
	defer SetThreads(SetThreads(2))
	var sink atomic.Int64
	task := taskFunc(func(p int) {
		for i := range 100000 {
			sink.Add(int64(i & p))
		}
	})
	for range 20 {
		Parallel(2, task)
	}
	time.Sleep(10 * spinWait) // the last call's polling ends
	cpu0 := cputime.Seconds()
	time.Sleep(200 * time.Millisecond)
	if used := cputime.Seconds() - cpu0; used > 0.05 {
		t.Errorf("the idle pool used %.0f ms of CPU in 200 ms; its threads should be parked", 1000*used)
	}
}

type taskFunc func(p int)

func (f taskFunc) RunPart(p int) { f(p) }
