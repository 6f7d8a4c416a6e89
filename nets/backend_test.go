package nets

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/kernels"
)

// errNoFakeDevice is the reason the fake accelerator gives.
var errNoFakeDevice = errors.New("no fake device on this machine")

func init() {
	// An accelerator that never opens, above cpu: "auto" must pass over it
	// and say why.
	RegisterBackendInfo(BackendInfo{
		Name: "fakegpu", Priority: 5, Summary: "test accelerator that is never available",
		Options: []BackendOption{
			{Key: "precision", Values: []string{"fp32", "fp16"}, Default: "fp32"},
			{Key: "device", Min: 0, Max: 3, Default: "0"},
			{Key: "file", Text: true, Default: "none"},
		},
		Open: func(*Net, BackendOptions) (Backend, error) { return nil, Unavailable(errNoFakeDevice) },
	})
}

func TestParseBackendSpec(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "auto"},
		{"auto", "auto"},
		{" cpu ", "cpu"},
		{"cpu:threads=2", "cpu:threads=2"},
		{"cpu:threads=02", "cpu:threads=2"},
		{"fakegpu:precision=FP16,device=3", "fakegpu:device=3,precision=fp16"},
		{"fakegpu:file=/a/B:c.onnx", "fakegpu:file=/a/B:c.onnx"}, // text kept as given, ':' and all
		{"random:seed=7", "random:seed=7"},
	} {
		bs, err := ParseBackendSpec(c.in)
		if err != nil || bs.String() != c.want {
			t.Errorf("ParseBackendSpec(%q) = %q, %v; want %q", c.in, bs, err, c.want)
		}
	}
}

func TestBackendSpecErrors(t *testing.T) {
	for _, c := range []struct {
		spec string
		is   error
		key  string   // for option errors
		want []string // in the message
	}{
		{"nope", ErrUnknownBackend, "", []string{`"nope"`, "auto", "cpu", "random", "fakegpu"}},
		{"nope:x=1", ErrUnknownBackend, "", []string{"available"}},
		{"cpu:threads=0", ErrBadBackendOption, "threads", []string{"threads", "1..64"}},
		{"cpu:threads=many", ErrBadBackendOption, "threads", []string{"threads", `"many"`, "1..64"}},
		{"cpu:thread=2", ErrBadBackendOption, "thread", []string{"thread", "unknown", "cpu takes threads"}},
		{"fakegpu:precision=fp8", ErrBadBackendOption, "precision", []string{"precision", "fp32|fp16"}},
		{"fakegpu:speed=1", ErrBadBackendOption, "speed", []string{"speed", "precision, device, file"}},
		{"fakegpu:file=", ErrBadBackendOption, "file", []string{"file", "empty"}},
		{"auto:threads=2", ErrBadBackendOption, "threads", []string{"auto takes no options"}},
		{"cpu:threads", ErrBadBackendOption, "", []string{"key=value"}},
		{"cpu:threads=1,threads=2", ErrBadBackendOption, "", []string{"twice"}},
		{":threads=1", ErrBadBackendOption, "", []string{"empty name"}},
	} {
		_, _, err := OpenBackendSpec(c.spec, tinyNet(t), BackendOptions{MaxBatch: 2})
		if !errors.Is(err, c.is) {
			t.Errorf("%q: error %v, want one matching %v", c.spec, err, c.is)
			continue
		}
		if _, perr := ParseBackendSpec(c.spec); !errors.Is(perr, c.is) {
			t.Errorf("%q: ParseBackendSpec error %v, want %v", c.spec, perr, c.is)
		}
		var oe *OptionError
		if c.is == ErrBadBackendOption && (!errors.As(err, &oe) || oe.Key != c.key) {
			t.Errorf("%q: error %#v, want an *OptionError for key %q", c.spec, err, c.key)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: message %q does not mention %q", c.spec, err, w)
			}
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: message spans lines: %q", c.spec, err)
		}
	}
}

func tinyNet(t *testing.T) *Net {
	t.Helper()
	net, err := New(tinyConfigs["alphazero"], 1)
	if err != nil {
		t.Fatal(err)
	}
	return net
}

