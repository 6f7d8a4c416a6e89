package train

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// TestPyTorchInterop trains a small net for a few steps, then has
// testdata/interop.py read the shard with numpy and the checkpoint with a
// plain-Python safetensors parser, rebuild the network in PyTorch from the
// config in the metadata, and compare its outputs with Go's on the shard's
// observations (1e-4). Like the numpy check of package selfplay, it skips
// when /usr/bin/python3 lacks torch or numpy (the reference data of
// package nets, by contrast, is checked in and always compared).
func TestPyTorchInterop(t *testing.T) {
	if out, err := exec.Command("/usr/bin/python3", "-c", "import torch, numpy").CombinedOutput(); err != nil {
		t.Skipf("/usr/bin/python3 with torch and numpy is not available (apt-get install python3-torch python3-numpy): %v: %s",
			err, strings.TrimSpace(lastLine(string(out))))
	}
	g := games.MustNew("connect4")
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	writeRun(t, run, g, 3, 3, 21, true)
	ds, err := LoadDataset([]string{run}, g, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nets.Config{Head: nets.HeadAlphaZero, Channels: 16, Blocks: 2, ValueHidden: 16}.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nets.New(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.Steps, opt.Batch, opt.OutDir = 5, 16, filepath.Join(dir, "nets")
	res, err := Run(context.Background(), net, ds, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Go's outputs on the first n observations, from the checkpoint file.
	saved, _, err := LoadCheckpoint(res.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	n := min(16, ds.Len())
	O, A := saved.InputSize(), saved.PolicySize()
	in := make([]float32, 0, n*O)
	for i := range n {
		in = in[:len(in)+O]
		ds.Row(i, in[len(in)-O:])
	}
	pol, val := make([]float32, n*A), make([]float32, n)
	saved.Forward(n, in, pol, val)
	want := filepath.Join(dir, "want.npz")
	writeFile(t, want, npzBytes(t, []testArray{
		{name: "policy", descr: "<f4", shape: []int{n, A}, data: pol},
		{name: "value", descr: "<f4", shape: []int{n}, data: val},
	}))
	out, err := exec.Command("/usr/bin/python3", filepath.Join("testdata", "interop.py"), ds.Sources()[0].Path, res.Checkpoint,
		want, "16").CombinedOutput()
	if err != nil {
		t.Fatalf("interop.py: %v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
