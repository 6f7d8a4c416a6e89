package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/canopy-go/canopy/cuda"
	"github.com/canopy-go/canopy/cuda/fakecuda"
	"github.com/canopy-go/canopy/nets/ortbackend"
)

var fake fakecuda.Status

// TestMain runs gpucheck's tests on the emulated CUDA device when no GPU
// is here (see fakecuda.Setup).
func TestMain(m *testing.M) {
	st, err := fakecuda.Setup(fakecuda.Source{Name: "saxpy.cu", Text: cuda.SelfTestKernels})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpucheck tests:", err)
		os.Exit(1)
	}
	fake = st
	os.Exit(m.Run())
}

// TestCompareBatch pins issue 17, item 4: the comparison batch never
// exceeds the largest timed batch (the backends' MaxBatch).
func TestCompareBatch(t *testing.T) {
	for _, c := range []struct {
		batches []int
		want    int
	}{
		{[]int{1, 2, 4, 8, 16, 32, 64, 128}, 61},
		{[]int{1, 2, 4}, 4},
		{[]int{16, 1}, 16},
		{[]int{61}, 61},
		{[]int{4096}, 61},
	} {
		if got := compareBatch(c.batches); got != c.want {
			t.Errorf("compareBatch(%v) = %d, want %d", c.batches, got, c.want)
		}
	}
}

// TestRunOnGPU runs the whole check with small batches (below the
// comparison batch of 61, which used to fail every comparison).
func TestRunOnGPU(t *testing.T) {
	if _, err := cuda.Load(); err != nil {
		fake.NoGPU(t, err)
	}
	rep := run("connect4-ppo", "1,4", "fp32,fp16,auto", time.Millisecond, false)
	if !rep.OK {
		t.Fatalf("gpucheck failed: %s", rep.Error)
	}
	if len(rep.SelfTests) == 0 || len(rep.Compare) != 6 || len(rep.Bench) != 12 {
		t.Errorf("%d self-tests, %d comparisons, %d timings; want some, 6, 12", len(rep.SelfTests), len(rep.Compare), len(rep.Bench))
	}
	for _, c := range rep.Compare {
		if c.Batch != 4 {
			t.Errorf("comparison at batch %d, want 4", c.Batch)
		}
		t.Logf("%s graphs=%v: policy %.3g relative (scale %.3g), value %.3g", c.Precision, c.Graphs, c.PolicyRel, c.PolicyScale, c.ValueDiff)
	}
	if rep.Libs == nil || !strings.Contains(rep.Libs.NVRTCChoice, "for driver CUDA") {
		t.Errorf("the NVRTC choice is not reported: %+v", rep.Libs)
	}
}

// TestRunORT runs the ONNX Runtime part on the CPU build that `make ort`
// fetches: ORT-CPU and the cpu backend on the model's shape are timed, and
// the CUDA and TensorRT providers, whose libraries that build lacks, are
// skipped with a line saying why, not failed.
func TestRunORT(t *testing.T) {
	if _, err := ortbackend.Load(); errors.Is(err, ortbackend.ErrNoLibrary) {
		t.Skipf("skipping: %v", err)
	}
	rep := &report{}
	runORT(rep, "../../nets/ortbackend/testdata/bench.onnx", ortShape{Channels: 32, Blocks: 4, ValueHidden: 32}, "1,4", time.Millisecond, true)
	if rep.Error != "" {
		t.Fatalf("failed: %s", rep.Error)
	}
	seen := map[string]int{}
	for _, b := range rep.Bench {
		if b.Error != "" || b.EvalsPerS <= 0 {
			t.Errorf("timing %+v", b)
		}
		seen[b.Backend]++
	}
	if seen["ort-cpu"] != 2 || seen["cpu-model-shape"] != 2 {
		t.Errorf("timings %v, want ort-cpu and cpu-model-shape at 2 batch sizes", seen)
	}
	if rep.ORT == nil || rep.ORT.Input != "input [B,2,6,7]" {
		t.Fatalf("ort info %+v", rep.ORT)
	}
	skipped := strings.Join(rep.ORT.Skipped, "\n")
	for _, p := range []string{"cuda", "tensorrt"} {
		if !strings.Contains(skipped, "ort-"+p+" skipped: ortbackend: provider "+p+" unavailable") {
			t.Errorf("ort-%s not skipped with its reason:\n%s", p, skipped)
		}
	}
	t.Logf("skipped:\n%s\ntimed: %v", skipped, seen)
	rep = &report{}
	runORT(rep, "", ortShape{}, "1", time.Millisecond, false)
	if rep.Error != "" || rep.ORT == nil || !strings.Contains(strings.Join(rep.ORT.Skipped, ""), "no --onnx model") {
		t.Errorf("without --onnx: %+v %+v", rep.Error, rep.ORT)
	}
}
