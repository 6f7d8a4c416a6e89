package kernels

import (
	"fmt"
	"math"
)

// The per-channel loops of batch normalisation in training: data are rows
// of c channels (NHWC activations, one row per board cell), per-channel
// coefficients and sums have c values. With the AVX-512 loops
// (impl.avx512Loops) and c a multiple of 16, or the AVX2 ones
// (impl.avx2Loops) and c a multiple of 8, they run in assembly
// (batchnorm.go of _generate), which does the Go loops' arithmetic in the
// same order with the same roundings: results are the same bit for bit.
// Products are rounded before the following add (explicit float32
// conversions: the Go compiler may otherwise fuse them into FMAs). They
// are safe for concurrent use on disjoint outputs.

// ScaleShift writes out[r*c+j] = max(x[r*c+j]*scale[j] + shift[j] +
// res[r*c+j], lo) for every row r of x, where lo is 0 when relu is set
// (the sum when it is not below 0, so NaN and -0 pass) and no bound
// otherwise; res may be nil (no residual) or out. It is batch
// normalisation's forward with the batch's coefficients.
func ScaleShift(x []float32, c int, scale, shift, res []float32, relu bool, out []float32) {
	rows := checkRows("ScaleShift", len(x), c)
	if len(out) < len(x) || len(scale) < c || len(shift) < c || (res != nil && len(res) < len(x)) {
		panic(fmt.Sprintf("kernels: ScaleShift: %d values, out %d, scale %d, shift %d, res %d", len(x), len(out), len(scale), len(shift), len(res)))
	}
	if rows == 0 {
		return
	}
	lo := float32(math.Inf(-1))
	if relu {
		lo = 0
	}
	if f, fr := simdScaleShift(c); f != nil {
		if res != nil {
			fr(&out[0], &x[0], &res[0], &scale[0], &shift[0], lo, c, rows)
		} else {
			f(&out[0], &x[0], &scale[0], &shift[0], lo, c, rows)
		}
		return
	}
	for r := 0; r < rows; r++ {
		xr, or := x[r*c:(r+1)*c], out[r*c:(r+1)*c]
		sc, sh := scale[:c], shift[:c]
		if res != nil {
			rr := res[r*c : (r+1)*c]
			for j, v := range xr {
				y := float32(v*sc[j]) + sh[j]
				or[j] = atLeast(y+rr[j], lo)
			}
			continue
		}
		for j, v := range xr {
			or[j] = atLeast(float32(v*sc[j])+sh[j], lo)
		}
	}
}

// Affine2 writes out[r*c+j] = d[r*c+j]*k1[j] + z[r*c+j]*k2[j] + k3[j]
// (batch normalisation's input gradient, with k1..k3 from the batch's
// sums).
func Affine2(d, z []float32, c int, k1, k2, k3, out []float32) {
	rows := checkRows("Affine2", len(d), c)
	if len(z) < len(d) || len(out) < len(d) || len(k1) < c || len(k2) < c || len(k3) < c {
		panic(fmt.Sprintf("kernels: Affine2: %d values, z %d, out %d, k %d %d %d", len(d), len(z), len(out), len(k1), len(k2), len(k3)))
	}
	if rows == 0 {
		return
	}
	if im := cur.Load(); im.avx512Loops && c%16 == 0 {
		affine2AVX512(&out[0], &d[0], &z[0], &k1[0], &k2[0], &k3[0], c, rows)
		return
	} else if im.avx2Loops && c%8 == 0 {
		affine2AVX2(&out[0], &d[0], &z[0], &k1[0], &k2[0], &k3[0], c, rows)
		return
	}
	k1, k2, k3 = k1[:c], k2[:c], k3[:c]
	for r := 0; r < rows; r++ {
		dr, zr, or := d[r*c:(r+1)*c], z[r*c:(r+1)*c], out[r*c:(r+1)*c]
		for j, v := range dr {
			or[j] = float32(float32(v*k1[j])+float32(zr[j]*k2[j])) + k3[j]
		}
	}
}

