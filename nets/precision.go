package nets

import (
	"fmt"

	"github.com/canopy-go/canopy/kernels"
)

// Precision is the number format inference (Forward, SetPrecision) or
// training (ForwardTrain and Backward, SetTrainPrecision) multiplies in.
type Precision uint8

const (
	// FP32 multiplies in float32 throughout. It is a Net's default.
	FP32 Precision = iota
	// BF16 rounds the operands of every 3x3 convolution to bfloat16
	// and sums the products in float32: under ConvIm2col the input image
	// and the weights (batch norm folded in;
	// kernels.Conv3x3BiasActBF16), under ConvWinograd the transformed
	// image and weights (kernels.Conv3x3WinogradBF16, for the
	// convolutions Winograd takes and an even channel count; the
	// transforms stay float32). 1x1 convolutions, dense layers, biases,
	// residual additions and activations stay float32. With AVX-512 BF16
	// it runs VDPBF16PS, two multiply-adds per lane and instruction:
	// 1.5-1.7x the evaluations per second of float32 Winograd on the
	// connect4 preset and 1.35-1.5x on the sequence preset, on the
	// 2-vCPU AMD EPYC of docs/BENCHMARKS.md. Without that instruction set it runs portable
	// code, correct but hundreds of times slower (see kernels.BF16Kernels).
	// The shipped networks pick the float32 network's move in over 99% of
	// positions either way (docs/BENCHMARKS.md).
	BF16
)

var precisionNames = []string{"fp32", "bf16"}

// String returns the precision's name ("fp32", "bf16").
func (p Precision) String() string {
	if int(p) < len(precisionNames) {
		return precisionNames[p]
	}
	return fmt.Sprintf("Precision(%d)", p)
}

// ParsePrecision returns the precision named s ("fp32" or "bf16").
func ParsePrecision(s string) (Precision, error) {
	for i, name := range precisionNames {
		if s == name {
			return Precision(i), nil
		}
	}
	return 0, fmt.Errorf("nets: unknown precision %q (want fp32 or bf16)", s)
}

// MarshalText returns the precision's name (String), so that JSON and
// flags carry "fp32" or "bf16".
func (p Precision) MarshalText() ([]byte, error) {
	if int(p) >= len(precisionNames) {
		return nil, fmt.Errorf("nets: unknown precision %d", p)
	}
	return []byte(p.String()), nil
}

// UnmarshalText sets p to the precision named text (ParsePrecision).
func (p *Precision) UnmarshalText(text []byte) error {
	q, err := ParsePrecision(string(text))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// bf16State holds a net's 3x3 inference weights packed in bfloat16.
type bf16State struct {
	w      []*kernels.BF16Matrix   // per unit: the packed foldW of a 3x3 convolution, else nil
	wu     []*kernels.WinogradBF16 // per unit under ConvWinograd: its packed Winograd weights, else nil
	folded uint64                  // the Net.folded they were packed from; 0: never
	wino   bool                    // whether wu was packed (the net ran ConvWinograd)
}

// SetPrecision makes Forward multiply in p. It is a setting of this Net
// only: Clone and New start with FP32.
func (n *Net) SetPrecision(p Precision) {
	if p == BF16 {
		if n.bf16 == nil {
			n.bf16 = &bf16State{}
		}
		return
	}
	n.bf16 = nil
}

// Precision returns the format Forward multiplies in.
func (n *Net) Precision() Precision {
	if n.bf16 != nil {
		return BF16
	}
	return FP32
}

// prepareBF16 packs the folded 3x3 weights in bfloat16 when they changed
// since the last call (a no-op in FP32). Forward calls it after
// prepareWinograd, whose transformed weights it packs under ConvWinograd,
// and before the slices of a batch run conv3 concurrently.
func (n *Net) prepareBF16() {
	s := n.bf16
	wino := n.wino != nil
	if s == nil || (s.folded == n.folded && len(s.w) == len(n.units) && s.wino == wino) {
		return
	}
	s.w = make([]*kernels.BF16Matrix, len(n.units))
	s.wu = make([]*kernels.WinogradBF16, len(n.units))
	for j, v := range n.units {
		if !v.spatial() {
			continue // pointwise units run their float32 GEMM
		}
		s.w[j] = kernels.PackBF16(v.foldW, 9*v.cin, v.cout)
		// prepareWinograd has transformed the units Winograd takes.
		if wino && n.wino.u[j] != nil && v.cin%2 == 0 {
			s.wu[j] = kernels.PackWinogradBF16(n.wino.u[j], v.cin, v.cout)
		}
	}
	s.folded, s.wino = n.folded, wino
}
