package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/nets/ortbackend"
)

// The commands run a PyTorch-exported ONNX model for tictactoe on the ort
// backend (ONNX Runtime's CPU build, fetched by `make ort`): bench net,
// self-play through the batcher, and the probe line.
func TestCommandsOnORT(t *testing.T) {
	if _, err := ortbackend.Load(); errors.Is(err, ortbackend.ErrNoLibrary) {
		t.Skipf("skipping: %v", err)
	}
	model, err := filepath.Abs("../../nets/ortbackend/testdata/tictactoe.onnx")
	if err != nil {
		t.Fatal(err)
	}
	spec := "ort:model=" + model + ",threads=1"
	code, out, errs := runCLI(t, "", "bench", "net", "--game", "tictactoe", "--backend", spec, "--batches", "1,8", "--seconds", "0.05", "--quiet")
	if code != 0 || !strings.Contains(out, "using "+spec+" (requested)") {
		t.Errorf("bench net on ort: %d\n%s%s", code, out, errs)
	}
	dir := filepath.Join(t.TempDir(), "sp")
	code, out, errs = runCLI(t, "", "selfplay", "--game", "tictactoe", "--games", "2", "--trees", "2", "--sims", "8", "--backend", spec, "--out", dir, "--quiet")
	if m, err := os.ReadFile(filepath.Join(dir, "manifest.json")); code != 0 || err != nil || !strings.Contains(string(m), `"backend": "ort`) {
		t.Errorf("selfplay on ort: %d %v\n%s%s\n%s", code, err, out, errs, m)
	}
	code, _, errs = runCLI(t, "", "bench", "net", "--game", "tictactoe", "--backend", "ort", "--seconds", "0.05", "--quiet")
	if code != 2 || !strings.Contains(errs, "ort:model=FILE.onnx") {
		t.Errorf("ort without a model: status %d, %q; want 2 and how to name one", code, errs)
	}
	code, _, errs = runCLI(t, "", "bench", "net", "--game", "connect4", "--backend", spec, "--seconds", "0.05", "--quiet")
	if code != 1 || !strings.Contains(errs, "takes 18 values per position") {
		t.Errorf("a tictactoe model for connect4: status %d, %q", code, errs)
	}
	code, out, _ = runCLI(t, "", "backends", "--probe")
	if code != 0 || !strings.Contains(out, "ort here: ONNX Runtime ") || !strings.Contains(out, "CPUExecutionProvider") {
		t.Errorf("backends --probe: %d\n%s", code, out)
	}
}
