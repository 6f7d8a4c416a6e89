package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bnData returns rows*c values with zeros, negative zeros and a NaN mixed
// in, so the ReLU's edge cases are exercised.
func bnData(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch r.IntN(16) {
		case 0:
			x[i] = 0
		case 1:
			x[i] = float32(math.Copysign(0, -1))
		default:
			x[i] = float32(r.NormFloat64())
		}
	}
	if n > 7 {
		x[7] = float32(math.NaN())
	}
	return x
}

func sameBits32(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

func sameBits64(a, b []float64) bool {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestBatchNormLoops: every implementation of the batch-norm loops gives
// the generic one's results bit for bit, and the generic one agrees with
// the formulas computed here in float64.
func TestBatchNormLoops(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	type result struct {
		ss, ssr, aff, d, dr, res, cp          []float32
		sd, sdz, sdr, sdzr, sdc, sdzc, m1, m2 []float64
	}
	for _, c := range []int{3, 8, 16, 32, 48, 64, 80, 128} {
		rows := 37
		n := rows * c
		x, y, z, res0 := bnData(r, n), bnData(r, n), bnData(r, n), bnData(r, n)
		scale, shift, k1, k2, k3 := bnData(r, c), bnData(r, c), bnData(r, c), bnData(r, c), bnData(r, c)
		sh64 := make([]float64, c)
		for j := range sh64 {
			sh64[j] = r.NormFloat64()
		}
		// The sums are added into what the slices hold: start them off zero.
		sum0 := make([]float64, c)
		for j := range sum0 {
			sum0[j] = r.NormFloat64()
		}
		run := func(name string) result {
			restore, err := Use(name)
			if err != nil {
				t.Fatal(err)
			}
			defer restore()
			var o result
			o.ss = make([]float32, n)
			ScaleShift(x, c, scale, shift, nil, true, o.ss)
			o.ssr = slices.Clone(res0)
			ScaleShift(x, c, scale, shift, o.ssr, false, o.ssr) // res == out
			o.aff = make([]float32, n)
			Affine2(x, z, c, k1, k2, k3, o.aff)
			o.d = slices.Clone(x)
			o.sd, o.sdz = slices.Clone(sum0), slices.Clone(sum0)
			ReLUSums(o.d, y, z, nil, true, c, o.sd, o.sdz)
			o.dr, o.res = slices.Clone(x), slices.Clone(res0)
			o.sdr, o.sdzr = slices.Clone(sum0), slices.Clone(sum0)
			ReLUSums(o.dr, y, z, o.res, true, c, o.sdr, o.sdzr)
			o.cp = slices.Clone(res0)
			o.sdc, o.sdzc = slices.Clone(sum0), slices.Clone(sum0)
			ReLUSums(slices.Clone(x), y, z, o.cp, false, c, o.sdc, o.sdzc)
			o.m1, o.m2 = slices.Clone(sum0), slices.Clone(sum0)
			Moments(z, c, sh64, o.m1, o.m2)
			return o
		}
		want := run("generic")
		// The generic loops against the formulas.
		for i := range n {
			j := i % c
			if v := math.Max(float64(x[i])*float64(scale[j])+float64(shift[j]), 0); !near(float64(want.ss[i]), v) {
				t.Fatalf("c=%d: ScaleShift[%d] = %v, want %v", c, i, want.ss[i], v)
			}
			if v := float64(x[i])*float64(k1[j]) + float64(z[i])*float64(k2[j]) + float64(k3[j]); !near(float64(want.aff[i]), v) {
				t.Fatalf("c=%d: Affine2[%d] = %v, want %v", c, i, want.aff[i], v)
			}
			if !sameBits32(want.cp[i:i+1], want.d[i:i+1]) {
				t.Fatalf("c=%d: ReLUSums copied residual [%d] = %v, want d %v", c, i, want.cp[i], want.d[i])
			}
			if g := float64(want.d[i]); (y[i] <= 0 && g != 0) || (!(y[i] <= 0) && !sameBits32([]float32{want.d[i]}, []float32{x[i]})) {
				t.Fatalf("c=%d: ReLUSums d[%d] = %v for d %v, y %v", c, i, g, x[i], y[i])
			}
		}
		// The residual's forms sum what the plain one does.
		if !sameBits64(want.sdr, want.sd) || !sameBits64(want.sdc, want.sd) || !sameBits64(want.sdzr, want.sdz) || !sameBits64(want.sdzc, want.sdz) {
			t.Fatalf("c=%d: ReLUSums's sums differ with a residual", c)
		}
		for j := range c {
			sd, sdz, m1, m2 := sum0[j], sum0[j], sum0[j], sum0[j]
			for r := range rows {
				i := r*c + j
				if !(y[i] <= 0) {
					sd += float64(x[i])
					sdz += float64(x[i]) * float64(z[i])
				}
				e := float64(z[i]) - sh64[j]
				m1 += e
				m2 += e * e
			}
			if !near(want.sd[j], sd) || !near(want.sdz[j], sdz) || !near(want.m1[j], m1) || !near(want.m2[j], m2) {
				t.Fatalf("c=%d channel %d: sums %v %v %v %v, want %v %v %v %v", c, j, want.sd[j], want.sdz[j], want.m1[j], want.m2[j], sd, sdz, m1, m2)
			}
		}
		for _, name := range Available()[1:] {
			got := run(name)
			for _, p := range []struct {
				what   string
				g, w   []float32
				g6, w6 []float64
			}{
				{"ScaleShift", got.ss, want.ss, nil, nil}, {"ScaleShift residual", got.ssr, want.ssr, nil, nil},
				{"Affine2", got.aff, want.aff, nil, nil}, {"ReLUSums d", got.d, want.d, got.sd, want.sd},
				{"ReLUSums sdz", nil, nil, got.sdz, want.sdz}, {"ReLUSums residual d", got.dr, want.dr, got.sdr, want.sdr},
				{"ReLUSums residual", got.res, want.res, got.sdzr, want.sdzr}, {"Moments", nil, nil, got.m1, want.m1},
				{"Moments squares", nil, nil, got.m2, want.m2}, {"ReLUSums copied residual", got.cp, want.cp, got.sdc, want.sdc},
				{"ReLUSums copied residual sdz", nil, nil, got.sdzc, want.sdzc},
			} {
				if !sameBits32(p.g, p.w) || !sameBits64(p.g6, p.w6) {
					t.Errorf("%s, c=%d: %s differs from generic's", name, c, p.what)
				}
			}
		}
	}
}

// near reports whether got is within float32 rounding of want (NaN
// matches NaN).
func near(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= 1e-5*math.Max(1, math.Abs(want))
}

// BenchmarkBatchNormPasses times the per-channel passes of training's
// batch norm on one batch slice of the training step's shape at batch
// 256 in 4 slices: Connect Four's 64 samples x 42 cells (2,688 rows, 0.7
// MB a tensor at 64 channels) and Sequence's 64 x 100 (6,400 rows, 1.6
// MB). MB/s counts the values of one tensor (d, or x).
func BenchmarkBatchNormPasses(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct {
		name    string
		rows, c int
	}{{"c4-32", 2688, 32}, {"c4-64", 2688, 64}, {"seq-64", 6400, 64}} {
		n := s.rows * s.c
		d, y, z, res, out := bnData(r, n), bnData(r, n), bnData(r, n), bnData(r, n), make([]float32, n)
		sd, sdz, shift := make([]float64, s.c), make([]float64, s.c), make([]float64, s.c)
		k := bnData(r, s.c)
		for _, p := range []struct {
			name string
			run  func()
		}{
			{"ReLUSums", func() { ReLUSums(d, y, z, nil, true, s.c, sd, sdz) }},
			{"ReLUSums-res", func() { ReLUSums(d, y, z, res, true, s.c, sd, sdz) }},
			{"ReLUSums-copy", func() { ReLUSums(d, y, z, res, false, s.c, sd, sdz) }},
			{"Affine2", func() { Affine2(d, z, s.c, k, k, k, out) }},
			{"ScaleShift-res", func() { ScaleShift(z, s.c, k, k, res, true, out) }},
			{"Moments", func() { Moments(z, s.c, shift, sd, sdz) }},
		} {
			b.Run(s.name+"/"+p.name, func(b *testing.B) {
				b.SetBytes(int64(4 * n))
				for b.Loop() {
					p.run()
				}
			})
		}
	}
}
