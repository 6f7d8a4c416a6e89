package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestToBF16 checks the rounding on values worked out by hand from the
// bfloat16 format (1 sign, 8 exponent and 7 fraction bits; round to
// nearest, ties to even) and the special cases of VCVTNE2PS2BF16.
func TestToBF16(t *testing.T) {
	cases := []struct {
		x    float32
		want uint16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{1 + 1.0/256, 0x3f80},        // halfway between 1 and 1+2^-7: ties to even (down)
		{1 + 3.0/256, 0x3f82},        // halfway between 1+2^-7 and 1+2^-6: ties to even (up)
		{1 + 1.0/256 + 1e-6, 0x3f81}, // just above halfway: up
		{3.140625, 0x4049},           // exactly representable
		{float32(math.Inf(1)), 0x7f80},
		{float32(math.Inf(-1)), 0xff80},
		{math.MaxFloat32, 0x7f80},                           // rounds up to infinity
		{math.Float32frombits(0x00000001), 0x0000},          // subnormal: zero
		{math.Float32frombits(0x807fffff), 0x8000},          // negative subnormal: -0
		{math.Float32frombits(0x00800000), 0x0080},          // smallest normal
		{math.Float32frombits(0x7f800001), 0x7fc0},          // signalling NaN: quiet
		{math.Float32frombits(0xffc12345), 0xffc1},          // quiet NaN keeps its sign and payload
		{math.Float32frombits(0x3f80_8000), 0x3f80},         // halfway, even below
		{math.Float32frombits(0x3f81_8000), 0x3f82},         // halfway, odd below
		{math.Float32frombits(0x3f80_7fff), 0x3f80},         // just below halfway
		{math.Float32frombits(0x7f7f_8000), 0x7f80},         // halfway to infinity: even is infinity
		{math.Float32frombits(0x7f7e_8000), 0x7f7e},         // halfway below the largest, even below
		{math.Float32frombits(0x0000_0000), 0x0000},         // +0
		{math.Float32frombits(0x8000_0000), 0x8000},         // -0
		{math.Float32frombits(0x3f7f_ffff), 0x3f80},         // 1-2^-24 rounds to 1
		{math.Float32frombits(0xbf7f_ffff), 0xbf80},         // and -1
		{math.Float32frombits(0x3380_0000), 0x3380},         // 2^-24
		{math.Float32frombits(0x3380_0001), 0x3380},         // a little more
		{math.Float32frombits(0x3381_0000), 0x3381},         // 2^-24 + one bfloat16 ulp
		{math.Float32frombits(0x0080_8000), 0x0080},         // smallest normal, halfway: even
		{math.Float32frombits(0x0081_8000), 0x0082},         // odd: up
		{math.Float32frombits(0x007f_ffff), 0x0000},         // largest subnormal: zero (not 0x0080)
		{math.Float32frombits(0x7fff_ffff), 0x7fff},         // NaN with every payload bit
		{math.Float32frombits(0x7f80_0000 | 1<<15), 0x7fc0}, // NaN whose payload is only below bit 16
	}
	for _, c := range cases {
		if got := ToBF16(c.x); got != c.want {
			t.Errorf("ToBF16(%g = %#08x) = %#04x, want %#04x", c.x, math.Float32bits(c.x), got, c.want)
		}
	}
	for _, h := range []uint16{0x3f80, 0xc049, 0x0080, 0x7f7f} {
		if got := ToBF16(FromBF16(h)); got != h {
			t.Errorf("ToBF16(FromBF16(%#04x)) = %#04x", h, got)
		}
	}
}

// TestConvertBF16Impls checks that the SIMD conversion rounds every value
// as ToBF16 does, on random bit patterns (NaNs, infinities, subnormals and
// halfway cases among them) and lengths that leave a scalar tail.
func TestConvertBF16Impls(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	src := make([]float32, 4099)
	for i := range src {
		b := r.Uint32()
		switch i % 5 {
		case 1:
			b &= 0x807f_ffff // subnormal
		case 2:
			b |= 0x7f80_0000 // infinity or NaN
		case 3:
			b = b&^0xffff | 0x8000 // halfway
		}
		src[i] = math.Float32frombits(b)
	}
	for _, name := range implNames() {
		use(t, name)
		for _, n := range []int{0, 1, 31, 32, 33, 4099} {
			dst := make([]uint16, n)
			ConvertBF16(dst, src[:n])
			for i, h := range dst {
				if want := ToBF16(src[i]); h != want {
					t.Fatalf("%s n=%d: element %d (%#08x) = %#04x, want %#04x", name, n, i, math.Float32bits(src[i]), h, want)
				}
			}
		}
	}
}

