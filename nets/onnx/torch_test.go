package onnx

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// torchCase is one fixture of testdata/make_fixtures.py: PyTorch's
// outputs on recorded inputs, or the error the import must give.
type torchCase struct {
	Game   string    `json:"game"`
	Batch  int       `json:"batch"`
	Input  []float32 `json:"input"`
	Policy []float32 `json:"policy"`
	Value  []float32 `json:"value"`
	Error  string    `json:"error"`
	// PolicyKind "log_softmax": PyTorch's policy output is a log-softmax,
	// which the import drops (Canopy wants logits); the test compares the
	// log-softmax of Canopy's logits.
	PolicyKind string `json:"policy_kind"`
}

// logSoftmaxRows replaces each row of n values by its log-softmax.
func logSoftmaxRows(x []float32, n int) {
	for r := 0; r+n <= len(x); r += n {
		row := x[r : r+n]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, float64(v))
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(float64(v) - mx)
		}
		for i, v := range row {
			row[i] = float32(float64(v) - mx - math.Log(s))
		}
	}
}

// TestImportTorch: networks exported by PyTorch (torch.onnx.export, other
// widths and depths, biases, batch norm folded or kept, MatMul, log-softmax,
// opsets 11-17) import and give PyTorch's outputs within 1e-5; those that
// are not Canopy's ResNet are refused naming the first node that is not.
func TestImportTorch(t *testing.T) {
	files, err := filepath.Glob("testdata/torch/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures (run testdata/make_fixtures.py): %v", err)
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
			g := games.MustNew(c.Game)
			m, err := ReadFile(strings.TrimSuffix(f, ".json") + ".onnx")
			if err != nil {
				t.Fatal(err)
			}
			net, err := Import(m, g, ImportOptions{})
			if c.Error != "" {
				if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.Error) || !strings.Contains(err.Error(), "node #") {
					t.Fatalf("import gave %v; want an error naming node %s", err, c.Error)
				}
				t.Logf("refused as it should: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pol, val := forward(net, c.Batch, c.Input)
			if c.PolicyKind == "log_softmax" {
				logSoftmaxRows(pol, net.PolicySize())
			}
			worst := 0.0
			for i := range c.Policy {
				worst = math.Max(worst, math.Abs(float64(pol[i]-c.Policy[i])))
			}
			for i := range c.Value {
				worst = math.Max(worst, math.Abs(float64(val[i]-c.Value[i])))
			}
			t.Logf("%s: max |canopy - pytorch| = %.3g", net.Config().JSON(), worst)
			if worst > 1e-5 {
				t.Fatalf("outputs differ from PyTorch's by %g (> 1e-5)", worst)
			}
		})
	}
}

// TestTorchImportExportOutside: PyTorch -> import -> export, and the
// exported model, run by the numpy evaluator, still gives PyTorch's
// outputs within 1e-5 (the log-softmax policy, which the import drops,
// is compared on the value only).
func TestTorchImportExportOutside(t *testing.T) {
	needPython(t)
	files, _ := filepath.Glob("testdata/torch/*.json")
	dir := t.TempDir()
	var checks outsideChecks
	for _, f := range files {
		js, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c torchCase
		if err := json.Unmarshal(js, &c); err != nil {
			t.Fatal(err)
		}
		if c.Error != "" {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		m, err := ReadFile(strings.TrimSuffix(f, ".json") + ".onnx")
		if err != nil {
			t.Fatal(err)
		}
		g := games.MustNew(c.Game)
		net, err := Import(m, g, ImportOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		buf, err := Export(net, ExportOptions{Game: g})
		if err != nil {
			t.Fatal(err)
		}
		model := filepath.Join(dir, name+".onnx")
		if err := os.WriteFile(model, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		want := map[string][]float32{ValueName: c.Value}
		if c.PolicyKind == "" {
			want[PolicyName] = c.Policy
		}
		checks.add(t, model, c.Batch, map[string][]float32{InputName: c.Input}, want)
	}
	checks.run(t)
}
