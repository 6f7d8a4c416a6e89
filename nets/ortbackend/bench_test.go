package ortbackend

import (
	"context"
	"fmt"
	"testing"

	"github.com/canopy-go/canopy/internal/cputime"
	"github.com/canopy-go/canopy/kernels"
	"github.com/canopy-go/canopy/nets"
)

// BenchmarkORTvsCPU times ONNX Runtime's CPU provider on testdata/bench.onnx
// (a PyTorch ResNet: 2x6x7 input, 32 channels, 4 blocks, value hidden 32,
// 7 actions) beside Canopy's cpu backend on a Canopy net of the same
// architecture (random weights of its own: same arithmetic, other
// numbers), both on the same number of threads, per batch size; "ort"
// is the backend's default (threads parked between runs), "ort-spin"
// ONNX Runtime's own (spinning; 2 threads only). evals/s and evals per
// process CPU-second (the steadier figure on a shared machine) are
// reported. See docs/BENCHMARKS.md ("ONNX Runtime CPU beside Canopy's CPU
// backend").
func BenchmarkORTvsCPU(b *testing.B) {
	needLib(b)
	net, err := nets.New(nets.Config{InputPlanes: 2, Height: 6, Width: 7, PolicySize: 7, Channels: 32, Blocks: 4, ValueHidden: 32}, 1)
	if err != nil {
		b.Fatal(err)
	}
	cpu, err := nets.NewCPUBackend(net, nets.BackendOptions{MaxBatch: 256})
	if err != nil {
		b.Fatal(err)
	}
	defer kernels.SetThreads(kernels.Threads())
	for _, threads := range []int{1, 2} {
		ort, err := Open(nil, Options{Model: model("bench"), Threads: threads, MaxBatch: 256})
		if err != nil {
			b.Fatal(err)
		}
		defer ort.Close()
		spin, err := Open(nil, Options{Model: model("bench"), Threads: threads, MaxBatch: 256, Spin: true})
		if err != nil {
			b.Fatal(err)
		}
		defer spin.Close()
		for _, batch := range []int{1, 8, 32, 128} {
			for i, be := range []nets.Backend{ort, spin, cpu} {
				name := be.Name()
				if i == 1 {
					if threads == 1 {
						continue // one thread: the caller's, nothing to spin
					}
					name = "ort-spin"
				}
				b.Run(fmt.Sprintf("threads=%d/%s/batch=%d", threads, name, batch), func(b *testing.B) {
					kernels.SetThreads(threads)
					in, p := be.Shape()
					x := make([]float32, batch*in)
					for i := range x {
						if i%3 == 0 {
							x[i] = 1
						}
					}
					pol, val := make([]float32, batch*p), make([]float32, batch)
					ctx := context.Background()
					cpu0 := cputime.Seconds()
					for b.Loop() {
						if err := be.Evaluate(ctx, batch, x, pol, val); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "evals/s")
					if c := cputime.Seconds() - cpu0; c > 0 {
						// Process CPU time: ONNX Runtime's pool threads
						// (spinning included) and Go's kernel workers alike.
						b.ReportMetric(float64(batch*b.N)/c, "evals/CPU-s")
					}
				})
			}
		}
	}
}