// roundBF16 returns x with every value rounded to bfloat16.
func roundBF16(x []float32) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = FromBF16(ToBF16(v))
	}
	return y
}

// TestConv3x3BiasActBF16 checks the BF16 convolution against the direct
// convolution in float64 of the bfloat16-rounded image and weights, in
// every epilogue mode, implementation and thread count; the shapes are
// those of TestConv3x3BiasAct plus an odd K and a strip of 32 columns.
func TestConv3x3BiasActBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	shapes := [][5]int{{1, 1, 1, 1, 1}, {2, 3, 6, 7, 5}, {1, 64, 6, 7, 64}, {3, 2, 10, 10, 33},
		{1, 4, 1, 5, 3}, {5, 7, 2, 1, 70}, {24, 64, 6, 7, 64}, {6, 32, 10, 10, 128}, {2, 107, 10, 10, 32}}
	if testing.Short() {
		shapes = shapes[:7]
	}
	for _, sh := range shapes {
		c := newConvCase(r, sh)
		packed := PackBF16(c.wt, 9*c.cin, c.cout)
		conv := directConv3x3(roundBF16(c.in), c.batch, c.cin, c.h, c.w, roundBF16(c.wt), c.cout)
		eachConvMode(t, conv, c.bias, c.res, func(bias, res []float32, relu bool, out []float32) {
			Conv3x3BiasActBF16(c.in, c.batch, c.cin, c.h, c.w, packed, bias, res, relu, out)
		}, func(label string, out, want []float32) {
			closeEnough(t, fmt.Sprintf("%s bf16 conv %v", label, sh), out, want, 9*c.cin)
		})
	}
}

// TestBF16KernelsAgree checks that the SIMD BF16 kernels and the portable
// code, which follows VDPBF16PS's order of additions, give the same
// results, for the GEMM and for the convolution (whose SIMD path reads
// the image in place when cin is even), and that the BF16 Winograd
// convolution gives the same bits on both. Where the hardware matched that order exactly (session 11's AMD
// EPYC with AVX-512 BF16), they agreed bit for bit; the test allows a few
// float32 roundings of the sum of the products' magnitudes, so that a CPU
// that rounds the two products of a pair once, not twice, still passes,
// while a misplaced operand (an error of the size of a product) fails.
func TestBF16KernelsAgree(t *testing.T) {
	if BF16Kernels() == "generic" {
		t.Skip("this CPU has no AVX-512 BF16: only the portable BF16 code runs here (checked by TestConv3x3BiasActBF16)")
	}
	r := rand.New(rand.NewPCG(25, 26))
	for _, sh := range [][3]int{{1, 9, 1}, {13, 576, 64}, {40, 963, 32}, {7, 64, 130}, {96, 1152, 64}} {
		m, k, n := sh[0], sh[1], sh[2]
		kk := (k + 1) / 2 * 2
		lda := kk + 2
		a := make([]uint16, m*lda)
		af := randSlice(r, m*k)
		for i := range m {
			ConvertBF16(a[i*lda:], af[i*k:(i+1)*k])
		}
		b := PackBF16(randSlice(r, k*n), k, n)
		bias := randSlice(r, n)
		res := randSlice(r, m*n)
		simd := make([]float32, m*n)
		GemmBiasActBF16(m, a, lda, b, bias, res, false, simd, n)
		restore, err := Use("generic")
		if err != nil {
			t.Fatal(err)
		}
		port := make([]float32, m*n)
		GemmBiasActBF16(m, a, lda, b, bias, res, false, port, n)
		restore()
		exact := 0
		for i := range simd {
			if simd[i] == port[i] {
				exact++
			}
			// Inputs are in [-1, 1]: the products' magnitudes sum to at most k.
			if d := math.Abs(float64(simd[i] - port[i])); d > float64(k)*0x1p-21 {
				t.Fatalf("%v: element %d: SIMD %v, portable %v", sh, i, simd[i], port[i])
			}
		}
		t.Logf("%v: %d of %d bit for bit", sh, exact, len(simd))
	}
	// The convolution: implicit im2col (even cin) and explicit (odd cin).
	for _, sh := range [][5]int{{16, 64, 6, 7, 64}, {3, 2, 6, 7, 64}, {2, 107, 10, 10, 64}, {5, 32, 10, 10, 40}} {
		c := newConvCase(r, sh)
		cin := c.cin
		wts := PackBF16(c.wt, 9*cin, c.cout)
		simd, port := make([]float32, len(c.res)), make([]float32, len(c.res))
		u := make([]float32, 16*cin*c.cout)
		WinogradWeights(c.wt, cin, c.cout, u)
		ub := PackWinogradBF16(u, cin, c.cout)
		wsimd, wport := make([]float32, len(c.res)), make([]float32, len(c.res))
		Conv3x3BiasActBF16(c.in, c.batch, cin, c.h, c.w, wts, c.bias, c.res, true, simd)
		if cin%2 == 0 {
			Conv3x3WinogradBF16(c.in, c.batch, cin, c.h, c.w, ub, c.bias, c.res, true, wsimd)
		}
		restore, err := Use("generic")
		if err != nil {
			t.Fatal(err)
		}
		Conv3x3BiasActBF16(c.in, c.batch, cin, c.h, c.w, wts, c.bias, c.res, true, port)
		if cin%2 == 0 {
			Conv3x3WinogradBF16(c.in, c.batch, cin, c.h, c.w, ub, c.bias, c.res, true, wport)
		}
		restore()
		// Winograd's transforms are the same additions in the same order
		// on every path, and so are the BF16 sums: bit for bit on the
		// machine above; a CPU that rounds a VDPBF16PS pair once may
		// differ in the last bits.
		closeEnough(t, fmt.Sprintf("winograd bf16 %v", sh), wsimd, wport, 9*cin)
		t.Logf("winograd %v: bit for bit: %v", sh, slices.Equal(wsimd, wport))
		exact := 0
		for i := range simd {
			if simd[i] == port[i] {
				exact++
			}
			if d := math.Abs(float64(simd[i] - port[i])); d > float64(9*cin)*0x1p-21 {
				t.Fatalf("conv %v: element %d: SIMD %v, portable %v", sh, i, simd[i], port[i])
			}
		}
		t.Logf("conv %v: %d of %d bit for bit", sh, exact, len(simd))
	}
}

