package nets

import (
	"fmt"

	"github.com/canopy-go/canopy/kernels"
)

// ConvAlgorithm selects how inference (Forward) computes the 3x3
// convolutions of a Net; training has its own setting
// (SetTrainConvAlgorithm), whose default is AutoConvAlgorithm's.
type ConvAlgorithm uint8

const (
	// ConvIm2col expands the im2col matrix block by block and multiplies
	// it by the weights (kernels.Conv3x3BiasAct). It is a Net's default;
	// the cpu backend picks AutoConvAlgorithm's.
	ConvIm2col ConvAlgorithm = iota
	// ConvWinograd uses Winograd's F(2x2,3x3) algorithm
	// (kernels.Conv3x3Winograd) for every 3x3 convolution with at least
	// 16 input channels, or in float32 its F(3x4,3x3) tiles
	// (kernels.Conv3x3Winograd34) where they pay (wino34Inference): about 10% more evaluations per CPU-second on
	// the connect4 preset with AVX2, 25% on the sequence preset (before
	// session 11's faster transforms); 55-90% more evaluations per second
	// on both with AVX-512 (docs/BENCHMARKS.md). Policy
	// logits and values agree with ConvIm2col to about 1e-5 of the
	// largest output, not bit for bit.
	ConvWinograd
)

// winoMinCin is the fewest input channels a convolution needs to run by
// Winograd under ConvWinograd. With fewer, the 16 GEMMs of K = cin are
// mostly call and transform overhead; the Connect Four stem (2 planes)
// stays on im2col, the Sequence stem (107 planes) and every residual
// tower convolution (64 channels in the presets) run by Winograd. The
// threshold is a judgement, not a measurement.
const winoMinCin = 16

// wino34Pays reports whether the F(3x4,3x3) tiles (kernels.Conv3x3Winograd34)
// beat F(2x2,3x3)'s on a float32 3x3 convolution of cin -> cout channels
// on an h x w board: when both channel counts are whole AVX2 vectors (the
// SIMD transforms) and its products per image are at most 3/4 of F(2x2)'s.
// Measured with kernels' BenchmarkWinograd34 (one thread, AVX-512 EPYC
// Zen 5, shared machine): on the 6x7 board (products 0.625x) forward at
// batch 256 0.48x F(2x2)'s time at 32 and 64 channels and the weight
// gradient 0.65-0.77x; on Sequence's 10x10 board (0.9x) about even (1.02x
// and 0.88x at 64 channels) and its 107-plane stem, not whole vectors,
// 1.7-1.9x slower; the 3/4 between is a judgement.
func wino34Pays(h, w, cin, cout int) bool {
	if cin%8 != 0 || cout%8 != 0 {
		return false
	}
	f34 := ((h + 2) / 3) * ((w + 3) / 4) * 30
	f22 := ((h + 1) / 2) * ((w + 1) / 2) * 16
	return 4*f34 <= 3*f22
}

// AutoConvAlgorithm is the algorithm the cpu backend uses unless told
// (conv=auto): ConvWinograd when the kernels run SIMD code, where it was
// measured faster at every batch (2 threads, the connect4 preset; 2-vCPU
// AMD EPYC with AVX2: 6,080 against 5,428 evals/s at batch 16, 5,835
// against 5,391 at 256; 2-vCPU AMD EPYC with AVX-512: 14,922 against
// 12,886 at batch 16, 16,262 against 13,843 at 256; docs/BENCHMARKS.md),
// and ConvIm2col with the generic kernels.
func AutoConvAlgorithm() ConvAlgorithm {
	if kernels.Current() == "generic" {
		return ConvIm2col
	}
	return ConvWinograd
}

// convNames are the names ParseConvAlgorithm accepts, in
// ConvAlgorithm order.
var convNames = []string{"im2col", "winograd"}

// String returns the algorithm's name ("im2col", "winograd").
func (a ConvAlgorithm) String() string {
	if int(a) < len(convNames) {
		return convNames[a]
	}
	return fmt.Sprintf("ConvAlgorithm(%d)", a)
}

// ParseConvAlgorithm returns the algorithm named s ("im2col" or
// "winograd").
func ParseConvAlgorithm(s string) (ConvAlgorithm, error) {
	for i, name := range convNames {
		if s == name {
			return ConvAlgorithm(i), nil
		}
	}
	return 0, fmt.Errorf("nets: unknown convolution algorithm %q (want im2col or winograd)", s)
}

// winoState holds a net's Winograd-transformed inference weights.
type winoState struct {
	u      [][]float32 // per unit: kernels.WinogradWeights of foldW, nil if not used
	u34    [][]float32 // per unit: kernels.WinogradWeights34 of foldW where wino34Pays, else nil
	folded uint64      // the Net.folded they were computed from; 0: never
	tiles  tileChoice  // which tiles float32 Forward runs (tests and benchmarks set it)
}

