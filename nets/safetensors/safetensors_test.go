package safetensors

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	ts := []Tensor{
		FromFloat32("b", []int{2, 3}, []float32{1, -2, 3.5, 0, float32(math.Inf(1)), -0.25}),
		FromFloat32("a", []int{}, []float32{42}),
	}
	buf, err := Encode(ts, map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	if hl := binary.LittleEndian.Uint64(buf); hl%8 != 0 {
		t.Errorf("header length %d not padded to 8", hl)
	}
	f, err := Parse(buf)
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata["k"] != "v" || len(f.Tensors) != 2 || f.Tensors[0].Name != "a" {
		t.Fatalf("parsed %+v", f)
	}
	b, _ := f.Get("b")
	v, err := b.Float32()
	if err != nil || len(v) != 6 || v[2] != 3.5 || !math.IsInf(float64(v[4]), 1) || b.Shape[1] != 3 {
		t.Errorf("b = %v %v %v", v, b.Shape, err)
	}
	a, _ := f.Get("a")
	if v, _ := a.Float32(); len(a.Shape) != 0 || v[0] != 42 {
		t.Errorf("scalar a = %v shape %v", v, a.Shape)
	}
}

// halfs.safetensors was written by ../testdata/make_reference.py from
// PyTorch's own float16/bfloat16 conversions.
func TestHalfFormatsAgainstPyTorch(t *testing.T) {
	f, err := ReadFile(filepath.Join("..", "testdata", "halfs.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"f16", "bf16"} {
		h, _ := f.Get(name)
		w, _ := f.Get(name + ".want")
		got, err := h.Float32()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := w.Float32()
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s[%d] = %g, want %g", name, i, got[i], want[i])
			}
		}
	}
}

func TestHalfByHand(t *testing.T) {
	for _, c := range []struct {
		h    uint16
		want float32
	}{{0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0001, 1.0 / (1 << 24)}, {0x8000, float32(math.Copysign(0, -1))}, {0x3555, 0.333251953125}} {
		if got := halfToFloat32(c.h); got != c.want || math.Signbit(float64(got)) != math.Signbit(float64(c.want)) {
			t.Errorf("half %#04x = %g, want %g", c.h, got, c.want)
		}
	}
	if v := halfToFloat32(0x7c00); !math.IsInf(float64(v), 1) {
		t.Errorf("half inf = %g", v)
	}
	if v := halfToFloat32(0x7e00); !math.IsNaN(float64(v)) {
		t.Errorf("half nan = %g", v)
	}
}

// file builds a raw safetensors file from a header string and data size.
func file(header string, data int) []byte {
	buf := make([]byte, 8, 8+len(header)+data)
	binary.LittleEndian.PutUint64(buf, uint64(len(header)))
	buf = append(buf, header...)
	return append(buf, make([]byte, data)...)
}

func TestParseErrors(t *testing.T) {
	ok := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	if _, err := Parse(file(ok, 8)); err != nil {
		t.Fatalf("valid file: %v", err)
	}
	huge := make([]byte, 16)
	binary.LittleEndian.PutUint64(huge, 1<<40)
	beyond := make([]byte, 16)
	binary.LittleEndian.PutUint64(beyond, 100)
	for _, c := range []struct {
		name string
		buf  []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"short", []byte{1, 2, 3}, "truncated"},
		{"huge header", huge, "exceeds"},
		{"header beyond file", beyond, "beyond the end"},
		{"bad json", file(`{"a":`, 0), "bad JSON"},
		{"json array", file(`[1,2]`, 0), "bad JSON"},
		{"null", file(`null`, 0), "bad JSON"},
		{"trailing", file(`{} x`, 0), "unexpected bytes"},
		{"truncated data", file(ok, 4), "out of range"},
		{"unknown dtype", file(`{"a":{"dtype":"F12","shape":[2],"data_offsets":[0,8]}}`, 8), "unknown dtype"},
		{"shape mismatch", file(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8), "needs 12 bytes"},
		{"negative dim", file(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, 8), "negative"},
		{"huge shape", file(`{"a":{"dtype":"F32","shape":[4611686018427387904,4611686018427387904],"data_offsets":[0,8]}}`, 8), "too large"},
		{"reversed offsets", file(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`, 8), "out of range"},
		{"one offset", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}}`, 8), "data_offsets"},
		{"overlap", file(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), "overlap"},
		{"bad metadata", file(`{"__metadata__":{"k":1}}`, 0), "__metadata__"},
		{"bad entry", file(`{"a":"x"}`, 0), `tensor "a"`},
	} {
		_, err := Parse(c.buf)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

func TestWrongDType(t *testing.T) {
	f, err := Parse(file(`{"idx":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}}`, 8))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Tensors[0].Float32(); err == nil || !strings.Contains(err.Error(), `"idx"`) {
		t.Errorf("I32 to float: %v", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.safetensors")
	for i := 0; i < 2; i++ { // second write replaces the first
		if err := WriteFile(path, []Tensor{FromFloat32("x", []int{1}, []float32{float32(i)})}, nil); err != nil {
			t.Fatal(err)
		}
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Tensors[0].Float32(); v[0] != 1 {
		t.Errorf("x = %v, want the second write", v)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the file (temporaries left behind?)", len(ents))
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), nil, nil); err == nil {
		t.Error("write into a missing directory: no error")
	}
	if _, err := Encode([]Tensor{FromFloat32("x", []int{1}, []float32{1}), FromFloat32("x", []int{1}, []float32{1})}, nil); err == nil {
		t.Error("duplicate names: no error")
	}
}

func FuzzReadSafetensors(f *testing.F) {
	good, _ := Encode([]Tensor{FromFloat32("w", []int{2, 2}, []float32{1, 2, 3, 4}), FromFloat32("b", []int{2}, []float32{5, 6})},
		map[string]string{"canopy.config": `{"head":"ppo"}`})
	f.Add(good)
	f.Add(file(`{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}}`, 4))
	f.Add(file(`{"a":{"dtype":"BF16","shape":[1,1],"data_offsets":[0,2]}}`, 2))
	f.Add([]byte{})
	if b, err := os.ReadFile(filepath.Join("..", "testdata", "tiny_az.safetensors")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, buf []byte) {
		fl, err := Parse(buf)
		if err != nil {
			return
		}
		for i := range fl.Tensors {
			tt := &fl.Tensors[i]
			if len(tt.Data) != tt.NumElements()*tt.DType.Size() {
				t.Fatalf("tensor %q: %d bytes for shape %v", tt.Name, len(tt.Data), tt.Shape)
			}
			tt.Float32() // must not panic
		}
		// What parses re-encodes and parses to the same tensors.
		out, err := Encode(fl.Tensors, fl.Metadata)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := Parse(out)
		if err != nil || len(again.Tensors) != len(fl.Tensors) {
			t.Fatalf("re-parse: %v", err)
		}
	})
}