// TestGemmBiasActBF16BadArgs checks that malformed calls panic with a
// message instead of reading out of bounds.
func TestGemmBiasActBF16BadArgs(t *testing.T) {
	b := PackBF16(make([]float32, 5*3), 5, 3)
	c := make([]float32, 4*3)
	a := make([]uint16, 4*6)
	for name, f := range map[string]func(){
		"odd lda":   func() { GemmBiasActBF16(4, a, 5, b, nil, nil, false, c, 3) },
		"short lda": func() { GemmBiasActBF16(4, a, 4, b, nil, nil, false, c, 3) },
		"short a":   func() { GemmBiasActBF16(5, a, 6, b, nil, nil, false, c, 3) },
		"short c":   func() { GemmBiasActBF16(4, a, 6, b, nil, nil, false, c[:10], 3) },
		"short ldc": func() { GemmBiasActBF16(4, a, 6, b, nil, nil, false, c, 2) },
		"bias":      func() { GemmBiasActBF16(4, a, 6, b, make([]float32, 2), nil, false, c, 3) },
		"conv k":    func() { Conv3x3BiasActBF16(make([]float32, 9), 1, 1, 3, 3, b, nil, nil, false, make([]float32, 27)) },
		"pack":      func() { PackBF16(make([]float32, 5), 2, 3) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestConv3x3WinogradBF16 checks the BF16 Winograd convolution against the
// float64 direct convolution with a tolerance for bfloat16 operands: the
// transformed image and weights are rounded to 8 significant bits, and
// the transforms spread each rounding over several outputs. Measured, the
// largest error was 0.0015-0.0027 of the absolute sum of an output's
// direct products (im2col in bfloat16: 0.0007-0.0012); the test allows
// 0.01. Every implementation, epilogue mode and thread count.
func TestConv3x3WinogradBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, sh := range [][5]int{{1, 2, 1, 1, 1}, {2, 4, 6, 7, 5}, {1, 64, 6, 7, 64}, {3, 16, 10, 10, 33}, {5, 8, 3, 1, 70}, {24, 64, 6, 7, 64}} {
		c := newConvCase(r, sh)
		conv := directConv3x3(c.in, c.batch, c.cin, c.h, c.w, c.wt, c.cout)
		scale := directConv3x3(absSlice(c.in), c.batch, c.cin, c.h, c.w, absSlice(c.wt), c.cout)
		u := make([]float32, 16*c.cin*c.cout)
		WinogradWeights(c.wt, c.cin, c.cout, u)
		ub := PackWinogradBF16(u, c.cin, c.cout)
		eachConvMode(t, conv, c.bias, c.res, func(bias, res []float32, relu bool, out []float32) {
			Conv3x3WinogradBF16(c.in, c.batch, c.cin, c.h, c.w, ub, bias, res, relu, out)
		}, func(label string, out, want []float32) {
			for i := range want {
				if d := math.Abs(float64(out[i] - want[i])); !(d <= 0.01*float64(scale[i])+1e-6) {
					t.Fatalf("%s %v: element %d = %v, want %v (scale %v)", label, sh, i, out[i], want[i], scale[i])
				}
			}
		})
	}
}

// FuzzConvertBF16 checks the SIMD conversion against ToBF16 on fuzzed bit
// patterns (read as little-endian float32s).
func FuzzConvertBF16(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0x80, 0x80, 0x3f, 1, 0, 0x80, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		src := make([]float32, len(data)/4)
		for i := range src {
			src[i] = math.Float32frombits(uint32(data[4*i]) | uint32(data[4*i+1])<<8 | uint32(data[4*i+2])<<16 | uint32(data[4*i+3])<<24)
		}
		dst := make([]uint16, len(src))
		ConvertBF16(dst, src)
		for i, h := range dst {
			if want := ToBF16(src[i]); h != want {
				t.Fatalf("element %d (%#08x): %#04x, want %#04x", i, math.Float32bits(src[i]), h, want)
			}
		}
	})
}

