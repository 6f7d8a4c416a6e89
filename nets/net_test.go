package nets

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/kernels"
	"github.com/canopy-go/canopy/nets/safetensors"
)

// Parameter and FLOP counts of the connect4 preset by hand:
// stem 3x3 2->64 (1152) + BN (128); 5 blocks x 2 x (3x3 64->64 (36864) + BN
// (128)); policy 1x1 64->2 (128) + BN (4) + FC 84->7 (588+7); value 1x1
// 64->1 (64) + BN (2) + FC 42->64 (2688+64) + FC 64->1 (64+1).
func TestConnect4PresetCounts(t *testing.T) {
	cfg, err := Preset("connect4")
	if err != nil {
		t.Fatal(err)
	}
	net, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := 1152 + 128 + 10*(36864+128) + 128 + 4 + 595 + 64 + 2 + 2752 + 65
	if got := net.NumParams(); got != want {
		t.Errorf("params %d, want %d", got, want)
	}
	// 2 FLOPs per multiply-add: 42 cells x (18x64 stem + 10 x 576x64
	// blocks + 64x2 + 64x1) + 84x7 + 42x64 + 64x1.
	wantF := int64(2 * (42*(18*64+10*576*64+64*2+64) + 84*7 + 42*64 + 64))
	if got := net.FLOPs(); got != wantF {
		t.Errorf("FLOPs %d, want %d", got, wantF)
	}
	for _, name := range Presets() {
		c, _ := Preset(name)
		if name == "megazero" {
			if err := c.Normalize(); err == nil {
				t.Error("megazero without a game normalised")
			}
			continue
		}
		if _, err := New(c, 1); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
}

// fakeGame is a tiny board game shape for ForGame, for players players
// (0: two).
type fakeGame struct {
	games.Game
	players int
}

func (f fakeGame) NumPlayers() int       { return max(f.players, 2) }
func (fakeGame) ObservationShape() []int { return []int{3, 2, 4, 5} }
func (fakeGame) NumActions() int         { return 20 }
func (fakeGame) Spec() string            { return "fake" }

func TestForGame(t *testing.T) {
	c, _ := Preset("megazero")
	c, err := c.ForGame(fakeGame{})
	if err != nil {
		t.Fatal(err)
	}
	if c.InputPlanes != 6 || c.Height != 4 || c.Width != 5 || c.PolicySize != 20 || c.Channels != 128 || c.Blocks != 6 || c.Game != "fake" {
		t.Errorf("ForGame: %+v", c)
	}
	if c.ValuePlayers != 0 {
		t.Errorf("two players: value_players %d, want 0 (the scalar head)", c.ValuePlayers)
	}
	// Three or more players: a per-player head unless the scalar one is
	// asked for (1); another count is an error.
	for _, tc := range []struct{ ask, want int }{{0, 3}, {1, 0}, {3, 3}, {4, -1}} {
		p, _ := Preset("megazero")
		p.ValuePlayers = tc.ask
		c, err := p.ForGame(fakeGame{players: 3})
		switch {
		case tc.want < 0 && err == nil:
			t.Errorf("value_players %d for 3 players: no error", tc.ask)
		case tc.want >= 0 && (err != nil || c.ValuePlayers != tc.want):
			t.Errorf("value_players %d for 3 players: %d, %v; want %d", tc.ask, c.ValuePlayers, err, tc.want)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, js := range []string{
		`{`, `{"head":"alphazero","input_planes":2}`, `{"head":"magic"}`, `{"head":"ppo","input_planes":2,"height":3,"width":3,"policy_size":4}`,
		`{"head":"alphazero","input_planes":2,"height":3,"width":3,"policy_size":4,"channels":4096,"blocks":256,"value_hidden":1}`,
		`{"head":"alphazero","input_planes":2,"height":3,"width":3,"policy_size":4,"channels":4,"blocks":1,"value_hidden":1,"typo":1}`,
	} {
		if _, err := ParseConfig(js); err == nil {
			t.Errorf("ParseConfig(%s): no error", js)
		}
	}
	if _, err := Preset("nope"); err == nil || !strings.Contains(err.Error(), "connect4") {
		t.Errorf("unknown preset: %v", err)
	}
}

func TestMaskedSoftmax(t *testing.T) {
	logits := []float32{0, float32(math.Log(2)), 5, -1}
	legal := games.NewMask(4)
	legal.Set(0)
	legal.Set(1)
	p := make([]float32, 4)
	if !MaskedSoftmax(logits, legal, p) {
		t.Fatal("false")
	}
	want := []float32{1.0 / 3, 2.0 / 3, 0, 0}
	for i := range want {
		if math.Abs(float64(p[i]-want[i])) > 1e-6 {
			t.Errorf("p = %v, want %v", p, want)
		}
	}
	if MaskedSoftmax(logits, games.NewMask(4), p) {
		t.Error("empty mask: true")
	}
}

func randInput(n int, seed uint64) []float32 {
	rng := games.NewRand(seed)
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// A batch evaluates like its samples one at a time, and the output stays in
// range; after warm-up Forward allocates nothing.
func TestForwardBatchConsistencyAndAllocs(t *testing.T) {
	for name, cfg := range tinyConfigs {
		net, _ := New(cfg, 3)
		const batch = 5
		vs := net.ValueSize()
		in := randInput(batch*net.InputSize(), 1)
		p, v := make([]float32, batch*net.PolicySize()), make([]float32, batch*vs)
		net.Forward(batch, in, p, v)
		p1, v1 := make([]float32, net.PolicySize()), make([]float32, vs)
		for i := 0; i < batch; i++ {
			net.Forward(1, in[i*net.InputSize():], p1, v1)
			closeTo(t, name+" single policy", p1, p[i*net.PolicySize():(i+1)*net.PolicySize()], 1e-5)
			closeTo(t, name+" single value", v1, v[i*vs:(i+1)*vs], 1e-5)
			for _, x := range v1 {
				if x < -1 || x > 1 {
					t.Errorf("value %v out of range", x)
				}
			}
		}
		if raceEnabled {
			continue // the race detector makes sync.Pool drop items
		}
		if a := testing.AllocsPerRun(10, func() { net.Forward(batch, in, p, v) }); a != 0 {
			t.Errorf("%s: Forward allocates %v times per call", name, a)
		}
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	for name, cfg := range tinyConfigs {
		net, _ := New(cfg, 5)
		// Train one step so batch-norm statistics are not at identity.
		tr := &Trainer{Net: net, Optimizer: &SGD{LR: 0.1}}
		if _, err := tr.Step(randomBatch(cfg, 4, 1)); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name+".safetensors")
		if err := net.Save(path); err != nil {
			t.Fatal(err)
		}
		back, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if back.Config().JSON() != net.Config().JSON() {
			t.Errorf("config %s, want %s", back.Config().JSON(), net.Config().JSON())
		}
		for i, p := range net.Params() {
			for j, v := range p.Data {
				if back.Params()[i].Data[j] != v {
					t.Fatalf("%s[%d] = %v, want %v", p.Name, j, back.Params()[i].Data[j], v)
				}
			}
		}
	}
}

// mutate rewrites a saved tiny net's file through the safetensors API.
func mutate(t *testing.T, edit func(f *safetensors.File)) []byte {
	net, _ := New(tinyConfigs["alphazero"], 1)
	buf, err := net.Encode()
	if err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Parse(buf)
	if err != nil {
		t.Fatal(err)
	}
	edit(f)
	out, err := safetensors.Encode(f.Tensors, f.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLoadErrors(t *testing.T) {
	setF32 := func(f *safetensors.File, name string, i int, v float32) {
		tt, _ := f.Get(name)
		tt.Data = append([]byte(nil), tt.Data...)
		binary.LittleEndian.PutUint32(tt.Data[4*i:], math.Float32bits(v))
	}
	cases := []struct {
		name string
		buf  []byte
		want []string
	}{
		{"nan", mutate(t, func(f *safetensors.File) { setF32(f, "blocks.0.conv2.weight", 3, float32(math.NaN())) }), []string{"blocks.0.conv2.weight", "NaN"}},
		{"inf", mutate(t, func(f *safetensors.File) { setF32(f, "value.fc2.bias", 0, float32(math.Inf(-1))) }), []string{"value.fc2.bias", "Inf"}},
		{"shape", mutate(t, func(f *safetensors.File) {
			tt, _ := f.Get("policy.fc.weight")
			tt.Shape = []int{tt.Shape[1], tt.Shape[0]}
		}), []string{"policy.fc.weight", "[18,4]", "[4,18]"}},
		{"missing", mutate(t, func(f *safetensors.File) { f.Tensors = f.Tensors[1:] }), []string{"missing"}},
		{"extra", mutate(t, func(f *safetensors.File) {
			f.Tensors = append(f.Tensors, safetensors.FromFloat32("zzz", []int{1}, []float32{1}))
		}), []string{`"zzz"`}},
		{"dtype", mutate(t, func(f *safetensors.File) {
			tt, _ := f.Get("stem.bn.bias")
			tt.DType = safetensors.I32
		}), []string{"stem.bn.bias", "I32"}},
		{"no config", mutate(t, func(f *safetensors.File) { delete(f.Metadata, ConfigKey) }), []string{"canopy.config"}},
		{"bad config", mutate(t, func(f *safetensors.File) { f.Metadata[ConfigKey] = `{"head":"x"}` }), []string{"head"}},
		{"truncated", func() []byte { b := mutate(t, func(*safetensors.File) {}); return b[:len(b)-10] }(), []string{"out of range"}},
	}
	for _, c := range cases {
		_, err := Decode(c.buf)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.name, err, w)
			}
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("missing file: no error")
	}
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("hello"), 0o644)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad file: %v", err)
	}
}

func TestBackend(t *testing.T) {
	net, _ := New(tinyConfigs["alphazero"], 1)
	b, err := OpenBackend("auto", net, BackendOptions{MaxBatch: 8})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name() != "cpu" || b.MaxBatch() != 8 || b.PreferredBatch() < 1 {
		t.Errorf("backend %s max %d preferred %d", b.Name(), b.MaxBatch(), b.PreferredBatch())
	}
	in, ps := b.Shape()
	if in != 18 || ps != 4 {
		t.Errorf("shape %d %d", in, ps)
	}
	ctx := context.Background()
	input := randInput(8*in, 2)
	if err := b.Evaluate(ctx, 9, make([]float32, 9*in), make([]float32, 9*ps), make([]float32, 9)); err == nil {
		t.Error("batch above MaxBatch: no error")
	}
	if err := b.Evaluate(ctx, 2, input, make([]float32, ps), make([]float32, 2)); err == nil {
		t.Error("short policy: no error")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.Evaluate(cctx, 1, input, make([]float32, ps), make([]float32, 1)); err == nil {
		t.Error("cancelled context: no error")
	}
	if _, err := OpenBackend("nope", net, BackendOptions{}); !errors.Is(err, ErrUnknownBackend) || !strings.Contains(err.Error(), "cpu") {
		t.Errorf("unknown backend: %v", err)
	}
	// Concurrent callers are serialised (run with -race).
	ref := net.Clone()
	wantP, wantV := make([]float32, 8*ps), make([]float32, 8)
	ref.Forward(8, input, wantP, wantV)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, v := make([]float32, 8*ps), make([]float32, 8)
			for i := 0; i < 5; i++ {
				if err := b.Evaluate(ctx, 8, input, p, v); err != nil {
					t.Error(err)
					return
				}
			}
			for i := range wantV {
				if v[i] != wantV[i] {
					t.Errorf("concurrent value %v, want %v", v[i], wantV[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Forward splits a batch over the kernel threads (each slice runs the
// whole network on its samples, concurrently): the outputs equal those of
// the whole batch on one thread exactly, under both convolution
// algorithms and for batches that do not divide evenly. Buffers of
// different sizes share scratch slots, so the slices' rows must not
// overlap whatever layer each slice is at.
func TestForwardSlicedMatchesWhole(t *testing.T) {
	defer kernels.SetThreads(kernels.SetThreads(0))
	for _, preset := range []string{"connect4", "sequence"} {
		cfg, err := Preset(preset)
		if err != nil {
			t.Fatal(err)
		}
		net, _ := New(cfg, 3)
		for _, alg := range []ConvAlgorithm{ConvIm2col, ConvWinograd} {
			net.SetConvAlgorithm(alg)
			for _, batch := range []int{2, 5, 16, 33} {
				in := randInput(batch*net.InputSize(), uint64(batch))
				var p [2][]float32
				var v [2][]float32
				for k, threads := range []int{1, 3} {
					kernels.SetThreads(threads)
					p[k], v[k] = make([]float32, batch*net.PolicySize()), make([]float32, batch)
					net.Forward(batch, in, p[k], v[k])
				}
				if !slices.Equal(p[0], p[1]) || !slices.Equal(v[0], v[1]) {
					t.Errorf("%s %v batch %d: 3 slices differ from one pass by %g (policy), %g (value)",
						preset, alg, batch, maxDiff(p[0], p[1]), maxDiff(v[0], v[1]))
				}
			}
		}
	}
}

// nchwToNHWC is the transpose it names, for plane and cell counts with
// and without a remainder of the four-cell steps.
func TestNCHWToNHWC(t *testing.T) {
	for _, sh := range [][3]int{{1, 1, 1}, {2, 3, 42}, {3, 107, 100}, {2, 5, 7}, {1, 4, 4}} {
		batch, planes, cells := sh[0], sh[1], sh[2]
		src := make([]float32, batch*planes*cells)
		for i := range src {
			src[i] = float32(i + 1)
		}
		dst := make([]float32, len(src))
		nchwToNHWC(batch, planes, cells, src, dst)
		for b := range batch {
			for c := range planes {
				for s := range cells {
					if got, want := dst[b*planes*cells+s*planes+c], src[b*planes*cells+c*cells+s]; got != want {
						t.Fatalf("%v: sample %d plane %d cell %d = %v, want %v", sh, b, c, s, got, want)
					}
				}
			}
		}
	}
}

// Forward slices a batch only when each slice gets forwardMinFLOPs of
// work: a flat network (a board of one cell, about 20 KFLOP an
// evaluation) runs a search's small batches in one pass; Connect Four's
// net splits them over the idle threads.
func TestForwardPartsByWork(t *testing.T) {
	defer kernels.SetThreads(kernels.SetThreads(2))
	flat, err := New(Config{Head: HeadAlphaZero, InputPlanes: 161, Height: 1, Width: 1, PolicySize: 11, Channels: 32, Blocks: 2, ValueHidden: 32}, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := Preset("connect4")
	c4, _ := New(cfg, 1)
	perSlice := int(forwardMinFLOPs/flat.FLOPs()) + 1 // samples of the flat net in one slice's work
	for _, tc := range []struct {
		net         *Net
		batch, want int
	}{
		{flat, 4, 1}, {flat, 64, 1}, {flat, 2 * perSlice, 2}, {c4, 2, 1}, {c4, 4, 2}, {c4, 256, 2},
	} {
		if got := tc.net.forwardParts(tc.batch); got != tc.want {
			t.Errorf("%d FLOPs an evaluation, batch %d: %d slices, want %d", tc.net.FLOPs(), tc.batch, got, tc.want)
		}
	}
}
