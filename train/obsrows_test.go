package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// rowsOf draws n rows of size values: from a palette of k distinct
// values when k > 0 (binary planes, counts over a constant, -0 apart from
// +0), each of them used when n*size >= k; from the continuum otherwise.
func rowsOf(rng *rand.Rand, n, size, k int) []float32 {
	palette := []float32{0, 1, float32(math.Copysign(0, -1)), 1.0 / 6}
	for len(palette) < k {
		palette = append(palette, 2+float32(len(palette))/1000)
	}
	v := make([]float32, n*size)
	for i := range v {
		switch {
		case k > 0 && i < k:
			v[i] = palette[i]
		case k > 0:
			v[i] = palette[rng.IntN(k)]
		default:
			v[i] = rng.Float32()
		}
	}
	return v
}

// sameBits reports whether a and b hold the same float32 bit patterns
// (-0 differs from +0).
func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// checkBlock compares every row of r with the reference rows want.
func checkBlock(t *testing.T, what string, r *obsRows, want []float32) {
	t.Helper()
	n := len(want) / r.size
	if r.len() != n {
		t.Fatalf("%s: %d rows, want %d", what, r.len(), n)
	}
	got := make([]float32, r.size)
	for i := range n {
		r.row(i, got)
		if !sameBits(got, want[i*r.size:(i+1)*r.size]) {
			t.Fatalf("%s: row %d differs from what was appended", what, i)
		}
	}
}

// Rows come back bit for bit whatever their values: coded while the
// block has at most 256 distinct values, raw from the append that brings
// the 257th, through appends of floats and copies between blocks with
// different tables (coded to coded, coded to raw, raw to coded).
func TestObsRowsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const size = 37
	cases := []struct {
		name  string
		parts []int // palette size of each appended part; 0 = continuous values
		coded bool
	}{
		{"binary", []int{2, 2, 2}, true},
		{"signed zero and fractions", []int{4, 3, 4}, true},
		{"exactly 256 values", []int{256, 256}, true},
		{"257 values", []int{256, 257}, false},
		{"continuous last", []int{2, 4, 0}, false},
		{"continuous first", []int{0, 2}, false},
	}
	for _, c := range cases {
		var direct, copied obsRows
		direct.size, copied.size = size, size
		var want []float32
		for _, k := range c.parts {
			n := 10 + rng.IntN(20) // n*size > 256
			v := rowsOf(rng, n, size, k)
			want = append(want, v...)
			direct.append(v)
			// The same rows through a block of their own, copied in two
			// ranges (as canonical and LoadDataset copy shards).
			src := obsRows{size: size}
			src.append(v)
			checkBlock(t, c.name+" source", &src, v)
			cut := rng.IntN(n + 1)
			copied.appendRows(&src, 0, cut)
			copied.appendRows(&src, cut, n)
		}
		checkBlock(t, c.name+" appended", &direct, want)
		checkBlock(t, c.name+" copied", &copied, want)
		if direct.isRaw() == c.coded || copied.isRaw() == c.coded { // raw must be !coded
			t.Errorf("%s: raw %v / %v, want coded %v", c.name, direct.isRaw(), copied.isRaw(), c.coded)
		}
		if c.coded && direct.bytes() > int64(len(want))+4*maxCodes {
			t.Errorf("%s: %d bytes for %d values, want about one per value", c.name, direct.bytes(), len(want))
		}
	}
}

// A row copied one at a time from blocks whose tables list the same
// values in different orders keeps its values (the remap is per source).
func TestObsRowsInterleavedSources(t *testing.T) {
	const size = 5
	a, b := obsRows{size: size}, obsRows{size: size}
	va := []float32{0, 1, 0.5, 0, 1}
	vb := []float32{0.5, 1, 0, 0.25, 0}
	a.append(va)
	b.append(vb)
	var m obsRows
	m.size = size
	var want []float32
	for i := range 6 {
		if i%2 == 0 {
			m.appendRows(&a, 0, 1)
			want = append(want, va...)
		} else {
			m.appendRows(&b, 0, 1)
			want = append(want, vb...)
		}
	}
	checkBlock(t, "interleaved", &m, want)
	if m.isRaw() {
		t.Error("interleaved coded sources made the block raw")
	}
}

// len returns the number of rows.
func (r *obsRows) len() int {
	if r.size == 0 {
		return 0
	}
	if r.raw != nil {
		return len(r.raw) / r.size
	}
	return len(r.codes) / r.size
}