func TestOpenBackendSpecAutoFallsBack(t *testing.T) {
	b, c, err := OpenBackendSpec("auto", tinyNet(t), BackendOptions{MaxBatch: 4})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name() != "cpu" || c.Backend != "cpu" || c.Requested.Name != "auto" {
		t.Fatalf("auto opened %s, choice %+v; want cpu", b.Name(), c)
	}
	if len(c.Skipped) != 1 || c.Skipped[0].Name != "fakegpu" || !errors.Is(c.Skipped[0].Err, ErrBackendUnavailable) {
		t.Fatalf("skipped %+v: want fakegpu, unavailable", c.Skipped)
	}
	if got, want := c.String(), "fakegpu unavailable: "+errNoFakeDevice.Error()+"; using cpu"; got != want {
		t.Errorf("choice %q, want %q", got, want)
	}
	// Named, the unavailable backend is an error that says so and wraps
	// the reason.
	_, _, err = OpenBackendSpec("fakegpu", tinyNet(t), BackendOptions{})
	if !errors.Is(err, ErrBackendUnavailable) || !errors.Is(err, errNoFakeDevice) || !strings.Contains(err.Error(), "fakegpu unavailable: no fake device") {
		t.Errorf("fakegpu: %v", err)
	}
	// A named backend says it was requested.
	_, c, err = OpenBackendSpec("random:seed=3", tinyNet(t), BackendOptions{})
	if err != nil || c.String() != "using random:seed=3 (requested)" {
		t.Errorf("random: %q, %v", c, err)
	}
	// Nothing opens without a net; the error joins every backend's reason.
	if _, _, err := OpenBackendSpec("auto", nil, BackendOptions{}); err == nil || !errors.Is(err, ErrBackendUnavailable) {
		t.Errorf("auto without a net: %v", err)
	}
}

