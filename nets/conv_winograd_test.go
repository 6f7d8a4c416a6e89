package nets

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/cputime"
	"github.com/canopy-go/canopy/kernels"
)

// winoNetTol bounds the difference between the Forward outputs of the two
// convolution algorithms, relative to the largest output of the batch: each
// Winograd convolution differs from im2col by about 1e-6 of its products'
// absolute sum (see kernels.TestConv3x3Winograd), and the connect4 and
// sequence presets chain eleven of them.
const winoNetTol = 1e-4

// perturbBN gives every batch norm random running statistics and affine
// parameters, so that the folded weights differ from the raw ones.
func perturbBN(n *Net, seed uint64) {
	rng := games.NewRand(seed)
	for _, u := range n.units {
		if u.bn == nil {
			continue
		}
		for c := range u.bn.gamma.Data {
			u.bn.gamma.Data[c] = float32(0.5 + rng.Float64())
			u.bn.beta.Data[c] = float32(rng.NormFloat64() * 0.1)
			u.bn.mean.Data[c] = float32(rng.NormFloat64() * 0.1)
			u.bn.variance.Data[c] = float32(0.5 + rng.Float64())
		}
	}
	n.Invalidate()
}

// forwardBoth returns the policy logits and values of net on in under
// im2col and under Winograd, leaving the net on Winograd.
func forwardBoth(net *Net, batch int, in []float32) (p0, v0, p1, v1 []float32) {
	p0, v0 = make([]float32, batch*net.PolicySize()), make([]float32, batch)
	p1, v1 = make([]float32, len(p0)), make([]float32, batch)
	net.SetConvAlgorithm(ConvIm2col)
	net.Forward(batch, in, p0, v0)
	net.SetConvAlgorithm(ConvWinograd)
	net.Forward(batch, in, p1, v1)
	return
}

