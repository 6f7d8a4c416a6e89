package onnx

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// BenchmarkImportedVsNative compares inference of the connect4 preset
// (64 channels, 5 blocks) made by Canopy with the same network exported to
// ONNX and imported back: an imported plain ResNet is an ordinary
// nets.Net, so the two should run at the same speed (docs/BENCHMARKS.md);
// "graph" is the same model on the CPU graph runner.
//
//	go test -run '^$' -bench ImportedVsNative -count 5 ./nets/onnx
func BenchmarkImportedVsNative(b *testing.B) {
	g := games.MustNew("connect4")
	cfg, err := nets.Preset("connect4")
	if err != nil {
		b.Fatal(err)
	}
	native, err := nets.New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	randomizeBN(native, 2)
	buf, err := Export(native, ExportOptions{Game: g})
	if err != nil {
		b.Fatal(err)
	}
	m, err := Decode(buf, "")
	if err != nil {
		b.Fatal(err)
	}
	imported, err := Import(m, g, ImportOptions{})
	if err != nil {
		b.Fatal(err)
	}
	const batch = 64
	graph, err := CompileGraph(m, g, ImportOptions{}, batch)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		run  func(x, pol, val []float32)
	}{
		{"native", func(x, pol, val []float32) { native.Forward(batch, x, pol, val) }},
		{"imported", func(x, pol, val []float32) { imported.Forward(batch, x, pol, val) }},
		// The same graph on the CPU graph runner, the path of graphs that
		// are not Canopy's ResNet.
		{"graph", func(x, pol, val []float32) { graph.Evaluate(ctx, batch, x, pol, val) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			x := testInput(native, batch, 1)
			pol, val := make([]float32, batch*native.PolicySize()), make([]float32, batch)
			c.run(x, pol, val)
			for b.Loop() {
				c.run(x, pol, val)
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "evals/s")
		})
	}
}
