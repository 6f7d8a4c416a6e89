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
