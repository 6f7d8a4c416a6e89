package nets

import (
	"fmt"
	"testing"

	"github.com/canopy-go/canopy/kernels"
)

// BenchmarkForward measures inference throughput of the presets at batch
// 1, 16 and 256 on 1 and 2 GEMM threads (evals/s = samples per second).
// Compare with testdata/bench_torch.py.
func BenchmarkForward(b *testing.B) {
	for _, preset := range []string{"connect4", "sequence"} {
		cfg, _ := Preset(preset)
		net, err := New(cfg, 1)
		if err != nil {
			b.Fatal(err)
		}
		for _, batch := range []int{1, 16, 256} {
			in := randInput(batch*net.InputSize(), 1)
			p, v := make([]float32, batch*net.PolicySize()), make([]float32, batch)
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/batch=%d/threads=%d", preset, batch, threads), func(b *testing.B) {
					defer kernels.SetThreads(kernels.SetThreads(threads))
					net.Forward(batch, in, p, v)
					b.ReportAllocs()
					for b.Loop() {
						net.Forward(batch, in, p, v)
					}
					b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "evals/s")
				})
			}
		}
	}
}

// BenchmarkTrain measures training throughput (forward, backward and an
// Adam step) of the connect4 preset at batch 256.
func BenchmarkTrain(b *testing.B) {
	cfg, _ := Preset("connect4")
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("connect4/batch=256/threads=%d", threads), func(b *testing.B) {
			defer kernels.SetThreads(kernels.SetThreads(threads))
			net, _ := New(cfg, 1)
			tr := &Trainer{Net: net, Optimizer: &Adam{LR: 1e-3}, L2: 1e-4}
			batch := randomBatch(cfg, 256, 1)
			if _, err := tr.Step(batch); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				tr.Step(batch)
			}
			b.ReportMetric(float64(256*b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