// ReLUSums applies the derivative of ReLU to d in place (d = +0 where
// y <= 0; NaN in y keeps d), adds the result into res (unless nil; with
// addRes false it is stored into res instead) and adds per channel
// sd[j] += d and sdz[j] += d*z in float64, row after row: batch
// normalisation's backward sums behind a ReLU, with y the ReLU's output,
// z batch norm's input and res the gradient of a residual input.
func ReLUSums(d, y, z, res []float32, addRes bool, c int, sd, sdz []float64) {
	rows := checkRows("ReLUSums", len(d), c)
	if len(y) < len(d) || len(z) < len(d) || (res != nil && len(res) < len(d)) || len(sd) < c || len(sdz) < c {
		panic(fmt.Sprintf("kernels: ReLUSums: %d values, y %d, z %d, res %d, sums %d %d", len(d), len(y), len(z), len(res), len(sd), len(sdz)))
	}
	if rows == 0 {
		return
	}
	im := cur.Load()
	wide := im.avx512Loops && c%16 == 0
	if wide || (im.avx2Loops && c%8 == 0) {
		add, cp, plain := reluSumsResAVX2, reluSumsCopyAVX2, reluSumsAVX2
		if wide {
			add, cp, plain = reluSumsResAVX512, reluSumsCopyAVX512, reluSumsAVX512
		}
		switch {
		case res != nil && addRes:
			add(&d[0], &y[0], &z[0], &res[0], &sd[0], &sdz[0], c, rows)
		case res != nil:
			cp(&d[0], &y[0], &z[0], &res[0], &sd[0], &sdz[0], c, rows)
		default:
			plain(&d[0], &y[0], &z[0], &sd[0], &sdz[0], c, rows)
		}
		return
	}
	sd, sdz = sd[:c], sdz[:c]
	for r := 0; r < rows; r++ {
		dr, yr, zr := d[r*c:(r+1)*c], y[r*c:(r+1)*c], z[r*c:(r+1)*c]
		for j, v := range yr {
			// g = d, or +0 where y <= 0, without a branch (the sign is
			// unpredictable; a branch mispredicts often).
			keep := ^uint32(0)
			if v <= 0 {
				keep = 0
			}
			g := math.Float32frombits(math.Float32bits(dr[j]) & keep)
			dr[j] = g
			if res != nil && addRes {
				res[r*c+j] += g
			} else if res != nil {
				res[r*c+j] = g
			}
			sd[j] += float64(g)
			sdz[j] += float64(g) * float64(zr[j])
		}
	}
}

// Moments adds per channel s1[j] += e and s2[j] += e*e in float64, with
// e = z - shift[j], row after row (batch normalisation's statistics
// around a shift).
func Moments(z []float32, c int, shift, s1, s2 []float64) {
	rows := checkRows("Moments", len(z), c)
	if len(shift) < c || len(s1) < c || len(s2) < c {
		panic(fmt.Sprintf("kernels: Moments: c %d, shift %d, sums %d %d", c, len(shift), len(s1), len(s2)))
	}
	if rows == 0 {
		return
	}
	if im := cur.Load(); im.avx512Loops && c%16 == 0 {
		momentsAVX512(&z[0], &shift[0], &s1[0], &s2[0], c, rows)
		return
	} else if im.avx2Loops && c%8 == 0 {
		momentsAVX2(&z[0], &shift[0], &s1[0], &s2[0], c, rows)
		return
	}
	shift, s1, s2 = shift[:c], s1[:c], s2[:c]
	for r := 0; r < rows; r++ {
		for j, v := range z[r*c : (r+1)*c] {
			e := float64(v) - shift[j]
			s1[j] += e
			s2[j] += e * e
		}
	}
}

// atLeast returns y, or lo when lo > y (so NaN and -0 pass, like the
// assembly's VMAXPS), without a branch.
func atLeast(y, lo float32) float32 {
	sel := uint32(0)
	if lo > y {
		sel = ^uint32(0)
	}
	return math.Float32frombits(math.Float32bits(y)&^sel | math.Float32bits(lo)&sel)
}

// simdScaleShift returns the assembly loops of ScaleShift (without and
// with a residual) for c channels, nil when the Go loop runs.
func simdScaleShift(c int) (func(out, x, scale, shift *float32, lo float32, c, rows int), func(out, x, res, scale, shift *float32, lo float32, c, rows int)) {
	im := cur.Load()
	switch {
	case im.avx512Loops && c%16 == 0:
		return scaleShiftAVX512, scaleShiftResAVX512
	case im.avx2Loops && c%8 == 0:
		return scaleShiftAVX2, scaleShiftResAVX2
	}
	return nil, nil
}

// checkRows returns n/c, panicking unless c > 0 divides n.
func checkRows(name string, n, c int) int {
	if c <= 0 || n%c != 0 {
		panic(fmt.Sprintf("kernels: %s: %d values are not rows of %d channels", name, n, c))
	}
	return n / c
}
