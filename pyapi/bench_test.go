package pyapi

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/canopy-go/canopy/internal/cputime"
)

// BenchmarkEnvStep is the Go side of canopy.VecEnv.step on Connect Four
// (4,096 environments against random, the rotating actions of
// rl.BenchmarkConnect4Env): the step Python calls, without Python.
//
//	go test ./pyapi -run '^$' -bench EnvStep
func BenchmarkEnvStep(b *testing.B) {
	const n = 4096
	l := NewLibrary()
	bufs := [][]byte{buf(n*84, 4), buf(n*7, 1), buf(n, 4), buf(n, 1), buf(n, 1), buf(n, 4), buf(n, 8)}
	h, _, err := l.Open([]byte(`{"method":"env","args":{"game":"connect4","num_envs":4096,"seed":1,"opponent":"random"}}`), bufs)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close(h)
	acts, legal := i64s(bufs[6]), bufs[1]
	k := 0
	cpu0 := cputime.Now()
	for b.Loop() {
		for i := range acts {
			row := legal[i*7 : (i+1)*7]
			c := 0
			for _, x := range row {
				c += int(x)
			}
			t := (k + 3*i) % c
			for a, x := range row {
				if x == 1 {
					if t == 0 {
						acts[i] = int64(a)
						break
					}
					t--
				}
			}
		}
		k++
		if err := l.Step(h); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(float64(b.N*n)/(cputime.Now()-cpu0).Seconds(), "steps/cpu-s")
}

// BenchmarkSearchSession is canopy.search's Go side on Connect Four
// (4,096 positions, 64 simulations, batches of up to 1,024) with Python's
// part played in Go: wait, uniform outputs, submit. With evaluator=0 it
// measures the whole cost around the evaluator; with a sleep per batch
// (a GPU: it frees the cores) it measures the overlap:
// "inside" is the fraction of the wall time spent in the evaluator (1 is
// full overlap of the tree work with the evaluation); "start+end" is
// the fraction from Open to the first batch and from the last submit to
// Close's return.
//
//	go test ./pyapi -run '^$' -bench SearchSession -benchtime 3x
func BenchmarkSearchSession(b *testing.B) {
	for _, d := range []time.Duration{0, 2 * time.Millisecond, 8 * time.Millisecond} {
		b.Run("evaluator="+d.String(), func(b *testing.B) {
			const n, batch = 4096, 1024
			l := NewLibrary()
			bufs := [][]byte{buf(batch*84, 4), buf(batch*7, 1), buf(batch*7, 4), buf(batch, 4)}
			moves := make([]string, n)
			args, err := json.Marshal(map[string]any{"method": "search", "args": map[string]any{
				"game": "connect4", "moves": moves, "sims": 64, "batch": batch}})
			if err != nil {
				b.Fatal(err)
			}
			rows, batches := 0, 0
			var inside, edges, starts, opens time.Duration
			var gaps []time.Duration
			cpu0 := cputime.Now()
			for b.Loop() {
				t0 := time.Now()
				h, _, err := l.Open(args, bufs)
				if err != nil {
					b.Fatal(err)
				}
				opens += time.Since(t0)
				first := true
				var last time.Time
				for {
					ev, err := l.Wait(h, time.Second)
					if err != nil {
						b.Fatal(err)
					}
					if ev == WaitDone {
						edges += time.Since(last)
						break
					}
					if ev <= 0 {
						continue
					}
					t := time.Now()
					if !first {
						gaps = append(gaps, t.Sub(last))
					}
					if first {
						edges += t.Sub(t0)
						starts += t.Sub(t0)
						first = false
					}
					rows += int(ev)
					batches++
					clear(bufs[2])
					clear(bufs[3])
					if d > 0 {
						time.Sleep(d)
					}
					inside += time.Since(t)
					if err := l.Submit(h); err != nil {
						b.Fatal(err)
					}
					last = time.Now()
				}
				t1 := time.Now()
				l.Close(h)
				edges += time.Since(t1)
			}
			cpu := cputime.Now() - cpu0
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(rows)/float64(batches), "rows/batch")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(rows), "cpu-ns/row")
			b.ReportMetric(edges.Seconds()/b.Elapsed().Seconds(), "start+end")
			b.ReportMetric(starts.Seconds()/b.Elapsed().Seconds(), "start")
			b.ReportMetric(opens.Seconds()/b.Elapsed().Seconds(), "open")
			slices.Sort(gaps)
			var big time.Duration
			for _, g := range gaps {
				if g > time.Millisecond {
					big += g
				}
			}
			b.ReportMetric(float64(gaps[len(gaps)/2].Microseconds()), "gap-p50-µs")
			b.ReportMetric(float64(gaps[len(gaps)*9/10].Microseconds()), "gap-p90-µs")
			b.ReportMetric(big.Seconds()/b.Elapsed().Seconds(), "gaps>1ms")
			b.ReportMetric(inside.Seconds()/b.Elapsed().Seconds(), "inside")
		})
	}
}
