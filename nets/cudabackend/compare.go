package cudabackend

import "math"

// Diff measures how far a backend's outputs are from reference outputs
// (the CPU backend's float32 results).
type Diff struct {
	MaxAbs float64 // largest |got - want| (+Inf when a value is NaN)
	Scale  float64 // largest |want|, at least 1
}

// Rel is the error relative to the output scale: MaxAbs / Scale. For
// outputs within [-1, 1] (values, probabilities) it is the absolute error.
func (d Diff) Rel() float64 { return d.MaxAbs / d.Scale }

// Compare returns the Diff of got against want (of equal length).
//
// Errors of reduced-precision GEMM operands grow with the magnitude of
// the outputs (a rounding error of 2^-11 relative per operand summed over
// the inner dimension), so policy logits of magnitude 30 err about 30
// times as much as values in [-1, 1]: tolerances are relative to the
// largest reference magnitude, not absolute.
func Compare(got, want []float32) Diff {
	d := Diff{Scale: 1}
	for i := range want {
		d.Scale = max(d.Scale, math.Abs(float64(want[i])))
		e := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(e) {
			e = math.Inf(1)
		}
		d.MaxAbs = max(d.MaxAbs, e)
	}
	return d
}

// Tolerance is the largest Diff.Rel accepted for the policy logits of
// precision p against the CPU's float32 outputs of the same network. TF32 and FP16 operands keep
// 10 mantissa bits and BF16 7, all with FP32 accumulation; the errors
// measured on an emulated device with exact operand rounding (AlphaZero
// connect4 preset, random weights) were about 1.8e-3 relative for TF32
// and FP16 and 1.5e-2 for BF16, a third or less of these bounds. FP32 differs
// only by summation order.
func Tolerance(p Precision) float64 {
	switch p {
	case FP32:
		return 1e-4
	case TF32, FP16:
		return 1e-2
	case BF16:
		return 5e-2
	}
	return 0
}

// ValueTolerance is the largest error accepted for values (tanh outputs
// in [-1, 1], where Diff.Rel is the absolute error) for precision p. A
// value is the tanh of a pre-activation computed at the logits' scale
// (tens), so it inherits their relative error times that scale where tanh
// is not flat: at batch 37 of the connect4 preset the emulated device
// measured 2.1e-2 for TF32 and FP16, 1.5e-1 for BF16 and 3.3e-5 for FP32;
// with a three-player head (connect4+vp3: three values a row, so the
// largest of three times as many errors) 2.8e-1 for BF16. A misrouted
// value errs far more: on that test, with its values' mean magnitude
// 0.99 (saturated tanh), rotating a row's seats errs by 2 and shifting
// the rows by one by 1.47.
func ValueTolerance(p Precision) float64 {
	switch p {
	case FP32:
		return 2e-4
	case TF32, FP16:
		return 5e-2
	case BF16:
		return 3.5e-1
	}
	return 0
}
