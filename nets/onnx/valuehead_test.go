package onnx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/tetrislink"
	"github.com/canopy-go/canopy/nets"
)

// perPlayerNets are networks with a per-player value head
// (nets.Config.ValuePlayers) for a three-player game, both heads.
func perPlayerNets(t *testing.T) (games.Game, map[string]*nets.Net) {
	t.Helper()
	g := games.MustNew("tetrislink:players=3")
	out := map[string]*nets.Net{}
	for name, cfg := range map[string]nets.Config{
		"az-tetrislink3":  {Head: nets.HeadAlphaZero, Channels: 4, Blocks: 1, ValueHidden: 8},
		"ppo-tetrislink3": {Head: nets.HeadPPO, ConvChannels: []int{3}, Dense: 8, ValuePlayers: 3},
	} {
		c, err := cfg.ForGame(g)
		if err != nil {
			t.Fatal(err)
		}
		if c.ValuePlayers != 3 {
			t.Fatalf("%s: value_players %d, want 3", name, c.ValuePlayers)
		}
		n, err := nets.New(c, 5)
		if err != nil {
			t.Fatal(err)
		}
		randomizeBN(n, 13)
		out[name] = n
	}
	return g, out
}

// TestExportPerPlayerValueHead: a per-player value head exports as a
// [batch, players] value output that passes onnx.checker and, run by the
// numpy evaluator of testdata/check_export.py, gives Canopy's values
// within 1e-5; the metadata states the seat rotation; importing the
// export gives the same network back (value_players and outputs).
func TestExportPerPlayerValueHead(t *testing.T) {
	g, ns := perPlayerNets(t)
	const batch = 3
	var checks outsideChecks
	dir := t.TempDir()
	for name, n := range ns {
		buf, err := Export(n, ExportOptions{Game: g})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		model := filepath.Join(dir, name+".onnx")
		if err := os.WriteFile(model, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ReadFile(model)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(m.Metadata[MetaValue], "one per player, seat-rotated") {
			t.Errorf("%s: value metadata %q does not state the seat rotation", name, m.Metadata[MetaValue])
		}
		x := testInput(n, batch, 9)
		pol, val := make([]float32, batch*n.PolicySize()), make([]float32, batch*3)
		n.Forward(batch, x, pol, val)
		back, err := Import(m, g, ImportOptions{})
		if err != nil {
			t.Fatalf("%s: import of the export: %v", name, err)
		}
		if back.Config().ValuePlayers != 3 {
			t.Errorf("%s: imported value_players %d, want 3", name, back.Config().ValuePlayers)
		}
		pol2, val2 := make([]float32, len(pol)), make([]float32, len(val))
		back.Forward(batch, x, pol2, val2)
		for i := range val {
			if d := val[i] - val2[i]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("%s: value %d after import %g, before %g", name, i, val2[i], val[i])
			}
		}
		checks.add(t, model, batch, map[string][]float32{InputName: x}, map[string][]float32{PolicyName: pol, ValueName: val})
	}
	needPython(t)
	checks.run(t)
}

// A value output that is neither one value nor one per player is refused
// with an error naming both.
func TestImportRefusesOtherValueWidths(t *testing.T) {
	g := games.MustNew("tetrislink:players=3")
	c, err := nets.Config{Head: nets.HeadAlphaZero, Channels: 4, Blocks: 1, ValueHidden: 8}.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	c.Game, c.ValuePlayers = "", 2 // two values for a three-player game
	n, err := nets.New(c, 5)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := Export(n, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "two.onnx")
	if err := os.WriteFile(model, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Import(m, g, ImportOptions{ValueOutput: ValueName}); err == nil || !strings.Contains(err.Error(), "or one per player (3") {
		t.Errorf("a 2-value head imported for 3 players: %v", err)
	}
	if _, err := Import(m, g, ImportOptions{}); err == nil || !strings.Contains(err.Error(), "[batch,3] with a value per player") {
		t.Errorf("a 2-value head imported for 3 players without naming the output: %v", err)
	}
}
