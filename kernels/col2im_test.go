package kernels

import (
	"math"
	"testing"
)

// TestCol2Im3x3GatherMatchesScatter: the gathering col2im3x3 adds the same
// entries in the same order as the plain scatter form, nine axpy passes per
// im2col row (the adjoint test checks the scatter form's meaning), so the
// two agree bit for bit (but for the sign of a zero sum) on every
// implementation (the SIMD ones add eight channels at a time in the same
// order), including on images one pixel wide or high.
func TestCol2Im3x3GatherMatchesScatter(t *testing.T) {
	for _, name := range Available() {
		restore, err := Use(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, testCol2ImGather)
		restore()
	}
}

func testCol2ImGather(t *testing.T) {
	for _, s := range []struct{ batch, ch, h, w int }{
		{1, 1, 1, 1}, {2, 3, 1, 5}, {2, 5, 4, 1}, {3, 16, 6, 7}, {1, 7, 3, 3}, {2, 13, 3, 4}, {2, 64, 6, 7}, {1, 8, 1, 1},
	} {
		n := s.batch * s.h * s.w
		src := make([]float32, n*9*s.ch)
		for i := range src {
			src[i] = float32(math.Sin(float64(i)*0.37)) * float32(1+i%7)
		}
		got, want := make([]float32, n*s.ch), make([]float32, n*s.ch)
		for i := range got {
			got[i] = float32(math.Cos(float64(i) * 0.11))
			want[i] = got[i]
		}
		col2im3x3(src, s.batch, s.ch, s.h, s.w, got)
		col2im3x3Scatter(src, s.batch, s.ch, s.h, s.w, want)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: element %d: gather %v, scatter %v", s, i, got[i], want[i])
			}
		}
	}
}
