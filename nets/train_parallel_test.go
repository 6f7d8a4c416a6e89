package nets

import (
	"math"
	"testing"

	"github.com/canopy-go/canopy/kernels"
)

// TestTrainThreadsIdentical: training cuts the batch into trainParts fixed
// slices whose partial sums are added in slice order, and every GEMM
// computes each output row the same way however its rows are split, so
// the loss, the gradients and the running statistics do not depend on the
// number of threads, bit for bit; in float32 and in bfloat16 (whose
// F(3x4) convolutions split their chunks of tiles over the threads, with
// batch norm's moments summed per chunk).
func TestTrainThreadsIdentical(t *testing.T) {
	for _, p := range []Precision{FP32, BF16} {
		testTrainThreadsIdentical(t, p)
	}
}

func testTrainThreadsIdentical(t *testing.T, prec Precision) {
	cfg, _ := Preset("connect4")
	// 37 samples: slices of 9, 9, 9 and 10, and GEMMs large enough to split.
	batch := randomBatch(cfg, 37, 3)
	run := func(threads int) (Loss, [][]float32) {
		defer kernels.SetThreads(kernels.SetThreads(threads))
		net, err := New(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		net.SetTrainPrecision(prec)
		tr := &Trainer{Net: net, L2: 1e-4}
		loss, err := tr.Compute(batch)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for _, p := range net.params {
			out = append(out, append([]float32(nil), p.Data...))
			if p.Grad != nil {
				out = append(out, append([]float32(nil), p.Grad...))
			}
		}
		return loss, out
	}
	l1, g1 := run(1)
	l2, g2 := run(2)
	if l1 != l2 {
		t.Fatalf("%v: loss with 1 thread %v, with 2 threads %v", prec, l1, l2)
	}
	for i := range g1 {
		for j := range g1[i] {
			if math.Float32bits(g1[i][j]) != math.Float32bits(g2[i][j]) {
				t.Fatalf("%v: tensor %d element %d: %v with 1 thread, %v with 2", prec, i, j, g1[i][j], g2[i][j])
			}
		}
	}
}
