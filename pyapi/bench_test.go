package pyapi

import (
	"testing"

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
