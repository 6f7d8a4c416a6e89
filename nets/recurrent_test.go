package nets

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)

// tinyRecurrent is a small CNN-LSTM with every weight and bias random.
func tinyRecurrent(t *testing.T) *Recurrent {
	t.Helper()
	cfg := RecurrentConfig{Planes: 2, Height: 4, Width: 5, Flat: 6, ConvChannels: []int{3, 4},
		BoardDense: 5, FlatDense: 3, Hidden: 4, Cards: 2, Squares: 20}
	r, err := NewRecurrent(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := games.NewRand(8)
	for _, p := range r.Params() {
		for i := range p.Data {
			p.Data[i] = float32(rng.NormFloat64() * 0.5)
		}
	}
	return r
}

func randSlice(rng interface{ NormFloat64() float64 }, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// torchPython returns /usr/bin/python3 when it imports torch, or skips.
func torchPython(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts PyTorch (seconds); run without -short")
	}
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skipf("%s cannot import torch (%v): install Debian's python3-torch to compare with PyTorch", py, err)
	}
	return py
}

// Forward outputs, the final state and every weight gradient of a
// segment with a reset in its middle, against the PyTorch model of
// testdata/recurrent_reference.py (nn.Conv2d, nn.Linear, nn.LSTMCell,
// autograd), to 1e-4.
func TestRecurrentPyTorchReference(t *testing.T) {
	py := torchPython(t)
	r := tinyRecurrent(t)
	const T, B = 3, 2
	c := r.Config()
	rng := games.NewRand(21)
	in := randSlice(rng, T*B*r.InputSize())
	for i := range in {
		if i%3 == 0 {
			in[i] = 0 // some zero inputs, as board planes have
		}
	}
	h0, c0 := randSlice(rng, B*c.Hidden), randSlice(rng, B*c.Hidden)
	reset := []bool{false, false, false, true, false, false} // sequence 1 starts an episode at t=1
	rp, rv := randSlice(rng, T*B*r.PolicySize()), randSlice(rng, T*B)

	weights := map[string][]float32{}
	for _, p := range r.Params() {
		weights[p.Name] = dataFile(p)
	}
	resetF := make([]float32, len(reset))
	for i, x := range reset {
		if x {
			resetF[i] = 1
		}
	}
	req := map[string]any{"config": c, "weights": weights, "T": T, "B": B, "input": in, "h0": h0, "c0": c0,
		"reset": resetF, "rp": rp, "rv": rv}
	dir := t.TempDir()
	buf, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	inPath, outPath := filepath.Join(dir, "in.json"), filepath.Join(dir, "out.json")
	if err := os.WriteFile(inPath, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, filepath.Join("testdata", "recurrent_reference.py"), inPath, outPath).CombinedOutput(); err != nil {
		t.Fatalf("PyTorch reference: %v\n%s", err, out)
	}
	var ref struct {
		Policy, Value, HT, CT []float32
		Grad                  map[string][]float32
	}
	buf, err = os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf, &ref); err != nil {
		t.Fatal(err)
	}

	pol, val := make([]float32, T*B*r.PolicySize()), make([]float32, T*B)
	hT, cT := make([]float32, B*c.Hidden), make([]float32, B*c.Hidden)
	if err := r.ForwardTrain(T, B, in, h0, c0, reset, pol, val, hT, cT); err != nil {
		t.Fatal(err)
	}
	closeTo(t, "policy", pol, ref.Policy, 1e-4)
	closeTo(t, "value", val, ref.Value, 1e-4)
	closeTo(t, "hT", hT, ref.HT, 1e-4)
	closeTo(t, "cT", cT, ref.CT, 1e-4)
	r.ZeroGrad()
	if err := r.Backward(rp, rv); err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Params() {
		want, ok := ref.Grad[p.Name]
		if !ok {
			t.Fatalf("PyTorch has no parameter %q", p.Name)
		}
		closeTo(t, "grad "+p.Name, gradFile(p), want, 1e-4)
	}
	if len(ref.Grad) != len(r.Params()) {
		t.Errorf("PyTorch has %d parameters, the net %d", len(ref.Grad), len(r.Params()))
	}
}