// maxDiff returns max |a-b| / max(1, max |a|).
func maxDiff(a, b []float32) float64 {
	scale, d := 1.0, 0.0
	for i := range a {
		scale = max(scale, math.Abs(float64(a[i])))
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d / scale
}

// TestForwardWinogradMatchesIm2col checks that Forward gives the same
// policy logits and values (to winoNetTol) with either convolution
// algorithm, on the connect4 (6x7 board, odd width) and sequence (10x10)
// presets with folded batch norm, at batch sizes that run one and several
// chunks of tiles, and that the transformed weights follow weight changes.
func TestForwardWinogradMatchesIm2col(t *testing.T) {
	presets := []string{"connect4", "sequence"}
	if testing.Short() {
		presets = presets[:1]
	}
	for _, preset := range presets {
		cfg, _ := Preset(preset)
		net, err := New(cfg, 7)
		if err != nil {
			t.Fatal(err)
		}
		perturbBN(net, 8)
		for _, batch := range []int{1, 5, 40} {
			in := randInput(batch*net.InputSize(), uint64(batch))
			p0, v0, p1, v1 := forwardBoth(net, batch, in)
			dp, dv := maxDiff(p0, p1), maxDiff(v0, v1)
			if dp > winoNetTol || dv > winoNetTol {
				t.Errorf("%s batch %d: Winograd differs from im2col by %.3g (policy), %.3g (value), want <= %g", preset, batch, dp, dv, winoNetTol)
			}
			t.Logf("%s batch %d: relative differences %.2g (policy) %.2g (value)", preset, batch, dp, dv)
		}
		// New weights must reach the transformed copy: change them while
		// the net stays on Winograd and compare with an im2col clone.
		perturbBN(net, 9)
		in := randInput(3*net.InputSize(), 10)
		p1, v1 := make([]float32, 3*net.PolicySize()), make([]float32, 3)
		net.Forward(3, in, p1, v1)
		ref := net.Clone()
		if ref.ConvAlgorithm() != ConvIm2col {
			t.Fatalf("a clone uses %v, want im2col", ref.ConvAlgorithm())
		}
		p0, v0 := make([]float32, len(p1)), make([]float32, 3)
		ref.Forward(3, in, p0, v0)
		if d := maxDiff(p0, p1); d > winoNetTol {
			t.Errorf("%s after a weight change: Winograd differs from im2col by %.3g", preset, d)
		}
	}
}

// TestForwardWinograd34 runs float32 Forward with each Winograd tile
// choice (F(2x2,3x3) forced, F(3x4,3x3) forced, the automatic choice) on
// every kernel implementation (CANOPY_KERNELS's generic, avx2, avx512
// where the CPU has them) and compares it with im2col on the generic
// kernels (to winoNetTol), on the 32x4 Connect Four net (its tower runs
// by F(3x4) where picked, its 2-plane stem by im2col) and, outside
// -short, the connect4 preset, at batches of one and several chunks of
// tiles. Forced F(3x4) must not give F(2x2)'s bits: the other tiles ran.
func TestForwardWinograd34(t *testing.T) {
	cfg := mustPreset(t, "connect4")
	cfg.Channels, cfg.Blocks = 32, 4
	cfgs := []Config{cfg}
	if !testing.Short() {
		cfgs = append(cfgs, mustPreset(t, "connect4"))
	}
	for _, cfg := range cfgs {
		net, err := New(cfg, 11)
		if err != nil {
			t.Fatal(err)
		}
		perturbBN(net, 12)
		for _, batch := range []int{1, 5, 40} {
			in := randInput(batch*net.InputSize(), uint64(batch)+20)
			forward := func(kern string, a ConvAlgorithm, tiles tileChoice) (p, v []float32) {
				restore, err := kernels.Use(kern)
				if err != nil {
					t.Fatal(err)
				}
				defer restore()
				net.SetConvAlgorithm(a)
				if net.wino != nil {
					net.wino.tiles = tiles
				}
				p, v = make([]float32, batch*net.PolicySize()), make([]float32, batch)
				net.Forward(batch, in, p, v)
				return p, v
			}
			p0, v0 := forward("generic", ConvIm2col, tilesAuto)
			for _, kern := range kernels.Available() {
				p2, _ := forward(kern, ConvWinograd, tiles2x2)
				for _, tc := range []struct {
					name  string
					tiles tileChoice
				}{{"F(2x2)", tiles2x2}, {"F(3x4)", tiles3x4}, {"auto", tilesAuto}} {
					p1, v1 := forward(kern, ConvWinograd, tc.tiles)
					dp, dv := maxDiff(p0, p1), maxDiff(v0, v1)
					if dp > winoNetTol || dv > winoNetTol {
						t.Errorf("%dx%d batch %d %s %s: Winograd differs from im2col by %.3g (policy), %.3g (value), want <= %g",
							cfg.Channels, cfg.Blocks, batch, kern, tc.name, dp, dv, winoNetTol)
					}
					if tc.tiles == tiles3x4 && slices.Equal(p1, p2) {
						t.Errorf("%dx%d batch %d %s: forced F(3x4) gave F(2x2)'s logits bit for bit", cfg.Channels, cfg.Blocks, batch, kern)
					}
					t.Logf("%dx%d batch %d %s %s: relative differences %.2g (policy) %.2g (value)", cfg.Channels, cfg.Blocks, batch, kern, tc.name, dp, dv)
				}
			}
		}
	}
}

// TestWino34Inference: float32 Forward picks F(3x4,3x3) only with SIMD
// kernels, and has F(3x4) weights only for the convolutions whose shape
// pays (not the 2-plane stem).
func TestWino34Inference(t *testing.T) {
	s := &winoState{}
	for _, kern := range kernels.Available() {
		restore, err := kernels.Use(kern)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := s.wino34Inference(), kern != "generic"; got != want {
			t.Errorf("%s: wino34Inference() = %v, want %v", kern, got, want)
		}
		restore()
	}
	for tiles, want := range map[tileChoice]bool{tiles2x2: false, tiles3x4: true} {
		s.tiles = tiles
		if got := s.wino34Inference(); got != want {
			t.Errorf("tiles %d: wino34Inference = %v, want %v", tiles, got, want)
		}
	}
	cfg := mustPreset(t, "connect4")
	cfg.Channels, cfg.Blocks = 32, 4
	net, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	net.SetConvAlgorithm(ConvWinograd)
	net.Forward(1, randInput(net.InputSize(), 1), make([]float32, net.PolicySize()), make([]float32, 1))
	for j, u := range net.units {
		if u.kind != kindConv3 {
			continue
		}
		if got, want := net.wino.u34[j] != nil, u.cin == 32; got != want {
			t.Errorf("unit %d (%d -> %d channels): F(3x4) weights %v, want %v", j, u.cin, u.cout, got, want)
		}
	}
}

func TestConvAlgorithmNames(t *testing.T) {
	for _, a := range []ConvAlgorithm{ConvIm2col, ConvWinograd} {
		got, err := ParseConvAlgorithm(a.String())
		if err != nil || got != a {
			t.Errorf("ParseConvAlgorithm(%q) = %v, %v", a.String(), got, err)
		}
	}
	if _, err := ParseConvAlgorithm("fft"); err == nil {
		t.Error("ParseConvAlgorithm(\"fft\") accepted an unknown name")
	}
	net, _ := New(mustPreset(t, "connect4"), 1)
	if net.ConvAlgorithm() != ConvIm2col {
		t.Errorf("a new net uses %v, want im2col", net.ConvAlgorithm())
	}
	net.SetConvAlgorithm(ConvWinograd)
	if net.ConvAlgorithm() != ConvWinograd {
		t.Errorf("after SetConvAlgorithm(ConvWinograd) the net uses %v", net.ConvAlgorithm())
	}
}

// TestCPUBackendConvOption checks the cpu backend's conv key: it sets the
// net's algorithm, and an unknown value is refused before anything opens.
func TestCPUBackendConvOption(t *testing.T) {
	net := tinyNet(t)
	if _, err := OpenBackend("cpu:conv=winograd", net, BackendOptions{MaxBatch: 2}); err != nil {
		t.Fatal(err)
	}
	if net.ConvAlgorithm() != ConvWinograd {
		t.Errorf("cpu:conv=winograd: the net uses %v", net.ConvAlgorithm())
	}
	if _, err := OpenBackend("cpu:conv=im2col", net, BackendOptions{MaxBatch: 2}); err != nil || net.ConvAlgorithm() != ConvIm2col {
		t.Errorf("cpu:conv=im2col: err %v, the net uses %v", err, net.ConvAlgorithm())
	}
	_, err := OpenBackend("cpu:conv=fft", net, BackendOptions{MaxBatch: 2})
	if !errors.Is(err, ErrBadBackendOption) || !strings.Contains(err.Error(), "im2col|winograd") {
		t.Errorf("cpu:conv=fft: err %v, want ErrBadBackendOption naming im2col|winograd", err)
	}
}

func mustPreset(t *testing.T, name string) Config {
	t.Helper()
	cfg, err := Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// BenchmarkForwardConv compares Forward of the connect4 preset (64
// channels, 5 residual blocks, 6x7), the 32x4 net of Connect Four
// training runs and the sequence preset with each convolution algorithm
// in float32 and in bfloat16 (see kernels.BF16Kernels for the code that
// runs) at batch 1 to 256 on 1 and 2 threads. winograd is the tiles
// float32 Forward picks (wino34Inference), winograd-f2x2 and
// winograd-f3x4 force F(2x2,3x3) or F(3x4,3x3) (where its shape pays).
// Read evals/cpu-s on a shared machine.
func BenchmarkForwardConv(b *testing.B) {
	for _, preset := range []string{"connect4", "connect4-32x4", "sequence"} {
		cfg, _ := Preset(preset)
		if preset == "connect4-32x4" {
			cfg, _ = Preset("connect4")
			cfg.Channels, cfg.Blocks = 32, 4
		}
		net, err := New(cfg, 1)
		if err != nil {
			b.Fatal(err)
		}
		for _, batch := range []int{1, 2, 4, 16, 256} {
			in := randInput(batch*net.InputSize(), 1)
			p, v := make([]float32, batch*net.PolicySize()), make([]float32, batch)
			for _, mode := range []string{"im2col", "winograd", "winograd-f2x2", "winograd-f3x4", "bf16-im2col", "bf16-winograd"} {
				for _, threads := range []int{1, 2} {
					b.Run(fmt.Sprintf("%s/batch=%d/%s/threads=%d", preset, batch, mode, threads), func(b *testing.B) {
						defer kernels.SetThreads(kernels.SetThreads(threads))
						algo, prec := ConvIm2col, FP32
						if strings.Contains(mode, "winograd") {
							algo = ConvWinograd
						}
						if strings.HasPrefix(mode, "bf16") {
							prec = BF16
						}
						net.SetConvAlgorithm(algo)
						net.SetPrecision(prec)
						if net.wino != nil {
							net.wino.tiles = map[string]tileChoice{"winograd-f2x2": tiles2x2, "winograd-f3x4": tiles3x4}[mode]
						}
						net.Forward(batch, in, p, v)
						b.ReportAllocs()
						cpu0 := cputime.Seconds()
						for b.Loop() {
							net.Forward(batch, in, p, v)
						}
						reportRate(b, float64(batch*b.N), cpu0, "evals")
					})
				}
			}
		}
	}
}

// TestWino34Pays: training picks F(3x4,3x3) tiles by shape, as worked out
// by hand here (products per image and channel pair: F(3x4) 30 per 3x4
// tile, F(2x2) 16 per 2x2 tile): in float32 with SIMD kernels only, in
// bfloat16 with every kernel set (the portable path computes what the
// SIMD one does).
func TestWino34Pays(t *testing.T) {
	for _, c := range []struct {
		h, w, cin, cout int
		want            bool
	}{
		{6, 7, 32, 32, true},    // 120 against 192
		{6, 7, 64, 64, true},    // the 64x5 net
		{6, 7, 16, 24, true},    // whole AVX2 vectors
		{6, 7, 2, 32, false},    // the stem: not whole vectors
		{6, 7, 32, 12, false},   // nor here
		{10, 10, 64, 64, false}, // Sequence: 360 against 400
		{8, 8, 32, 32, true},    // 180 against 256
		{3, 4, 8, 8, true},      // 30 against 64
		{2, 2, 8, 8, false},     // 30 against 16
	} {
		if got := wino34Pays(c.h, c.w, c.cin, c.cout); got != c.want {
			t.Errorf("wino34Pays(%d, %d, %d, %d) = %v, want %v", c.h, c.w, c.cin, c.cout, got, c.want)
		}
	}
	cfg, _ := Preset("connect4")
	cfg.Channels = 32
	n, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range kernels.Available() {
		restore, err := kernels.Use(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Precision{FP32, BF16} {
			n.SetTrainPrecision(p)
			want := p == BF16 || name != "generic"
			if got := n.trainWino34(32, 32); got != want {
				t.Errorf("%s %v: trainWino34(32, 32) = %v, want %v", name, p, got, want)
			}
			if got, want := n.trainWinoPositions(32, 32), 30; got != want {
				t.Errorf("%s %v: trainWinoPositions(32, 32) = %d, want %d", name, p, got, want)
			}
		}
		restore()
	}
}

// TestWinogradForwardBatchIndependent: under ConvWinograd a sample's
// outputs are the same bits whether it is evaluated alone or in a batch,
// with every kernel implementation (the fleet's workers batch positions
// differently from in-process self-play, and their games must agree).
func TestWinogradForwardBatchIndependent(t *testing.T) {
	for _, shape := range [][2]int{{32, 4}, {64, 2}} {
		cfg := mustPreset(t, "connect4")
		cfg.Channels, cfg.Blocks = shape[0], shape[1]
		for _, kern := range kernels.Available() {
			restore, err := kernels.Use(kern)
			if err != nil {
				t.Fatal(err)
			}
			net, err := New(cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			net.SetConvAlgorithm(ConvWinograd)
			const batch = 8
			in := randInput(batch*net.InputSize(), 5)
			pol, val := make([]float32, batch*net.PolicySize()), make([]float32, batch)
			net.Forward(batch, in, pol, val)
			p1, v1 := make([]float32, net.PolicySize()), make([]float32, 1)
			for b := range batch {
				net.Forward(1, in[b*net.InputSize():(b+1)*net.InputSize()], p1, v1)
				if v1[0] != val[b] || !slices.Equal(p1, pol[b*net.PolicySize():(b+1)*net.PolicySize()]) {
					t.Errorf("%dx%d %s: sample %d alone differs from the same sample in a batch of %d", cfg.Channels, cfg.Blocks, kern, b, batch)
				}
			}
			restore()
		}
	}
}
