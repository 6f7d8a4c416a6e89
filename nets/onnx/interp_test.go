package onnx

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// TestGraphTorch: the CPU graph runner gives PyTorch's outputs within
// 1e-5 on every fixture, the squeeze-excitation, global-pooling and
// LeakyRelu networks that Import refuses included.
func TestGraphTorch(t *testing.T) {
	files, _ := filepath.Glob("testdata/torch/*.json")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			js, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var c torchCase
			if err := json.Unmarshal(js, &c); err != nil {
				t.Fatal(err)
			}
			m, err := ReadFile(strings.TrimSuffix(f, ".json") + ".onnx")
			if err != nil {
				t.Fatal(err)
			}
			gr, err := CompileGraph(m, games.MustNew(c.Game), ImportOptions{}, 8)
			if err != nil {
				t.Fatal(err)
			}
			in, pn := gr.Shape()
			pol, val := make([]float32, c.Batch*pn), make([]float32, c.Batch)
			if len(c.Input) != c.Batch*in {
				t.Fatalf("input %d values, want %d", len(c.Input), c.Batch*in)
			}
			if err := gr.Evaluate(context.Background(), c.Batch, c.Input, pol, val); err != nil {
				t.Fatal(err)
			}
			if c.PolicyKind == "log_softmax" {
				logSoftmaxRows(pol, pn)
			}
			worst := 0.0
			for i := range c.Policy {
				worst = math.Max(worst, math.Abs(float64(pol[i]-c.Policy[i])))
			}
			for i := range c.Value {
				worst = math.Max(worst, math.Abs(float64(val[i]-c.Value[i])))
			}
			t.Logf("max |graph - pytorch| = %.3g", worst)
			if worst > 1e-5 {
				t.Fatalf("outputs differ from PyTorch's by %g (> 1e-5)", worst)
			}
		})
	}
}

// TestOpenBackend: a ResNet opens on the backend asked for, another graph
// on the CPU graph runner, which refuses other backends.
func TestOpenBackend(t *testing.T) {
	g := games.MustNew("connect4")
	be, _, choice, err := OpenBackend("testdata/torch/resnet_w8_b2.onnx", g, "cpu", 16)
	if err != nil || be.Name() != "cpu" {
		t.Fatalf("ResNet: %v %v", be, err)
	}
	t.Log(choice)
	be, src, choice, err := OpenBackend("testdata/torch/se_resnet_w8_b1.onnx", g, "auto", 16)
	if err != nil || be.Name() != "onnx-cpu" || src.SHA256 == "" || !strings.Contains(choice, "ReduceMean") {
		t.Fatalf("SE: %v %q %v", be, choice, err)
	}
	t.Log(choice)
	if _, _, _, err := OpenBackend("testdata/torch/se_resnet_w8_b1.onnx", g, "cuda:device=0", 16); err == nil || !strings.Contains(err.Error(), "CPU graph runner") {
		t.Fatalf("SE on cuda: %v", err)
	}
	if _, _, _, err := OpenBackend("testdata/torch/se_resnet_w8_b1.onnx", games.MustNew("hex"), "auto", 16); err == nil || !strings.Contains(err.Error(), "channels") {
		t.Fatalf("SE for hex: %v", err)
	}
}

// TestGraphEvaluateAllocs: after compilation, Evaluate allocates nothing.
func TestGraphEvaluateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	gr := seGraph(t, 4)
	in, pn := gr.Shape()
	x, p, v := make([]float32, 4*in), make([]float32, 4*pn), make([]float32, 4)
	ctx := context.Background()
	if a := testing.AllocsPerRun(5, func() { gr.Evaluate(ctx, 4, x, p, v) }); a != 0 {
		t.Errorf("Evaluate allocates %v times", a)
	}
}

// TestGraphEvaluateNonFinite: the graph runner refuses outputs with a NaN
// (here from a NaN input) as the other backends do, instead of handing
// them to a search.
func TestGraphEvaluateNonFinite(t *testing.T) {
	gr := seGraph(t, 2)
	in, pn := gr.Shape()
	x, p, v := make([]float32, 2*in), make([]float32, 2*pn), make([]float32, 2)
	if err := gr.Evaluate(context.Background(), 2, x, p, v); err != nil {
		t.Fatalf("finite input: %v", err)
	}
	x[in+3] = float32(math.NaN()) // row 1
	err := gr.Evaluate(context.Background(), 2, x, p, v)
	if !errors.Is(err, nets.ErrNonFinite) || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("NaN input: %v, want nets.ErrNonFinite naming row 1", err)
	}
}

// seGraph compiles the squeeze-excitation fixture (a graph Import refuses,
// so it runs on the graph runner) for Connect Four, batches up to maxBatch.
func seGraph(t *testing.T, maxBatch int) *Graph {
	t.Helper()
	m, err := ReadFile("testdata/torch/se_resnet_w8_b1.onnx")
	if err != nil {
		t.Fatal(err)
	}
	gr, err := CompileGraph(m, games.MustNew("connect4"), ImportOptions{}, maxBatch)
	if err != nil {
		t.Fatal(err)
	}
	return gr
}
