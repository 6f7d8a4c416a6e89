package onnx

import (
	"strings"
	"testing"

	"github.com/canopy-go/canopy/nets"
)

// Export refuses a per-player value head with a clear error rather than
// writing a graph whose value output has the scalar head's shape.
func TestExportRefusesPerPlayerValueHead(t *testing.T) {
	n, err := nets.New(nets.Config{InputPlanes: 2, Height: 3, Width: 3, PolicySize: 4, Channels: 4, Blocks: 1, ValueHidden: 4, ValuePlayers: 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Export(n, ExportOptions{}); err == nil || !strings.Contains(err.Error(), "per-player value head") {
		t.Errorf("export of a 3-player value head: %v", err)
	}
}
