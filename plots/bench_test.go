package plots

import (
	"bytes"
	"context"
	"github.com/canopy-go/canopy/agent"
	"testing"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
)

// sequenceLogFile returns n random-vs-greedy Sequence games as one JSON
// lines file.
func sequenceLogFile(b *testing.B, n int) []byte {
	b.Helper()
	g, err := games.New("sequence")
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	for i := range n {
		specs := []string{"random", "sequence-greedy"}
		ags, err := arena.NewAgents(g, specs, agent.Env{Seed: uint64(i)})
		if err != nil {
			b.Fatal(err)
		}
		rec, err := arena.PlayGame(context.Background(), g, ags, specs, uint64(i))
		arena.CloseAgents(ags)
		if err != nil {
			b.Fatal(err)
		}
		l, err := arena.LogFromRecord(g, rec, 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := arena.WriteLog(&buf, l); err != nil {
			b.Fatal(err)
		}
	}
	return buf.Bytes()
}

// BenchmarkSequenceLogs measures reading (replaying) 100 Sequence logs
// and counting their placements: the work of one heatmap request.
func BenchmarkSequenceLogs(b *testing.B) {
	data := sequenceLogFile(b, 100)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		logs, err := ParseLogs(data, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := SequencePlacements(logs, ByAgent); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender measures drawing the two-panel heatmap as SVG and PNG.
func BenchmarkRender(b *testing.B) {
	logs, err := ParseLogs(sequenceLogFile(b, 10), "bench")
	if err != nil {
		b.Fatal(err)
	}
	pl, err := SequencePlacements(logs, ByAgent)
	if err != nil {
		b.Fatal(err)
	}
	f := PlacementFigure("sequence", pl)
	for _, format := range Formats {
		b.Run(format, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Bytes(format); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
