package nets

import (
	"testing"

	"github.com/canopy-go/canopy/games"
)

// benchRecurrent is the sequence-lstm preset for the study's variant
// (input 509, 700 actions), with random inputs.
func benchRecurrent(b *testing.B) *Recurrent {
	cfg, _ := RecurrentPreset("sequence-lstm")
	r, err := NewRecurrent(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkRecurrentStep is one rollout step of 16 environments.
func BenchmarkRecurrentStep(b *testing.B) {
	r := benchRecurrent(b)
	const B = 16
	rng := games.NewRand(1)
	in := randSlice(rng, B*r.InputSize())
	h, c := make([]float32, B*r.Hidden()), make([]float32, B*r.Hidden())
	pol, val := make([]float32, B*r.PolicySize()), make([]float32, B)
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Step(B, in, h, c, nil, pol, val); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*B)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkRecurrentTrain is ForwardTrain and Backward over a segment of
// 64 steps of 4 environments (256 samples).
func BenchmarkRecurrentTrain(b *testing.B) {
	r := benchRecurrent(b)
	const T, B = 64, 4
	rng := games.NewRand(1)
	in := randSlice(rng, T*B*r.InputSize())
	h0, c0 := make([]float32, B*r.Hidden()), make([]float32, B*r.Hidden())
	pol, val := make([]float32, T*B*r.PolicySize()), make([]float32, T*B)
	dp, dv := randSlice(rng, T*B*r.PolicySize()), randSlice(rng, T*B)
	r.Reserve(T, B)
	b.ReportAllocs()
	for b.Loop() {
		if err := r.ForwardTrain(T, B, in, h0, c0, nil, pol, val, nil, nil); err != nil {
			b.Fatal(err)
		}
		r.ZeroGrad()
		if err := r.Backward(dp, dv); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*T*B)/b.Elapsed().Seconds(), "samples/s")
}
