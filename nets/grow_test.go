package nets

import (
	"math"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// growCfg is a small AlphaZero net with a per-player value head (Tetris
// Link's kind) on a board large enough for Winograd tiles.
var growCfg = Config{Head: HeadAlphaZero, Preset: "small", InputPlanes: 3, Height: 6, Width: 7, PolicySize: 7,
	Channels: 16, Blocks: 2, ValueHidden: 8, ValuePlayers: 3}

func mustNew(t *testing.T, cfg Config) *Net {
	t.Helper()
	n, err := New(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func randomInput(n, seed int) []float32 {
	rng := games.NewRand(uint64(seed))
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(rng.NormFloat64())
	}
	return in
}

// outputs runs net on in (batch rows) in inference, or in training mode
// (batch statistics) when train is set.
func outputs(t *testing.T, net *Net, batch int, in []float32, train bool) (p, v []float32) {
	t.Helper()
	p, v = make([]float32, batch*net.PolicySize()), make([]float32, batch*net.ValueSize())
	if !train {
		net.Forward(batch, in, p, v)
		return p, v
	}
	if err := net.ForwardTrain(batch, in, p, v); err != nil {
		t.Fatal(err)
	}
	return p, v
}

// settle gives src's batch norms random scales and shifts and the running
// statistics of a few training-mode passes over in, so that inference
// outputs are neither saturated nor zero.
func settle(t *testing.T, src *Net, batch int, in []float32) {
	t.Helper()
	rng := games.NewRand(8)
	for _, u := range src.units {
		if u.bn != nil {
			for c := range u.bn.gamma.Data {
				u.bn.gamma.Data[c] = float32(0.5 + rng.Float64())
				u.bn.beta.Data[c] = float32(rng.NormFloat64() * 0.1)
			}
		}
	}
	for range 40 {
		outputs(t, src, batch, in, true)
	}
	src.Invalidate()
	if _, v := outputs(t, src, batch, in, false); maxDiff(v, make([]float32, len(v))) == 0 {
		t.Fatal("the settled net's values are all zero")
	}
}

func TestGrowKeepsOutputs(t *testing.T) {
	const batch = 6
	for _, tc := range []struct {
		name             string
		channels, blocks int
		tol              float64 // 0: bit for bit
	}{
		{"deeper", 0, 4, 0},
		{"wider", 24, 0, 1e-5},
		{"both", 40, 3, 1e-5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := mustNew(t, growCfg)
			in := randomInput(batch*src.InputSize(), 9)
			settle(t, src, batch, in)
			grown, err := Grow(src, tc.channels, tc.blocks, 10)
			if err != nil {
				t.Fatal(err)
			}
			c := grown.Config()
			if want := max(tc.channels, growCfg.Channels); c.Channels != want || c.Blocks != max(tc.blocks, growCfg.Blocks) {
				t.Fatalf("grown to %d x %d, want %d x %d", c.Channels, c.Blocks, want, max(tc.blocks, growCfg.Blocks))
			}
			for _, train := range []bool{false, true} {
				p0, v0 := outputs(t, src, batch, in, train)
				p1, v1 := outputs(t, grown, batch, in, train)
				dp, dv := maxDiff(p0, p1), maxDiff(v0, v1)
				if tc.tol == 0 && (dp != 0 || dv != 0) || dp > tc.tol || dv > tc.tol {
					t.Errorf("train=%v: policy differs by %.3g, value by %.3g (allowed %g)", train, dp, dv, tc.tol)
				}
				if math.IsNaN(dp) || math.IsNaN(dv) {
					t.Fatalf("train=%v: NaN outputs", train)
				}
			}
		})
	}
}

// TestGrowBreaksSymmetry checks that a copied channel and its original get
// different gradients, so training can tell them apart.
func TestGrowBreaksSymmetry(t *testing.T) {
	const batch = 6
	src := mustNew(t, growCfg)
	grown, err := Grow(src, 24, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	// Which original each copy mirrors: the stem's output channels of a
	// copy and its original hold the same weights.
	stem, _ := grown.Param("stem.conv.weight")
	w := make([]float32, len(stem.Data))
	stem.ToFile(w)
	per := len(w) / 24
	orig := -1
	for k := 0; k < 16 && orig < 0; k++ {
		if slicesEqual(w[16*per:17*per], w[k*per:(k+1)*per]) {
			orig = k
		}
	}
	if orig < 0 {
		t.Fatal("channel 16 of the grown stem copies none of the first 16")
	}
	in := randomInput(batch*grown.InputSize(), 11)
	p, v := outputs(t, grown, batch, in, true)
	dp, dv := randomInput(len(p), 12), randomInput(len(v), 13)
	grown.ZeroGrad()
	if err := grown.Backward(dp, dv); err != nil {
		t.Fatal(err)
	}
	gr := make([]float32, len(stem.Grad))
	(&Param{Shape: stem.Shape, Data: stem.Grad, layout: stem.layout, d0: stem.d0, d1: stem.d1, d2: stem.d2}).ToFile(gr)
	if slicesEqual(gr[16*per:17*per], gr[orig*per:(orig+1)*per]) {
		t.Errorf("channel 16 and its original %d get the same gradient: the copies would never separate", orig)
	}
}

func slicesEqual(a, b []float32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestGrowRefuses(t *testing.T) {
	src := mustNew(t, growCfg)
	for _, tc := range []struct{ channels, blocks int }{{8, 0}, {0, 1}} {
		if _, err := Grow(src, tc.channels, tc.blocks, 1); err == nil || !strings.Contains(err.Error(), "smaller") {
			t.Errorf("Grow(%d, %d): err %v, want one saying the size is smaller", tc.channels, tc.blocks, err)
		}
	}
	ppo, err := Preset("connect4-ppo")
	if err != nil {
		t.Fatal(err)
	}
	pn := mustNew(t, ppo)
	if _, err := Grow(pn, 64, 2, 1); err == nil || !strings.Contains(err.Error(), "AlphaZero") {
		t.Errorf("Grow of a PPO net: err %v, want one naming AlphaZero heads", err)
	}
	if got := resizedPreset("small-48x3", 64, 4); got != "small-64x4" {
		t.Errorf("resizedPreset = %q, want small-64x4", got)
	}
}
