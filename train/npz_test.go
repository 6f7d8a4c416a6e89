package train

import (
	"archive/zip"
	"bytes"
	"hash/crc32"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestReadNPZDtypes(t *testing.T) {
	data := npzBytes(t, []testArray{
		{name: "f", descr: "<f4", shape: []int{2, 3}, data: []float32{1, 2, 3, 4, 5, -6.5}},
		{name: "i", descr: "<i4", shape: []int{3}, data: []int32{-1, 0, 7}},
		{name: "l", descr: "<i8", shape: []int{2}, data: []int64{1 << 40, -3}},
		{name: "u", descr: "|u1", shape: []int{2, 2}, data: []uint8{0, 1, 1, 0}},
		{name: "b", descr: "|b1", shape: []int{1}, data: []uint8{1}},
		{name: "s", descr: "<f4", shape: []int{}, data: []float32{2.5}},
	})
	arrays, err := readNPZ(data)
	if err != nil {
		t.Fatal(err)
	}
	f, i, l, u, b, s := arrays["f"], arrays["i"], arrays["l"], arrays["u"], arrays["b"], arrays["s"]
	switch {
	case !slices.Equal(f.shape, []int{2, 3}) || !slices.Equal(f.f32, []float32{1, 2, 3, 4, 5, -6.5}):
		t.Errorf("f: %v %v", f.shape, f.f32)
	case !slices.Equal(i.i32, []int32{-1, 0, 7}):
		t.Errorf("i: %v", i.i32)
	case !slices.Equal(l.i64, []int64{1 << 40, -3}):
		t.Errorf("l: %v", l.i64)
	case u.descr != "|u1" || !slices.Equal(u.u8, []uint8{0, 1, 1, 0}):
		t.Errorf("u: %v %v", u.descr, u.u8)
	case b.descr != "|u1" || !slices.Equal(b.u8, []uint8{1}):
		t.Errorf("b: %v %v", b.descr, b.u8)
	case len(s.shape) != 0 || !slices.Equal(s.f32, []float32{2.5}):
		t.Errorf("scalar: %v %v", s.shape, s.f32)
	}
}

func TestReadNPZRejects(t *testing.T) {
	good := testArray{name: "x", descr: "<f4", shape: []int{2}, data: []float32{1, 2}}
	npy := npyBytes(good)
	for _, tc := range []struct {
		name string
		arr  testArray
		raw  []byte // used instead of arr when set
		want string
	}{
		{"fortran", testArray{name: "x", descr: "<f4", shape: []int{2, 2}, data: []float32{1, 2, 3, 4}, fortran: true}, nil, "Fortran order"},
		{"float64", testArray{name: "x", descr: "<f8", shape: []int{1}, data: []float64{1}}, nil, `dtype "<f8" is not supported`},
		{"big-endian", testArray{name: "x", descr: ">f4", shape: []int{1}, data: []float32{1}}, nil, `dtype ">f4"`},
		{"truncated", testArray{}, npy[:len(npy)-3], "truncated"},
		{"extra data", testArray{}, append(slices.Clone(npy), 0, 0, 0, 0), "more data than its shape"},
		{"bad magic", testArray{}, append([]byte("\x93NUMPX"), npy[6:]...), "bad magic"},
		{"huge shape", testArray{}, bytes.Replace(npy, []byte("(2,)"), []byte("(4000000000,4000000000)"), 1), "too large"},
		{"version 9", testArray{}, append([]byte("\x93NUMPY\x09\x00"), npy[8:]...), "version 9.0"},
		{"header garbage", testArray{}, bytes.Replace(npy, []byte("'shape'"), []byte("'shape}'"), 1), "bad .npy header"},
	} {
		raw := tc.raw
		if raw == nil {
			raw = npyBytes(tc.arr)
		}
		var z bytes.Buffer
		zw := zip.NewWriter(&z)
		w, _ := zw.Create("x.npy")
		w.Write(raw)
		zw.Close()
		_, err := readNPZ(z.Bytes())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := readNPZ([]byte("not a zip")); err == nil || !strings.Contains(err.Error(), "zip") {
		t.Errorf("garbage: %v", err)
	}
}

// numpy, when installed, writes files the reader must accept (savez and
// savez_compressed, every supported dtype, a version 2.0 header).
func TestReadNumpyFiles(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import numpy").Run() != nil {
		t.Skip("/usr/bin/python3 with numpy not available (apt-get install python3-numpy); skipping the numpy-written files")
	}
	dir := t.TempDir()
	script := `import numpy as np, sys, io
d = sys.argv[1]
a = dict(f=np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5, i=np.array([-1, 5], dtype=np.int32),
         l=np.array([1 << 40], dtype=np.int64), u=np.array([[0, 1]], dtype=np.uint8), b=np.array([True, False]))
np.savez(d + "/plain.npz", **a)
np.savez_compressed(d + "/compressed.npz", **a)
buf = io.BytesIO()
np.lib.format.write_array(buf, a["f"], version=(2, 0))
import zipfile
with zipfile.ZipFile(d + "/v2.npz", "w") as z:
    z.writestr("f.npy", buf.getvalue())
np.savez(d + "/fortran.npz", f=np.asfortranarray(a["f"]))
`
	if out, err := exec.Command("/usr/bin/python3", "-c", script, dir).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	for _, name := range []string{"plain", "compressed", "v2"} {
		data := mustRead(t, filepath.Join(dir, name+".npz"))
		arrays, err := readNPZ(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f := arrays["f"]; !slices.Equal(f.shape, []int{2, 3}) || !slices.Equal(f.f32, []float32{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5}) {
			t.Errorf("%s: f = %v %v", name, f.shape, f.f32)
		}
		if name == "v2" {
			continue
		}
		if !slices.Equal(arrays["i"].i32, []int32{-1, 5}) || !slices.Equal(arrays["l"].i64, []int64{1 << 40}) ||
			!slices.Equal(arrays["u"].u8, []uint8{0, 1}) || !slices.Equal(arrays["b"].u8, []uint8{1, 0}) {
			t.Errorf("%s: %v %v %v %v", name, arrays["i"].i32, arrays["l"].i64, arrays["u"].u8, arrays["b"].u8)
		}
	}
	// A 2-D array in Fortran order is refused.
	if _, err := readNPZ(mustRead(t, filepath.Join(dir, "fortran.npz"))); err == nil || !strings.Contains(err.Error(), "Fortran") {
		t.Errorf("fortran: %v", err)
	}
}

// FuzzReadNPY: the reader of outside input never panics and never
// accepts data whose length disagrees with its shape.
func FuzzReadNPY(f *testing.F) {
	f.Add(npyBytes(testArray{name: "x", descr: "<f4", shape: []int{2}, data: []float32{1, 2}}))
	f.Add(npyBytes(testArray{name: "x", descr: "|u1", shape: []int{2, 2}, data: []uint8{1, 0, 1, 1}}))
	f.Add(npyBytes(testArray{name: "x", descr: "<i8", shape: []int{}, data: []int64{4}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := readNPY(bytes.NewReader(data), 0)
		if err != nil {
			return
		}
		n := len(a.f32) + len(a.i32) + len(a.i64) + len(a.u8)
		if n != a.len() {
			t.Fatalf("shape %v holds %d values, decoded %d", a.shape, a.len(), n)
		}
	})
}

// A small file whose zip directory and .npy header both claim a huge
// array is refused without allocating what they claim: the buffer is
// bounded by the bytes the file really has.
func TestReadNPZClaimsDoNotAllocate(t *testing.T) {
	// The header says 2^28 float32 values (1 GiB); the data is 8 bytes.
	claimed := npyBytes(testArray{name: "obs", descr: "<f4", shape: []int{1 << 28}, data: []float32{1, 2}})
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "obs.npy", Method: zip.Store,
		CompressedSize64: uint64(len(claimed)), UncompressedSize64: 1<<30 + 128, CRC32: crc32.ChecksumIEEE(claimed)})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(claimed)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, err = readNPZ(zb.Bytes())
	runtime.ReadMemStats(&m1)
	if err == nil {
		t.Fatal("a 1 GiB claim with 8 data bytes: no error")
	}
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 64<<20 {
		t.Errorf("reading it allocated %d MB; the file has %d bytes", a>>20, zb.Len())
	}
}

// len is the number of elements (the product of the shape).
func (a *npyArray) len() int {
	n := 1
	for _, d := range a.shape {
		n *= d
	}
	return n
}
