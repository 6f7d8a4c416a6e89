package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// TestNetONNXCLI: export a network, import it back (the game from the
// model's metadata), and the imported net is the same network.
func TestNetONNXCLI(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "n.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "connect4", "--channels", "8", "--blocks", "1", "--out", src); code != 0 {
		t.Fatalf("init: %q", errs)
	}
	model := filepath.Join(dir, "n.onnx")
	code, out, errs := runCLI(t, "", "net", "export", src, "--onnx", model)
	if code != 0 || !strings.Contains(out, `"policy" [batch,7]`) {
		t.Fatalf("export: %d %q %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, "", "net", "info", model); code != 0 || !strings.Contains(out, "canopy.game = connect4") || !strings.Contains(out, "obs [batch,2,6,7]") {
		t.Errorf("info of the ONNX file: %d %q %q", code, out, errs)
	}
	back := filepath.Join(dir, "back.safetensors")
	code, out, errs = runCLI(t, "", "net", "import", model, "--out", back)
	if code != 0 || !strings.Contains(out, "wrote "+back) || !strings.Contains(out, "1 blocks x 8 channels") {
		t.Fatalf("import: %d %q %q", code, out, errs)
	}
	a, err := nets.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	b, meta, err := nets.LoadWithMetadata(back)
	if err != nil {
		t.Fatal(err)
	}
	if meta["canopy.onnx.source"] != "n.onnx" || meta["canopy.onnx.opset"] != "17" {
		t.Errorf("metadata %v", meta)
	}
	for _, p := range a.Params() {
		q, _ := b.Param(p.Name)
		if q == nil || !slicesEqual(p.Data, q.Data) {
			t.Fatalf("%s differs after export and import", p.Name)
		}
	}
	if code, out, _ := runCLI(t, "", "net", "eval", "--net", back); code != 0 || !strings.Contains(out, "value") {
		t.Errorf("eval of the imported net: %d %q", code, out)
	}
}

func slicesEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestNetONNXCLIErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "connect4", "--channels", "4", "--blocks", "1", "--out", good); code != 0 {
		t.Fatalf("init: %q", errs)
	}
	model := filepath.Join(dir, "good.onnx")
	if code, _, errs := runCLI(t, "", "net", "export", good, "--onnx", model); code != 0 {
		t.Fatalf("export: %q", errs)
	}
	junk := filepath.Join(dir, "junk.onnx")
	os.WriteFile(junk, []byte("\x08\x07not protobuf at all\xff\xff"), 0o644)
	se := filepath.Join("..", "..", "nets", "onnx", "testdata", "torch", "se_resnet_w8_b1.onnx")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"net", "export", good}, 2, "--onnx"},
		{[]string{"net", "export", "--onnx", model}, 2, "one network"},
		{[]string{"net", "export", filepath.Join(dir, "missing"), "--onnx", model}, 2, "missing"}, // a missing input is a usage error
		{[]string{"net", "export", good, "--onnx", filepath.Join(dir, "no", "x.onnx")}, 1, "does not exist"},
		{[]string{"net", "export", good, "--game", "nosuchgame", "--onnx", model}, 2, "nosuchgame"},
		{[]string{"net", "import"}, 2, "one ONNX file"},
		{[]string{"net", "import", junk, "--game", "connect4"}, 1, "not an ONNX model"},
		{[]string{"net", "import", filepath.Join(dir, "missing.onnx"), "--game", "connect4"}, 2, "missing.onnx"},
		{[]string{"net", "import", model, "--game", "hex"}, 1, "channels 2 vs 3"},
		{[]string{"net", "import", model, "--game", "nosuchgame"}, 2, "nosuchgame"},
		{[]string{"net", "import", model, "--out", model}, 2, "overwrite"},
		{[]string{"net", "import", model, "--policy-output", "nope", "--out", filepath.Join(dir, "x.safetensors")}, 1, "no output \"nope\""},
		{[]string{"net", "import", se, "--game", "connect4", "--out", filepath.Join(dir, "se.safetensors")}, 1, "ReduceMean"},
	} {
		code, _, errs := runCLI(t, "", c.args...)
		lines := strings.Count(strings.TrimSpace(errs), "\n") + 1
		if code != c.code || !strings.Contains(errs, c.want) || (code == 1 && lines != 1) {
			t.Errorf("%v: status %d (want %d), stderr %q (want one line mentioning %q)", c.args, code, c.code, errs, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "se.safetensors")); err == nil {
		t.Error("a refused import wrote its output")
	}
}

// TestNetONNXExportRecurrent: a recurrent CNN-LSTM exports as one step
// with its state as inputs and outputs.
func TestNetONNXExportRecurrent(t *testing.T) {
	g, err := games.New("sequence:jacks=false")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := nets.RecurrentPreset("sequence-lstm")
	cfg.ConvChannels, cfg.BoardDense, cfg.Hidden = []int{4}, 8, 8
	if cfg, err = cfg.ForGame(g); err != nil {
		t.Fatal(err)
	}
	r, err := nets.NewRecurrent(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "lstm.safetensors")
	if err := r.Save(src); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", "net", "export", src, "--onnx", filepath.Join(dir, "lstm.onnx"))
	if code != 0 || !strings.Contains(out, `"h_in"`) || !strings.Contains(out, "sequence:jacks=false") {
		t.Fatalf("export: %d %q %q", code, out, errs)
	}
}

// TestAgentsTakeONNX: network agents take an .onnx file as it is: a plain
// ResNet through the mapping, a squeeze-excitation net on the CPU graph
// runner; commands that need a Canopy network say how to convert one.
func TestAgentsTakeONNX(t *testing.T) {
	dir := filepath.Join("..", "..", "nets", "onnx", "testdata", "torch")
	for _, agent := range []string{
		"az:net=" + filepath.Join(dir, "se_resnet_w8_b1.onnx") + ",sims=8",
		"policy:net=" + filepath.Join(dir, "resnet_w8_b2.onnx"),
		"mcts:eval=" + filepath.Join(dir, "gpool_value_w8_b1.onnx") + ",sims=8",
	} {
		if code, out, errs := runCLI(t, "", "move", "--game", "connect4", "--agent", agent, "--moves", "44"); code != 0 || strings.TrimSpace(out) == "" {
			t.Errorf("%s: %d %q %q", agent, code, out, errs)
		}
	}
	model := filepath.Join(dir, "resnet_w8_b2.onnx")
	code, _, errs := runCLI(t, "", "selfplay", "--game", "connect4", "--net", model, "--games", "1", "--out", filepath.Join(t.TempDir(), "sp"))
	if code == 0 || !strings.Contains(errs, "canopy net import") {
		t.Errorf("selfplay --net X.onnx: %d %q", code, errs)
	}
}
