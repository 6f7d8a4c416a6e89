package ortbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/canopy-go/canopy/nets"
)

// needLib skips the test when no ONNX Runtime library is found here.
func needLib(t testing.TB) *Lib {
	t.Helper()
	l, err := Load()
	if errors.Is(err, ErrNoLibrary) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// record is a fixture's recorded PyTorch inputs and outputs
// (testdata/make_fixtures.py).
type record struct {
	Model      string    `json:"model"`
	InputShape []int     `json:"input_shape"`
	Input      []float32 `json:"input"`
	Outputs    map[string]struct {
		Shape []int     `json:"shape"`
		Data  []float32 `json:"data"`
	} `json:"outputs"`
}

func readRecord(t *testing.T, name string) record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func model(name string) string { return filepath.Join("testdata", name+".onnx") }

// netFor makes a Canopy net with the fixture models' input (3x4x5) and
// policy sizes, standing for the game the model plays.
func netFor(t *testing.T, planes, policy int) *nets.Net {
	t.Helper()
	n, err := nets.New(nets.Config{InputPlanes: planes, Height: 4, Width: 5, PolicySize: policy, Channels: 4, Blocks: 1, ValueHidden: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func open(t *testing.T, name string, net *nets.Net, o Options) *Backend {
	t.Helper()
	o.Model = model(name)
	if o.Threads == 0 {
		o.Threads = 2
	}
	b, err := Open(net, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestPyTorchAgreement runs the recorded inputs through ONNX Runtime and
// compares with PyTorch's outputs (the outside reference) within 1e-5.
func TestPyTorchAgreement(t *testing.T) {
	needLib(t)
	for _, c := range []struct{ name, policy, value string }{
		{"resnet", "policy", "value"}, // outputs in order policy, value [B,1]
		{"seglobal", "logits", "v"},   // value [B] first, names that are not "policy"
	} {
		t.Run(c.name, func(t *testing.T) {
			r := readRecord(t, c.name)
			b := open(t, c.name, netFor(t, 3, 20), Options{})
			in, pol, val := b.Model()
			if in.Shape[0] != -1 || pol.Name != c.policy || val.Name != c.value {
				t.Fatalf("model read as input %s, policy %s, value %s", in, pol, val)
			}
			batch := r.InputShape[0]
			policy, value := make([]float32, batch*20), make([]float32, batch)
			if err := b.Evaluate(context.Background(), batch, r.Input, policy, value); err != nil {
				t.Fatal(err)
			}
			compare(t, "policy", policy, r.Outputs[c.policy].Data, 1e-5)
			compare(t, "value", value, r.Outputs[c.value].Data, 1e-5)
		})
	}
}

func compare(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	worst := 0.0
	for i := range got {
		worst = math.Max(worst, math.Abs(float64(got[i])-float64(want[i])))
	}
	if worst > tol || worst != worst {
		t.Errorf("%s: max |ort - reference| = %.3g > %g", what, worst, tol)
	}
	t.Logf("%s: max |ort - reference| = %.3g", what, worst)
}

// TestBatchSweep checks that every batch size gives the rows that batch 1
// gives (dynamic batch), with outputs written only where they belong.
func TestBatchSweep(t *testing.T) {
	needLib(t)
	r := readRecord(t, "resnet")
	b := open(t, "resnet", nil, Options{MaxBatch: 64})
	in, p := b.Shape()
	const rows = 40
	input := make([]float32, rows*in)
	for i := range input {
		input[i] = r.Input[i%len(r.Input)] * float32(1+i/len(r.Input))
	}
	onePol, oneVal := make([]float32, rows*p), make([]float32, rows)
	for i := range rows {
		if err := b.Evaluate(context.Background(), 1, input[i*in:], onePol[i*p:], oneVal[i:]); err != nil {
			t.Fatal(err)
		}
	}
	for _, batch := range []int{2, 3, 7, 8, 16, 33, rows} {
		pol, val := make([]float32, rows*p+1), make([]float32, rows+1)
		pol[batch*p], val[batch] = 42, 42 // just past the batch: must be left alone
		for i := 0; i+batch <= rows; i += batch {
			if err := b.Evaluate(context.Background(), batch, input[i*in:], pol[i*p:], val[i:]); err != nil {
				t.Fatal(err)
			}
			if i == 0 && (pol[batch*p] != 42 || val[batch] != 42) {
				t.Fatalf("batch %d wrote past its rows", batch)
			}
		}
		n := rows / batch * batch
		compare(t, "policy", pol[:n*p], onePol[:n*p], 1e-5)
		compare(t, "value", val[:n], oneVal[:n], 1e-5)
	}
}

func TestOpenErrors(t *testing.T) {
	needLib(t)
	dir := t.TempDir()
	good, err := os.ReadFile(model("resnet"))
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.onnx")
	os.WriteFile(truncated, good[:len(good)/3], 0o644)
	garbage := filepath.Join(dir, "text.onnx")
	os.WriteFile(garbage, []byte("this is not a model\n"), 0o644)
	for _, c := range []struct {
		name  string
		model string
		net   *nets.Net
		want  []string
	}{
		{"missing file", filepath.Join(dir, "nope.onnx"), nil, []string{"nope.onnx", "no such file"}},
		{"truncated", truncated, nil, []string{"truncated.onnx", "CreateSession"}},
		{"not a model", garbage, nil, []string{"text.onnx", "CreateSession"}},
		{"input size", model("resnet"), netFor(t, 2, 20), []string{"input [B,3,4,5]", "60 values", "takes 40"}},
		{"policy size", model("resnet"), netFor(t, 3, 9), []string{"no output fits the policy", "9 actions", "policy [B,20]"}},
		{"wide value", model("wide_value"), nil, []string{"no output fits one value", "value [B,3]"}},
		{"fixed batch", model("fixed2"), nil, []string{"fixed batch of 2", "dynamic batch axis"}},
		{"no model", "", nil, []string{"no model file", "ort:model=FILE.onnx"}},
	} {
		b, err := Open(c.net, Options{Model: c.model, Threads: 1})
		if err == nil {
			b.Close()
			t.Errorf("%s: opened", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.name, err, w)
			}
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines: %q", c.name, err)
		}
	}
}

func TestEvaluateErrors(t *testing.T) {
	needLib(t)
	b := open(t, "resnet", nil, Options{MaxBatch: 4})
	in, p := b.Shape()
	ctx := context.Background()
	x, pol, val := make([]float32, 5*in), make([]float32, 5*p), make([]float32, 5)
	for _, c := range []struct {
		name  string
		batch int
		x     []float32
		want  string
	}{
		{"batch 0", 0, x, "outside [1, 4]"},
		{"batch 5", 5, x, "outside [1, 4]"},
		{"short input", 2, x[:in+1], "needs input 120"},
	} {
		err := b.Evaluate(ctx, c.batch, c.x, pol, val)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.Evaluate(cctx, 1, x, pol, val); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	x[3] = float32(math.Inf(1))
	if err := b.Evaluate(ctx, 1, x, pol, val); !errors.Is(err, nets.ErrNonFinite) {
		t.Errorf("infinite input: %v, want ErrNonFinite", err)
	}
	raw := open(t, "raw_value", nil, Options{})
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	if err := raw.Evaluate(ctx, 4, x, pol, val); !errors.Is(err, ErrValueRange) || !strings.Contains(err.Error(), "tanh") {
		t.Errorf("value without tanh: %v, want ErrValueRange", err)
	}
	b.Close()
	b.Close()
	if err := b.Evaluate(ctx, 1, x, pol, val); err == nil || !strings.Contains(err.Error(), "after Close") {
		t.Errorf("after Close: %v", err)
	}
}

// TestRegistry opens ort through the backend registry: the model option,
// unavailability without a library or provider, and auto passing over it.
func TestRegistry(t *testing.T) {
	needLib(t)
	net := netFor(t, 3, 20)
	be, c, err := nets.OpenBackendSpec("ort:model="+model("resnet")+",threads=1", net, nets.BackendOptions{MaxBatch: 8})
	if err != nil {
		t.Fatal(err)
	}
	be.(*Backend).Close()
	if be.Name() != "ort" || be.MaxBatch() != 8 || !strings.Contains(c.Detail, "provider cpu on 1 intra-op thread") {
		t.Errorf("opened %s (max batch %d): %s", be.Name(), be.MaxBatch(), c.Detail)
	}
	be, c, err = nets.OpenBackendSpec("ort:model="+model("resnet")+",threads=2,spin=true", net, nets.BackendOptions{MaxBatch: 8})
	if err != nil || !strings.Contains(c.Detail, "2 intra-op thread(s) (spinning)") {
		t.Errorf("spin=true: %v %s", err, c.Detail)
	} else {
		be.(*Backend).Close()
	}
	if _, _, err := nets.OpenBackendSpec("ort:model=x.onnx,spin=maybe", net, nets.BackendOptions{}); !errors.Is(err, nets.ErrBadBackendOption) {
		t.Errorf("spin=maybe: %v", err)
	}
	if _, _, err := nets.OpenBackendSpec("ort", net, nets.BackendOptions{}); !errors.Is(err, nets.ErrBadBackendOption) ||
		!strings.Contains(err.Error(), "ort:model=FILE.onnx") || !strings.Contains(err.Error(), "canopy net export") {
		t.Errorf("ort without a model: %v", err)
	}
	be, c, err = nets.OpenBackendSpec("auto", net, nets.BackendOptions{MaxBatch: 8})
	if err != nil || be.Name() == "ort" {
		t.Errorf("auto opened %v (%v)", c, err)
	}
	// The npm build lists the CUDA and TensorRT providers but has not
	// their shared libraries (nor a GPU here): unavailable, with a reason.
	for _, p := range []string{"cuda", "tensorrt"} {
		_, _, err := nets.OpenBackendSpec("ort:provider="+p+",model="+model("resnet"), net, nets.BackendOptions{})
		if !errors.Is(err, nets.ErrBackendUnavailable) || !strings.Contains(err.Error(), "provider "+p+" unavailable") {
			t.Errorf("provider %s here: %v", p, err)
		}
		t.Logf("provider %s: %v", p, err)
	}
	t.Setenv(EnvLib, filepath.Join(t.TempDir(), "libonnxruntime.so.1"))
	_, _, err = nets.OpenBackendSpec("ort:model="+model("resnet"), net, nets.BackendOptions{})
	if !errors.Is(err, nets.ErrBackendUnavailable) || !strings.Contains(err.Error(), EnvLib) || !strings.Contains(err.Error(), "make ort") {
		t.Errorf("without a library: %v", err)
	}
	t.Logf("without a library: %v", err)
}

// TestNoLeaks opens, uses and closes backends repeatedly: the process's
// threads (ONNX Runtime's pools) and open files come back to where they
// were.
func TestNoLeaks(t *testing.T) {
	needLib(t)
	count := func(dir string) int {
		e, err := os.ReadDir(dir)
		if err != nil {
			t.Skipf("skipping: %v", err)
		}
		return len(e)
	}
	warm := open(t, "resnet", nil, Options{Threads: 1}) // the library's own start-up threads, once
	warm.Close()
	threads, fds := count("/proc/self/task"), count("/proc/self/fd")
	r := readRecord(t, "resnet")
	for range 5 {
		b, err := Open(nil, Options{Model: model("resnet"), Threads: 3})
		if err != nil {
			t.Fatal(err)
		}
		pol, val := make([]float32, 7*20), make([]float32, 7)
		if err := b.Evaluate(context.Background(), 7, r.Input, pol, val); err != nil {
			t.Fatal(err)
		}
		if n := count("/proc/self/task"); n < threads+2 {
			t.Errorf("open backend with 3 intra-op threads: %d OS threads, before %d", n, threads)
		}
		b.Close()
	}
	// Go's runtime may start an OS thread of its own meanwhile (for the GC
	// or a blocking syscall) and never ends it: allow it one or two. A
	// backend left open holds two more per round, ten after five.
	if n := count("/proc/self/task"); n > threads+2 {
		t.Errorf("%d OS threads after Close, %d before", n, threads)
	}
	if n := count("/proc/self/fd"); n > fds {
		t.Errorf("%d open files after Close, %d before", n, fds)
	}
}

func TestCandidates(t *testing.T) {
	env := searchEnv{
		getenv: func(k string) string { return map[string]string{"ORT_HOME": "/opt/ort", "HOME": "/home/u"}[k] },
		getwd:  func() (string, error) { return "/r/a", nil },
		exists: func(string) bool { return false },
	}
	got := strings.Join(candidates(env), " ")
	for _, w := range []string{"/r/a/.cache/ort/libonnxruntime.so.1 ", "/r/.cache/ort/libonnxruntime.so.1 ", "/.cache/ort/libonnxruntime.so.1 ",
		"/home/u/.cache/canopy/ort/libonnxruntime.so.1 ", " libonnxruntime.so.1 ", "/opt/ort/lib/libonnxruntime.so.1", "/usr/local/lib/libonnxruntime.so.1"} {
		if !strings.Contains(got, w) {
			t.Errorf("candidates %q lack %q", got, w)
		}
	}
	if strings.Index(got, "/r/a/.cache") > strings.Index(got, " libonnxruntime.so.1 ") {
		t.Errorf("the repository cache comes after the loader's search: %s", got)
	}
	env.getenv = func(k string) string { return map[string]string{EnvLib: "/x/libonnxruntime.so.1.30.0"}[k] }
	if got := candidates(env); len(got) != 1 || got[0] != "/x/libonnxruntime.so.1.30.0" {
		t.Errorf("with %s set: %q", EnvLib, got)
	}
	env.open = func(string) (uintptr, error) { return 0, errors.New("nope") }
	_, err := load(env)
	if !errors.Is(err, ErrNoLibrary) || !strings.Contains(err.Error(), "make ort") {
		t.Errorf("load: %v", err)
	}
}

// TestConcurrentEvaluate calls one backend from several goroutines (run
// it with -race): every call gets the rows batch 1 gives.
func TestConcurrentEvaluate(t *testing.T) {
	needLib(t)
	r := readRecord(t, "resnet")
	b := open(t, "resnet", nil, Options{})
	in, p := b.Shape()
	rows := len(r.Input) / in
	wantP, wantV := make([]float32, rows*p), make([]float32, rows)
	for i := range rows {
		if err := b.Evaluate(context.Background(), 1, r.Input[i*in:], wantP[i*p:], wantV[i:]); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			pol, val := make([]float32, rows*p), make([]float32, rows)
			for k := range 20 {
				batch := 1 + (g+k)%rows
				if err := b.Evaluate(context.Background(), batch, r.Input, pol, val); err != nil {
					errs <- err
					return
				}
				for i := range batch * p {
					if math.Abs(float64(pol[i]-wantP[i])) > 1e-5 {
						errs <- fmt.Errorf("goroutine %d batch %d: logit %d = %v, want %v", g, batch, i, pol[i], wantP[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestTRTProfile(t *testing.T) {
	in := []Tensor{{Name: "input", Shape: []int64{-1, 2, 6, 7}}}
	got := trtProfile(in, 256)
	want := map[string]string{"trt_profile_min_shapes": "input:1x2x6x7", "trt_profile_max_shapes": "input:256x2x6x7",
		"trt_profile_opt_shapes": "input:32x2x6x7"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("profile %v, want %v", got, want)
	}
	if got := trtProfile(in, 8); got["trt_profile_opt_shapes"] != "input:8x2x6x7" {
		t.Errorf("max batch 8: %v", got)
	}
	for _, bad := range [][]Tensor{
		{{Name: "a:b", Shape: []int64{-1, 3}}},
		{{Name: "in", Shape: []int64{1, 3}}},
		{{Name: "in", Shape: []int64{-1, -1}}},
		{{Name: "a", Shape: []int64{-1, 3}}, {Name: "b", Shape: []int64{-1, 3}}},
	} {
		if got := trtProfile(bad, 8); got != nil {
			t.Errorf("%v: profile %v, want none", bad, got)
		}
	}
}