// Stepping a segment move by move (Step, the rollout and play path) gives
// the outputs and final state of ForwardTrain over the whole segment.
func TestRecurrentStepMatchesSegment(t *testing.T) {
	r := tinyRecurrent(t)
	const T, B = 4, 3
	H, P, I := r.Hidden(), r.PolicySize(), r.InputSize()
	rng := games.NewRand(2)
	in := randSlice(rng, T*B*I)
	h0, c0 := randSlice(rng, B*H), randSlice(rng, B*H)
	reset := make([]bool, T*B)
	reset[1*B+2], reset[3*B+0] = true, true
	pol, val := make([]float32, T*B*P), make([]float32, T*B)
	hT, cT := make([]float32, B*H), make([]float32, B*H)
	if err := r.ForwardTrain(T, B, in, h0, c0, reset, pol, val, hT, cT); err != nil {
		t.Fatal(err)
	}
	h, c := append([]float32(nil), h0...), append([]float32(nil), c0...)
	sp, sv := make([]float32, B*P), make([]float32, B)
	for s := range T {
		if err := r.Step(B, in[s*B*I:(s+1)*B*I], h, c, reset[s*B:(s+1)*B], sp, sv); err != nil {
			t.Fatal(err)
		}
		closeTo(t, "step policy", sp, pol[s*B*P:(s+1)*B*P], 1e-6)
		closeTo(t, "step value", sv, val[s*B:(s+1)*B], 1e-6)
	}
	closeTo(t, "h after the segment", h, hT, 1e-6)
	closeTo(t, "c after the segment", c, cT, 1e-6)
	// The race detector makes sync.Pool drop items (the kernels' scratch).
	if !raceEnabled && testing.AllocsPerRun(20, func() { _ = r.Step(B, in[:B*I], h, c, nil, sp, sv) }) != 0 {
		t.Error("Step allocates")
	}
}

// The policy is factored: logit(card k, square j) = card[k] + square[j],
// so every 2x2 minor of the Cards x Squares logit matrix cancels.
func TestRecurrentFactoredPolicy(t *testing.T) {
	r := tinyRecurrent(t)
	rng := games.NewRand(4)
	H := r.Hidden()
	pol, val := make([]float32, r.PolicySize()), make([]float32, 1)
	if err := r.Step(1, randSlice(rng, r.InputSize()), randSlice(rng, H), randSlice(rng, H), nil, pol, val); err != nil {
		t.Fatal(err)
	}
	S := r.Config().Squares
	for j := 1; j < S; j++ {
		d := pol[j] - pol[0] - (pol[S+j] - pol[S])
		if d > 1e-5 || d < -1e-5 {
			t.Fatalf("square %d: logit differences %v and %v between cards differ", j, pol[j]-pol[0], pol[S+j]-pol[S])
		}
	}
}

// Save and LoadRecurrent round-trip the weights and the config; a plain
// net's loader refuses the file with a clear error.
func TestRecurrentSaveLoad(t *testing.T) {
	r := tinyRecurrent(t)
	path := filepath.Join(t.TempDir(), "r.safetensors")
	if err := r.SaveWithMetadata(path, map[string]string{"canopy.update": "7"}); err != nil {
		t.Fatal(err)
	}
	back, meta, err := LoadRecurrent(path)
	if err != nil {
		t.Fatal(err)
	}
	if meta["canopy.update"] != "7" {
		t.Errorf("metadata %v lost the extra entry", meta)
	}
	for i, p := range r.Params() {
		q := back.Params()[i]
		if q.Name != p.Name {
			t.Fatalf("tensor %d: %q, want %q", i, q.Name, p.Name)
		}
		for k := range p.Data {
			if p.Data[k] != q.Data[k] {
				t.Fatalf("%s[%d] = %v after loading, want %v", p.Name, k, q.Data[k], p.Data[k])
			}
		}
	}
	if _, err := Load(path); err == nil {
		t.Error("Load accepted a recurrent file as a plain net")
	}
	if _, _, err := OpenNet(path, games.MustNew("tictactoe")); err == nil || !strings.Contains(err.Error(), "recurrent") {
		t.Errorf("OpenNet of a recurrent file: %v, want an error saying it is recurrent", err)
	}
	buf, _ := os.ReadFile(path)
	if !IsRecurrentFile(buf) {
		t.Error("IsRecurrentFile is false for a recurrent file")
	}
}
