package ortbackend

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpenModel hands ONNX Runtime damaged models (the seeds are the
// fixtures; the fuzzer flips and cuts bytes): Open must fail with an
// error or give a backend that evaluates or fails cleanly, never crash.
func FuzzOpenModel(f *testing.F) {
	needLib(f)
	for _, name := range []string{"resnet", "seglobal", "wide_value"} {
		b, err := os.ReadFile(model(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "m.onnx")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := Open(nil, Options{Model: path, Threads: 1, MaxBatch: 4})
		if err != nil {
			return
		}
		defer b.Close()
		in, p := b.Shape()
		if in > 1<<16 || p > 1<<16 {
			return
		}
		b.Evaluate(context.Background(), 2, make([]float32, 2*in), make([]float32, 2*p), make([]float32, 2))
	})
}
