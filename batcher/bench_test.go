package batcher

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/canopy-go/canopy/nets"
)

// Benchmark shape: roughly a 9x9 board with 8 planes, 82 moves.
const benchIn, benchPol = 8 * 81, 82

// BenchmarkEvaluate: blocking producers (1 and 2 per core) on the seeded
// random backend; requests/s is the batcher's throughput.
func BenchmarkEvaluate(b *testing.B) {
	for _, mb := range []int{16, 256} {
		for _, per := range []int{1, 2} {
			b.Run(fmt.Sprintf("batch=%d/producers=%dxcpu", mb, per), func(b *testing.B) {
				rb := nets.NewRandomBackend(benchIn, benchPol, 1, nets.BackendOptions{MaxBatch: mb})
				bt, _ := New(rb, Options{MaxBatch: mb, Wait: 100 * time.Microsecond})
				defer bt.Close()
				b.SetParallelism(per)
				b.ReportAllocs()
				start := time.Now()
				b.RunParallel(func(pb *testing.PB) {
					pol := make([]float32, benchPol)
					x := float32(0)
					fill := func(row []float32) {
						for i := range row {
							row[i] = x
						}
					}
					for pb.Next() {
						x++
						if _, err := bt.Evaluate(context.Background(), fill, pol); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
				b.ReportMetric(bt.Stats().Mean, "rows/batch")
			})
		}
	}
}

// BenchmarkAsync: one or two worker goroutines per core, each keeping up
// to batch/2 requests in flight through a Client.
func BenchmarkAsync(b *testing.B) {
	for _, mb := range []int{16, 256} {
		for _, per := range []int{1, 2} {
			b.Run(fmt.Sprintf("batch=%d/producers=%dxcpu", mb, per), func(b *testing.B) {
				rb := nets.NewRandomBackend(benchIn, benchPol, 1, nets.BackendOptions{MaxBatch: mb})
				bt, _ := New(rb, Options{MaxBatch: mb, Wait: 100 * time.Microsecond})
				defer bt.Close()
				depth := max(mb/2, 4)
				b.SetParallelism(per)
				b.ReportAllocs()
				start := time.Now()
				b.RunParallel(func(pb *testing.PB) {
					c := NewClient(depth)
					buf := make([]Completion, depth)
					x := float32(0)
					fill := func(row []float32) {
						for i := range row {
							row[i] = x
						}
					}
					more := true
					for more || c.InFlight() > 0 {
						for more && c.InFlight() < depth {
							if more = pb.Next(); !more {
								break
							}
							x++
							for {
								if _, err := bt.Submit(c, 0, fill); err == nil {
									break
								} else if err != ErrFull {
									b.Error(err)
									return
								}
								if c.InFlight() > 0 {
									n, _ := c.Wait(context.Background(), buf)
									for _, y := range buf[:n] {
										bt.Release(y.Ticket)
									}
								} else {
									runtime.Gosched()
								}
							}
						}
						if c.InFlight() == 0 {
							continue
						}
						n, err := c.Wait(context.Background(), buf)
						if err != nil {
							b.Error(err)
							return
						}
						for _, y := range buf[:n] {
							bt.Release(y.Ticket)
						}
					}
				})
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
				b.ReportMetric(bt.Stats().Mean, "rows/batch")
			})
		}
	}
}

// BenchmarkLoneClient is one search alone: a client with one request in
// flight at a time (az in an arena or the web UI), each answered by a
// backend that computes for work (a small net's batch-1 evaluation takes
// about 80 us), so that ns/op above work is the hand-off: since the
// client runs its batch itself (runInline), the cost of a Reserve, Commit
// and Wait on one goroutine; before, the trip to the consumer and back
// (two goroutine wake-ups when either side parks; see spinMaxInFlight).
func BenchmarkLoneClient(b *testing.B) {
	for _, work := range []time.Duration{0, 20 * time.Microsecond, 80 * time.Microsecond} {
		b.Run(fmt.Sprintf("work=%v", work), func(b *testing.B) {
			fb := &fakeBackend{in: 4, ps: 2, mb: 16, work: work}
			bt, _ := New(fb, Options{MaxBatch: 16, Wait: -1})
			defer bt.Close()
			c := NewClient(1)
			buf := make([]Completion, 1)
			fill := func(row []float32) { clear(row) }
			for b.Loop() {
				if _, err := bt.Submit(c, 0, fill); err != nil {
					b.Fatal(err)
				}
				if n, err := c.Wait(context.Background(), buf); err != nil || n != 1 {
					b.Fatal(n, err)
				}
				bt.Release(buf[0].Ticket)
			}
		})
	}
}
