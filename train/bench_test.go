package train

import (
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// BenchmarkTrainStep times one training step (sampling with augmentation,
// forward, backward, SGD update, Polyak average) of the "connect4" preset
// (64 channels, 5 blocks) at batch 256 and reports samples/s. Run with
//
//	go test -run '^$' -bench TrainStep -benchmem ./train/
func BenchmarkTrainStep(b *testing.B) {
	g := games.MustNew("connect4")
	ds := loadTest(b, "connect4", 40, 1, true)
	cfg, err := nets.Preset("connect4")
	if err != nil {
		b.Fatal(err)
	}
	if cfg, err = cfg.ForGame(g); err != nil {
		b.Fatal(err)
	}
	net, err := nets.New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 256
	s, err := NewSampler(ds, batch, 1, true)
	if err != nil {
		b.Fatal(err)
	}
	tr := &nets.Trainer{Net: net, Optimizer: &nets.SGD{LR: 0.01, Momentum: 0.9}, L2: 1e-4, Average: net.Clone(), AverageDecay: 0.995}
	if _, err := tr.Step(s.Next()); err != nil { // warm-up: scratch and optimizer state
		b.Fatal(err)
	}
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		if _, err := tr.Step(s.Next()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "samples/s")
}
