package onnx

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/hex"
	"github.com/canopy-go/canopy/nets"
)

// testNets are networks of every head Canopy exports, with random batch
// norm statistics so that folding matters.
func testNets(t *testing.T) map[string]*nets.Net {
	t.Helper()
	mk := func(game string, cfg nets.Config, legal bool) *nets.Net {
		g := games.MustNew(game)
		c, err := cfg.ForGame(g)
		if err != nil {
			t.Fatal(err)
		}
		if legal {
			c.InputPlanes++
		}
		n, err := nets.New(c, 7)
		if err != nil {
			t.Fatal(err)
		}
		randomizeBN(n, 11)
		return n
	}
	return map[string]*nets.Net{
		"az-connect4":        mk("connect4", nets.Config{Head: nets.HeadAlphaZero, Channels: 8, Blocks: 2, ValueHidden: 16}, false),
		"az-hex5-filters":    mk("hex:size=5", nets.Config{Head: nets.HeadAlphaZero, Channels: 6, Blocks: 1, ValueHidden: 8, PolicyFilters: 3, ValueFilters: 2}, false),
		"az-noblocks-legal":  mk("connect4", nets.Config{Head: nets.HeadAlphaZero, Channels: 4, Blocks: 0, ValueHidden: 4}, true),
		"ppo-connect4":       mk("connect4", nets.Config{Head: nets.HeadPPO, ConvChannels: []int{4, 8}, Dense: 16}, false),
		"ppo-connect4-legal": mk("connect4", nets.Config{Head: nets.HeadPPO, ConvChannels: []int{5}, Dense: 8}, true),
	}
}

// randomizeBN gives batch norm layers non-trivial statistics and biases
// small random values.
func randomizeBN(n *nets.Net, seed uint64) {
	rng := games.NewRand(seed)
	for _, p := range n.Params() {
		switch {
		case hasSuffix(p.Name, ".running_var"):
			for i := range p.Data {
				p.Data[i] = float32(0.5 + rng.Float64())
			}
		case hasSuffix(p.Name, ".running_mean"), hasSuffix(p.Name, ".bias"):
			for i := range p.Data {
				p.Data[i] = float32(rng.NormFloat64() * 0.2)
			}
		case hasSuffix(p.Name, "bn.weight"), hasSuffix(p.Name, "bn1.weight"), hasSuffix(p.Name, "bn2.weight"):
			for i := range p.Data {
				p.Data[i] = float32(0.7 + 0.6*rng.Float64())
			}
		}
	}
	n.Invalidate()
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }

// testInput is a batch of random 0/1 planes (like board observations).
func testInput(n *nets.Net, batch int, seed uint64) []float32 {
	rng := games.NewRand(seed)
	x := make([]float32, batch*n.InputSize())
	for i := range x {
		if rng.IntN(3) == 0 {
			x[i] = 1
		}
	}
	return x
}

func forward(n *nets.Net, batch int, x []float32) (policy, value []float32) {
	policy, value = make([]float32, batch*n.PolicySize()), make([]float32, batch)
	n.Forward(batch, x, policy, value)
	return policy, value
}

// TestExportOutsideCheck: every exported head passes onnx.checker with full
// shape inference, and a numpy evaluator of the graph written for the test
// gives Canopy's outputs within 1e-5.
func TestExportOutsideCheck(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	var checks outsideChecks
	for name, n := range testNets(t) {
		buf, err := Export(n, ExportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		model := filepath.Join(dir, name+".onnx")
		if err := os.WriteFile(model, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		const batch = 3
		x := testInput(n, batch, 5)
		pol, val := forward(n, batch, x)
		checks.add(t, model, batch, map[string][]float32{InputName: x}, map[string][]float32{PolicyName: pol, ValueName: val})
	}
	checks.run(t)
}

// outsideChecks collects models and their expected outputs, then runs
// testdata/check_export.py on all of them in one Python process
// (onnx.checker, strict shape inference, and the numpy evaluator).
type outsideChecks struct {
	args []string // model, case, model, case, ...
}

// add writes model's case: the inputs and the outputs it must give.
func (c *outsideChecks) add(t *testing.T, model string, batch int, inputs, want map[string][]float32) {
	t.Helper()
	js, err := json.Marshal(map[string]any{"batch": batch, "inputs": inputs, "tol": 1e-5, "outputs": want})
	if err != nil {
		t.Fatal(err)
	}
	casePath := model + ".json"
	if err := os.WriteFile(casePath, js, 0o644); err != nil {
		t.Fatal(err)
	}
	c.args = append(c.args, model, casePath)
}

// run checks every model added; any disagreement fails t.
func (c *outsideChecks) run(t *testing.T) {
	t.Helper()
	if len(c.args) == 0 {
		t.Fatal("nothing to check")
	}
	out, err := exec.Command(python, append([]string{"testdata/check_export.py"}, c.args...)...).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("outside check failed: %v", err)
	}
}

// TestExportRecurrentOutsideCheck: the CNN-LSTM's one-step graph passes
// onnx.checker and the numpy evaluator gives Recurrent.Step's policy,
// value and next state from a non-zero state.
func TestExportRecurrentOutsideCheck(t *testing.T) {
	needPython(t)
	cfg := nets.RecurrentConfig{Game: "test", Planes: 2, Height: 3, Width: 4, Flat: 5, ConvChannels: []int{3, 4},
		BoardDense: 6, FlatDense: 3, Hidden: 5, Cards: 2, Squares: 12}
	r, err := nets.NewRecurrent(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := ExportRecurrent(r, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "lstm.onnx")
	if err := os.WriteFile(model, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	const batch = 3
	rng := games.NewRand(4)
	x := make([]float32, batch*r.InputSize())
	for i := range x {
		x[i] = float32(rng.IntN(2))
	}
	h, c := make([]float32, batch*cfg.Hidden), make([]float32, batch*cfg.Hidden)
	for i := range h {
		h[i], c[i] = float32(rng.NormFloat64()*0.5), float32(rng.NormFloat64())
	}
	hIn, cIn := append([]float32(nil), h...), append([]float32(nil), c...)
	pol, val := make([]float32, batch*r.PolicySize()), make([]float32, batch)
	if err := r.Step(batch, x, h, c, nil, pol, val); err != nil {
		t.Fatal(err)
	}
	var checks outsideChecks
	checks.add(t, model, batch, map[string][]float32{InputName: x, HiddenIn: hIn, CellIn: cIn},
		map[string][]float32{PolicyName: pol, ValueName: val, HiddenOut: h, CellOut: c})
	checks.run(t)
}
