package selfplay

import (
	"archive/zip"
	"bytes"
	"testing"
)

func testZip(t testing.TB) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"obs.npy", "value.npy"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("data of " + name))
	}
	zw.Close()
	return buf.Bytes()
}

// A name that differs between the central directory and the local
// header (what numpy refuses) is found; an intact archive passes.
func TestCheckZipNames(t *testing.T) {
	b := testZip(t)
	if err := CheckZipNames(bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatalf("intact archive: %v", err)
	}
	i := bytes.LastIndex(b, []byte("value.npy"))
	b[i] = 'V'
	if err := CheckZipNames(bytes.NewReader(b), int64(len(b))); err == nil {
		t.Error("a flipped byte in the central directory passed")
	}
}

// CheckZipNames never panics on any input.
func FuzzCheckZipNames(f *testing.F) {
	f.Add(testZip(f))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		CheckZipNames(bytes.NewReader(b), int64(len(b)))
	})
}