// TestPackBF16Layout checks every packed value against ToBF16 of its
// weight at its place in the layout (strip s, pair q/2, column, q%2), on
// every implementation: one full strip of 32 or 64 columns is rounded and
// interleaved by the SIMD pair-row loop where the CPU has AVX-512 BF16,
// other shapes value by value. Values include ties and a NaN.
func TestPackBF16Layout(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, kern := range Available() {
		restore, err := Use(kern)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range [][2]int{{18, 64}, {9, 64}, {576, 32}, {1, 64}, {7, 70}, {6, 16}} {
			k, n := sh[0], sh[1]
			w := randSlice(r, k*n)
			w[0] = math.Float32frombits(0x3f808000) // a tie: rounds to even
			w[len(w)-1] = float32(math.NaN())
			m := PackBF16(w, k, n)
			nr := m.nr
			for q := range k {
				for j := range n {
					s, jj := j/nr, j%nr
					got := m.data[s*m.kp*nr*2+(q/2)*nr*2+jj*2+q%2]
					if want := ToBF16(w[q*n+j]); got != want {
						t.Fatalf("%s %v: packed (%d, %d) = %#04x, want %#04x", kern, sh, q, j, got, want)
					}
				}
			}
		}
		restore()
	}
}

// TestRepackBF16 checks that repacking into a matrix's memory gives what
// packing anew gives (the padding of an odd K and of a partial strip
// stays zero), and that another size gets new memory.
func TestRepackBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	randMat := func(k, n int) []float32 {
		w := make([]float32, k*n)
		for i := range w {
			w[i] = float32(r.NormFloat64())
		}
		return w
	}
	for _, sh := range [][2]int{{9, 33}, {18, 64}, {7, 70}} {
		k, n := sh[0], sh[1]
		m := PackBF16(randMat(k, n), k, n)
		w := randMat(k, n)
		got := RepackBF16(m, w, k, n)
		if got != m {
			t.Errorf("%v: RepackBF16 allocated for a matrix of the same size", sh)
		}
		if want := PackBF16(w, k, n); !slices.Equal(got.data, want.data) {
			t.Errorf("%v: repacked data differs from a fresh PackBF16", sh)
		}
		if other := RepackBF16(m, randMat(k+1, n), k+1, n); other == m || other.K() != k+1 {
			t.Errorf("%v: RepackBF16 to %d rows reused the matrix or has %d rows", sh, k+1, other.K())
		}
	}
	u := randMat(16*4, 6)
	wb := PackWinogradBF16(randMat(16*4, 6), 4, 6)
	if got := RepackWinogradBF16(wb, u, 4, 6); got != wb || !slices.Equal(got.u[5].data, PackBF16(u[5*24:6*24], 4, 6).data) {
		t.Errorf("RepackWinogradBF16 did not repack in place")
	}
}
