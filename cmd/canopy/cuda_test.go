package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/cuda/fakecuda"
)

// The commands run whole on the cuda backend of the emulated CUDA device
// (cuda/fakecuda): self-play writes its shards and bench search measures,
// with every network row evaluated by net.cu compiled as host code behind
// the real bindings (streams, pinned buffers, graphs). It needs a C++
// compiler; without one it skips and says so.
func TestCommandsOnEmulatedCUDA(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("a real NVIDIA driver is installed: make gpu-check tests the GPU")
	}
	dir, err := fakecuda.Build()
	if errors.Is(err, fakecuda.ErrNoCompiler) {
		t.Skipf("no emulated CUDA device: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sp")
	for _, args := range [][]string{
		{"selfplay", "--game", "tictactoe", "--games", "4", "--trees", "4", "--sims", "16", "--backend", "cuda", "--out", out, "--quiet"},
		{"bench", "search", "--game", "connect4", "--net", "init", "--backend", "cuda:precision=fp32,graphs=true", "--trees", "8", "--sims", "8",
			"--seconds", "1", "--quiet", "--out", filepath.Join(t.TempDir(), "bench"), "--json"},
	} {
		js, _ := json.Marshal(args)
		cmd := exec.Command(os.Args[0], "-test.run=^TestCLIHelperProcess$")
		cmd.Env = append(os.Environ(), cliHelperEnv+"="+string(js), "CANOPY_CUDA_LIBS="+dir, "CANOPY_CUDA_CACHE=off")
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("canopy %s on the emulated device: %v\n%s%s", strings.Join(args, " "), err, so.String(), se.String())
		}
		if args[0] == "bench" && !strings.Contains(so.String(), `"backend": "cuda"`) {
			t.Errorf("bench search did not run on cuda:\n%s", so.String())
		}
	}
	m, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil || !strings.Contains(string(m), `"backend": "cuda"`) || !strings.Contains(string(m), `"games": 4`) {
		t.Errorf("self-play manifest on cuda: %v\n%s", err, m)
	}
}