// cpu:threads=N is the backend's own budget: two backends in one process
// keep their own (issue 39: it used to set the kernels' process-wide
// count), and the kernels' default is left alone.
func TestCPUThreadsOption(t *testing.T) {
	defer kernels.SetThreads(kernels.SetThreads(4))
	var bs []Backend
	for _, n := range []int{1, 3} {
		b, err := OpenBackend(fmt.Sprintf("cpu:threads=%d", n), tinyNet(t), BackendOptions{MaxBatch: 2})
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	plain, err := OpenBackend("cpu", tinyNet(t), BackendOptions{MaxBatch: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"on 1 thread(s)", "on 3 thread(s)"} {
		if d := bs[i].(Describer).Describe(); !strings.Contains(d, want) {
			t.Errorf("backend %d: %q, want it to say %q", i, d, want)
		}
	}
	if d := plain.(Describer).Describe(); !strings.Contains(d, "on 4 thread(s)") {
		t.Errorf("plain cpu backend: %q, want the default 4 threads", d)
	}
	if kernels.Threads() != 4 {
		t.Errorf("opening cpu:threads=N changed the kernels' default to %d", kernels.Threads())
	}
}

// The cpu backend's conv option: auto (the default) picks
// AutoConvAlgorithm's, which follows the kernels in use; a name picks
// that algorithm; anything else is refused.
func TestCPUConvOption(t *testing.T) {
	for _, c := range []struct {
		spec, kern string
		want       ConvAlgorithm
	}{
		{"cpu", "generic", ConvIm2col},
		{"cpu:conv=auto", "generic", ConvIm2col},
		{"cpu", "avx2", ConvWinograd},
		{"cpu", "avx512", ConvWinograd},
		{"cpu:conv=im2col", "avx2", ConvIm2col},
		{"cpu:conv=winograd", "generic", ConvWinograd},
	} {
		restore, err := kernels.Use(c.kern)
		if err != nil {
			t.Logf("%s: %v", c.spec, err) // no AVX2 or AVX-512 here
			continue
		}
		net := tinyNet(t)
		_, err = OpenBackend(c.spec, net, BackendOptions{MaxBatch: 2})
		restore()
		if err != nil {
			t.Fatal(c.spec, err)
		}
		if got := net.ConvAlgorithm(); got != c.want {
			t.Errorf("%s with the %s kernels: %v, want %v", c.spec, c.kern, got, c.want)
		}
	}
	if _, err := OpenBackend("cpu:conv=fft", tinyNet(t), BackendOptions{MaxBatch: 2}); err == nil || !strings.Contains(err.Error(), "conv") {
		t.Errorf("cpu:conv=fft: %v, want an error naming the option", err)
	}
}

// The cpu backend's precision option: fp32 by default, bf16 when asked
// (with either convolution algorithm), anything else refused with an
// error naming the option.
func TestCPUPrecisionOption(t *testing.T) {
	for _, c := range []struct {
		spec string
		want Precision
	}{{"cpu", FP32}, {"cpu:precision=fp32", FP32}, {"cpu:precision=bf16", BF16}, {"cpu:precision=bf16,conv=im2col", BF16},
		{"cpu:precision=bf16,conv=winograd", BF16}} {
		net := tinyNet(t)
		if _, err := OpenBackend(c.spec, net, BackendOptions{MaxBatch: 2}); err != nil {
			t.Fatal(c.spec, err)
		}
		if got := net.Precision(); got != c.want {
			t.Errorf("%s: precision %v, want %v", c.spec, got, c.want)
		}
	}
	for _, spec := range []string{"cpu:precision=fp16", "cpu:precision=int8"} {
		if _, err := OpenBackend(spec, tinyNet(t), BackendOptions{MaxBatch: 2}); err == nil || !strings.Contains(err.Error(), "option") {
			t.Errorf("%s: %v, want an error naming the option", spec, err)
		}
	}
}

// The cpu backend says how it computes: kernels, threads, algorithm and
// number format, in the Choice's Detail (not in its one-line String).
func TestCPUDescribe(t *testing.T) {
	for spec, want := range map[string][]string{
		"cpu:threads=1,conv=im2col":        {kernels.Current() + " kernels", "1 thread", "by im2col", "float32"},
		"cpu:precision=bf16,conv=winograd": {"by winograd", "bfloat16 on the " + kernels.BF16Kernels() + " kernels"},
	} {
		_, c, err := OpenBackendSpec(spec, tinyNet(t), BackendOptions{MaxBatch: 2})
		if err != nil {
			t.Fatal(spec, err)
		}
		for _, w := range want {
			if !strings.Contains(c.Detail, w) {
				t.Errorf("%s: detail %q lacks %q", spec, c.Detail, w)
			}
		}
		if strings.Contains(c.String(), c.Detail) {
			t.Errorf("%s: String %q holds the detail", spec, c.String())
		}
	}
}

// BF16 inference follows the float32 one closely on a random network,
// is exactly the float32 network's output on the same net after
// SetPrecision(FP32), and follows weight changes (the packed weights are
// refreshed when the folded ones change).
func TestForwardBF16(t *testing.T) {
	net := tinyNet(t)
	const batch = 5
	in := randInput(batch*net.InputSize(), 3)
	p32, v32 := make([]float32, batch*net.PolicySize()), make([]float32, batch)
	p16, v16 := make([]float32, batch*net.PolicySize()), make([]float32, batch)
	net.Forward(batch, in, p32, v32)
	net.SetPrecision(BF16)
	net.Forward(batch, in, p16, v16)
	var maxDiff, maxAbs float64
	for i := range p32 {
		maxDiff = max(maxDiff, math.Abs(float64(p32[i]-p16[i])))
		maxAbs = max(maxAbs, math.Abs(float64(p32[i])))
	}
	if maxDiff == 0 || maxDiff > 0.05*maxAbs {
		t.Errorf("BF16 logits differ from FP32 by up to %g (largest logit %g): want a small, nonzero difference", maxDiff, maxAbs)
	}
	net.SetPrecision(FP32)
	p, v := make([]float32, len(p32)), make([]float32, batch)
	net.Forward(batch, in, p, v)
	if !slices.Equal(p, p32) || !slices.Equal(v, v32) {
		t.Error("FP32 outputs changed after a BF16 pass")
	}
	// A weight change must reach the packed BF16 weights.
	net.SetPrecision(BF16)
	for _, prm := range net.Params() {
		for i := range prm.Data {
			prm.Data[i] *= 0.5
		}
	}
	net.Invalidate()
	net.Forward(batch, in, p, v)
	if slices.Equal(p, p16) {
		t.Error("BF16 outputs unchanged after the weights changed")
	}
}

func TestBackendInfos(t *testing.T) {
	infos := BackendInfos()
	if len(infos) < 3 || infos[0].Name != "fakegpu" || infos[len(infos)-1].Name != "random" {
		t.Errorf("order: %v", Backends())
	}
	cpu, ok := LookupBackend("cpu")
	if !ok || cpu.Summary == "" {
		t.Fatal("cpu not registered with a summary")
	}
	if o, ok := cpu.Option("threads"); !ok || o.Allowed() != "1..64" || !strings.Contains(o.Help, "own budget") {
		t.Errorf("cpu threads option %+v", o)
	}
	for _, name := range []string{"", "auto", "cpu", "a:b"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("registering %q did not panic", name)
				}
			}()
			RegisterBackendInfo(BackendInfo{Name: name, Priority: 1, Open: func(*Net, BackendOptions) (Backend, error) { return nil, nil }})
		}()
	}
}

func ExampleOpenBackendSpec() {
	net, _ := New(Config{InputPlanes: 1, Height: 2, Width: 2, PolicySize: 4, Channels: 4, Blocks: 1, ValueHidden: 4}, 1)
	b, choice, err := OpenBackendSpec("cpu:threads=1", net, BackendOptions{MaxBatch: 8})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Name(), b.MaxBatch())
	fmt.Println(choice)
	_, _, err = OpenBackendSpec("cpu:threads=0", net, BackendOptions{})
	fmt.Println(errors.Is(err, ErrBadBackendOption), err)
	// Output:
	// cpu 8
	// using cpu:threads=1 (requested)
	// true nets: backend cpu: option threads: "0" is not an integer in 1..64
}
