package nets

import (
	"fmt"
	"testing"

	"github.com/canopy-go/canopy/internal/cputime"
	"github.com/canopy-go/canopy/kernels"
)

// BenchmarkForward measures inference throughput of the presets at batch
// 1, 16 and 256 on 1 and 2 GEMM threads (evals/s = samples per second),
// with the 3x3 convolution algorithm the cpu backend picks by default
// (AutoConvAlgorithm: Winograd with the SIMD kernels); BenchmarkForwardConv
// times each algorithm. Compare with testdata/bench_torch.py --forward.
func BenchmarkForward(b *testing.B) {
	for _, preset := range []string{"connect4", "sequence"} {
		cfg, _ := Preset(preset)
		net, err := New(cfg, 1)
		if err != nil {
			b.Fatal(err)
		}
		net.SetConvAlgorithm(AutoConvAlgorithm())
		for _, batch := range []int{1, 16, 256} {
			in := randInput(batch*net.InputSize(), 1)
			p, v := make([]float32, batch*net.PolicySize()), make([]float32, batch)
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/batch=%d/threads=%d", preset, batch, threads), func(b *testing.B) {
					defer kernels.SetThreads(kernels.SetThreads(threads))
					net.Forward(batch, in, p, v)
					b.ReportAllocs()
					cpu0 := cputime.Seconds()
					for b.Loop() {
						net.Forward(batch, in, p, v)
					}
					reportRate(b, float64(batch*b.N), cpu0, "evals")
				})
			}
		}
	}
}

// BenchmarkTrain measures training throughput (forward, backward and an
// Adam step) at batch 256 of the connect4 preset (64x5), the 32x4 net of
// Connect Four training runs (connect4 with 32 channels and 4 blocks) and
// the sequence preset. Compare with testdata/bench_torch.py --train.
func BenchmarkTrain(b *testing.B) {
	for _, name := range []string{"connect4", "connect4-32x4", "sequence"} {
		for _, threads := range []int{1, 2} {
			benchmarkTrain(b, name, threads)
		}
	}
}

// BenchmarkTrainBF16 is BenchmarkTrain with the 3x3 convolutions'
// products in bfloat16 (SetTrainPrecision).
func BenchmarkTrainBF16(b *testing.B) {
	for _, name := range []string{"connect4", "connect4-32x4", "sequence"} {
		for _, threads := range []int{1, 2} {
			benchmarkTrainPrec(b, name, threads, BF16)
		}
	}
}

func benchmarkTrain(b *testing.B, name string, threads int) {
	benchmarkTrainPrec(b, name, threads, FP32)
}

func benchmarkTrainPrec(b *testing.B, name string, threads int, prec Precision) {
	cfg, _ := Preset(name)
	if name == "connect4-32x4" {
		cfg, _ = Preset("connect4")
		cfg.Channels, cfg.Blocks = 32, 4
	}
	b.Run(fmt.Sprintf("%s/batch=256/threads=%d", name, threads), func(b *testing.B) {
		defer kernels.SetThreads(kernels.SetThreads(threads))
		net, err := New(cfg, 1)
		if err != nil {
			b.Fatal(err)
		}
		net.SetTrainPrecision(prec)
		tr := &Trainer{Net: net, Optimizer: &Adam{LR: 1e-3}, L2: 1e-4}
		batch := randomBatch(cfg, 256, 1)
		if _, err := tr.Step(batch); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		cpu0 := cputime.Seconds()
		for b.Loop() {
			tr.Step(batch)
		}
		reportRate(b, float64(256*b.N), cpu0, "samples")
	})
}

// reportRate reports count/s of wall clock ("evals/s") and per CPU-second of
// the whole process ("evals/cpu-s"; see cpuSeconds), cpu0 being
// cputime.Seconds() before the loop. With 2 threads the CPU figure counts both.
func reportRate(b *testing.B, count, cpu0 float64, unit string) {
	b.ReportMetric(count/b.Elapsed().Seconds(), unit+"/s")
	if cpu1 := cputime.Seconds(); cpu0 >= 0 && cpu1 > cpu0 {
		b.ReportMetric(count/(cpu1-cpu0), unit+"/cpu-s")
	}
}

// BenchmarkCheckFinite is the output check every CPU evaluation runs:
// a batch of 64 rows of Sequence's 700 logits and a value.
func BenchmarkCheckFinite(b *testing.B) {
	policy, value := make([]float32, 64*700), make([]float32, 64)
	for i := range policy {
		policy[i] = float32(i%97) * 0.01
	}
	for b.Loop() {
		if err := checkFinite("cpu", 64, 700, policy, value); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNCHWToNHWC is the input transpose of every evaluation: 64
// samples of Sequence's 99 planes x 100 cells.
func BenchmarkNCHWToNHWC(b *testing.B) {
	const batch, planes, cells = 64, 99, 100
	src := make([]float32, batch*planes*cells)
	dst := make([]float32, len(src))
	for b.Loop() {
		nchwToNHWC(batch, planes, cells, src, dst)
	}
}