// tileChoice picks the Winograd tiles of float32 inference.
type tileChoice uint8

const (
	tilesAuto tileChoice = iota // F(3x4) where wino34Pays and wino34Inference say
	tiles2x2                    // F(2x2,3x3) everywhere
	tiles3x4                    // F(3x4,3x3) wherever its weights exist (wino34Pays), any kernels and batch
)

// wino34Inference reports whether float32 Forward runs the 3x3
// convolutions whose shape pays (wino34Pays) by F(3x4,3x3): with the SIMD
// kernels, at every batch (the portable transforms in Go lose what the
// products save, as in training). The choice must not depend on the
// batch: a position's outputs are the same bits whatever batch it is
// evaluated in, which fleet self-play and resumed runs rely on (games
// played by workers equal in-process self-play's). Measured with
// BenchmarkForwardConv (one thread, AVX-512 EPYC Zen 5, shared machine,
// interleaved rounds; docs/BENCHMARKS.md): with the AVX-512 kernels at
// batch 1 (4 tiles) the 64x5 net 1.13x F(2x2)'s evaluations per
// CPU-second, the 32x4 net 0.95x in six rounds and 1.0x in six more; at
// batch 16 1.26x and 1.19x. With the AVX2 kernels (CANOPY_KERNELS=avx2 on
// the same CPU) the 32x4 net 1.06x at batch 1, 1.15x at 16, 1.51x at 256;
// the 64x5 net 1.12x, 1.19x, 1.42x.
func (s *winoState) wino34Inference() bool {
	switch s.tiles {
	case tiles2x2:
		return false
	case tiles3x4:
		return true
	}
	return kernels.Current() != "generic"
}

// SetConvAlgorithm makes Forward compute 3x3 convolutions with a. It is
// a setting of this Net only: Clone and New start with ConvIm2col.
func (n *Net) SetConvAlgorithm(a ConvAlgorithm) {
	if a == ConvWinograd {
		if n.wino == nil {
			n.wino = &winoState{}
		}
		return
	}
	n.wino = nil
}

// ConvAlgorithm returns the algorithm Forward uses for 3x3 convolutions.
func (n *Net) ConvAlgorithm() ConvAlgorithm {
	if n.wino != nil {
		return ConvWinograd
	}
	return ConvIm2col
}

// conv3 runs the inference 3x3 convolution of unit u (index i) on batch
// samples a into out, with residual res (nil for none).
func (n *Net) conv3(i int, u *unit, batch int, a, res, out []float32) {
	h, w := n.cfg.Height, n.cfg.Width
	if n.bf16 != nil {
		if wu := n.bf16.wu[i]; wu != nil {
			n.team.Conv3x3WinogradBF16(a, batch, u.cin, h, w, wu, u.foldB, res, u.relu, out)
			return
		}
		n.team.Conv3x3BiasActBF16(a, batch, u.cin, h, w, n.bf16.w[i], u.foldB, res, u.relu, out)
		return
	}
	if n.wino == nil || u.cin < winoMinCin {
		n.team.Conv3x3BiasAct(a, batch, u.cin, h, w, u.foldW, u.cout, u.foldB, res, u.relu, out)
		return
	}
	if u34 := n.wino.u34[i]; u34 != nil && n.wino.wino34Inference() {
		n.team.Conv3x3Winograd34(a, batch, u.cin, h, w, u34, u.cout, u.foldB, res, u.relu, out)
		return
	}
	n.team.Conv3x3Winograd(a, batch, u.cin, h, w, n.wino.u[i], u.cout, u.foldB, res, u.relu, out)
}

// prepareWinograd transforms the folded 3x3 weights for Winograd when
// they changed since the last call (a no-op under im2col). Forward calls
// it before the slices of a batch run conv3 concurrently.
func (n *Net) prepareWinograd() {
	s := n.wino
	if s == nil || (s.folded == n.folded && len(s.u) == len(n.units)) {
		return
	}
	s.u = make([][]float32, len(n.units))
	s.u34 = make([][]float32, len(n.units))
	h, w := n.cfg.Height, n.cfg.Width
	for j, v := range n.units {
		if v.spatial() && v.cin >= winoMinCin {
			// F(2x2)'s weights are also bfloat16's (prepareBF16) and
			// small calls'; F(3x4)'s only where its shape pays.
			s.u[j] = make([]float32, 16*v.cin*v.cout)
			kernels.WinogradWeights(v.foldW, v.cin, v.cout, s.u[j])
			if wino34Pays(h, w, v.cin, v.cout) {
				s.u34[j] = make([]float32, 30*v.cin*v.cout)
				kernels.WinogradWeights34(v.foldW, v.cin, v.cout, s.u34[j])
			}
		}
	}
	s.folded = n.folded
}
