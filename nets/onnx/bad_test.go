package onnx

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/nets/onnx/onnxpb"
)

// smallModel is a small exported connect4 network, its bytes and the net.
func smallModel(t testing.TB) ([]byte, *nets.Net) {
	t.Helper()
	c, err := (nets.Config{Head: nets.HeadAlphaZero, Channels: 4, Blocks: 1, ValueHidden: 4}).ForGame(games.MustNew("connect4"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := nets.New(c, 3)
	if err != nil {
		t.Fatal(err)
	}
	buf, err := Export(n, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return buf, n
}

func parse(t *testing.T, buf []byte) *onnxpb.ModelProto {
	t.Helper()
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(buf, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

func marshal(t *testing.T, m *onnxpb.ModelProto) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// load decodes and imports for connect4, as the command does.
func load(buf []byte, dir string) (*nets.Net, error) {
	m, err := Decode(buf, dir)
	if err != nil {
		return nil, err
	}
	return Import(m, games.MustNew("connect4"), ImportOptions{})
}

// sameNet reports whether a and b give bit-identical outputs.
func sameNet(a, b *nets.Net) bool {
	x := testInput(a, 2, 9)
	p1, v1 := forward(a, 2, x)
	p2, v2 := forward(b, 2, x)
	for i := range p1 {
		if math.Float32bits(p1[i]) != math.Float32bits(p2[i]) {
			return false
		}
	}
	for i := range v1 {
		if math.Float32bits(v1[i]) != math.Float32bits(v2[i]) {
			return false
		}
	}
	return true
}

// TestTruncated: every prefix of a model either fails with an error or
// (cut inside the trailing metadata) imports the same network.
func TestTruncated(t *testing.T) {
	buf, n := smallModel(t)
	errs := 0
	for cut := 0; cut < len(buf); cut++ {
		got, err := load(buf[:cut], "")
		if err != nil {
			errs++
			continue
		}
		if !sameNet(got, n) {
			t.Fatalf("a model cut at %d of %d bytes imports as a different network", cut, len(buf))
		}
	}
	if errs < len(buf)*9/10 {
		t.Fatalf("only %d of %d truncations were refused", errs, len(buf))
	}
}

// TestBitFlips: single-bit corruptions never panic; those the format
// cannot detect (inside weight data) import as a finite network.
func TestBitFlips(t *testing.T) {
	buf, _ := smallModel(t)
	rng := games.NewRand(5)
	b := make([]byte, len(buf))
	refused := 0
	for i := 0; i < 3000; i++ {
		copy(b, buf)
		pos := rng.IntN(len(b))
		b[pos] ^= 1 << rng.IntN(8)
		got, err := load(b, "")
		if err != nil {
			refused++
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("flip at %d: a multi-line error %q", pos, err)
			}
			continue
		}
		x := testInput(got, 1, 1)
		p, v := forward(got, 1, x)
		for _, f := range append(p, v...) {
			if math.IsNaN(float64(f)) {
				t.Fatalf("flip at %d: imported a network that computes NaN", pos)
			}
		}
	}
	t.Logf("%d of 3000 single-bit flips refused (the rest hit weight bytes)", refused)
}

func TestExternalData(t *testing.T) {
	buf, n := smallModel(t)
	dir := t.TempDir()
	// Move stem.conv.weight into a file next to the model.
	external := func(loc string) []byte {
		m := parse(t, buf)
		for _, init := range m.Graph.Initializer {
			if init.GetName() == "stem.conv.weight" {
				if err := os.WriteFile(filepath.Join(dir, "w.bin"), append([]byte("pad!"), init.RawData...), 0o644); err != nil {
					t.Fatal(err)
				}
				init.RawData = nil
				init.DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
				init.ExternalData = []*onnxpb.StringStringEntryProto{
					{Key: proto.String("location"), Value: proto.String(loc)},
					{Key: proto.String("offset"), Value: proto.String("4")}}
			}
		}
		return marshal(t, m)
	}
	got, err := load(external("w.bin"), dir)
	if err != nil {
		t.Fatalf("external data inside the folder: %v", err)
	}
	if !sameNet(got, n) {
		t.Fatal("external data read wrongly")
	}
	if _, err := load(external("w.bin"), ""); err == nil {
		t.Error("external data accepted without a folder")
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "w.bin"), make([]byte, 1<<12), 0o644)
	if err := os.Symlink(filepath.Join(outside, "w.bin"), filepath.Join(dir, "link.bin")); err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"../w.bin", "sub/../../w.bin", filepath.Join(outside, "w.bin"), "/etc/passwd", "link.bin", "", "missing.bin"} {
		_, err := load(external(loc), dir)
		if err == nil {
			t.Errorf("external data location %q accepted", loc)
			continue
		}
		t.Logf("%q: %v", loc, err)
	}
	// A length that disagrees with the shape, an offset past the end.
	m := parse(t, external("w.bin"))
	m.Graph.Initializer[0].ExternalData = append(m.Graph.Initializer[0].ExternalData, &onnxpb.StringStringEntryProto{Key: proto.String("length"), Value: proto.String("12")})
	if _, err := load(marshal(t, m), dir); err == nil || !strings.Contains(err.Error(), "length") {
		t.Errorf("wrong length: %v", err)
	}
}

func TestAbsurdAndBadTensors(t *testing.T) {
	buf, _ := smallModel(t)
	for _, c := range []struct {
		name string
		edit func(m *onnxpb.ModelProto)
		want string
	}{
		{"huge dims", func(m *onnxpb.ModelProto) { m.Graph.Initializer[0].Dims = []int64{1 << 40, 1 << 40} }, "more than"},
		{"huge product", func(m *onnxpb.ModelProto) { m.Graph.Initializer[0].Dims = []int64{1 << 15, 1 << 15, 1 << 15} }, "more than"},
		{"negative dim", func(m *onnxpb.ModelProto) { m.Graph.Initializer[0].Dims = []int64{-4} }, "shape"},
		{"short data", func(m *onnxpb.ModelProto) { m.Graph.Initializer[0].RawData = m.Graph.Initializer[0].RawData[:8] }, "bytes of data"},
		{"NaN weight", func(m *onnxpb.ModelProto) {
			r := m.Graph.Initializer[0].RawData
			r[4], r[5], r[6], r[7] = 0, 0, 0xc0, 0x7f
		}, "NaN"},
		{"Inf weight", func(m *onnxpb.ModelProto) {
			r := m.Graph.Initializer[1].RawData
			r[0], r[1], r[2], r[3] = 0, 0, 0x80, 0x7f
		}, "+Inf"},
		{"float64 weights", func(m *onnxpb.ModelProto) { m.Graph.Initializer[0].DataType = proto.Int32(11) }, "DOUBLE"},
		{"opset 9", func(m *onnxpb.ModelProto) { m.OpsetImport[0].Version = proto.Int64(9) }, "opset 9"},
		{"opset 22", func(m *onnxpb.ModelProto) { m.OpsetImport[0].Version = proto.Int64(22) }, "opset 22"},
		{"no graph", func(m *onnxpb.ModelProto) { m.Graph = nil }, "no graph"},
		{"huge input", func(m *onnxpb.ModelProto) {
			m.Graph.Input[0].Type.GetTensorType().Shape.Dim[2].Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 1 << 40}
		}, "dimension"},
		{"dangling input", func(m *onnxpb.ModelProto) { m.Graph.Node[3].Input[0] = "nowhere" }, "nowhere"},
		{"duplicate output", func(m *onnxpb.ModelProto) { m.Graph.Node[3].Output[0] = m.Graph.Node[0].Output[0] }, "already produced"},
		{"cycle", func(m *onnxpb.ModelProto) {
			// node 0 (stem conv) reads the output of node 2 (stem relu).
			m.Graph.Node[0].Input[0] = m.Graph.Node[2].Output[0]
		}, "cycle"},
		{"foreign domain", func(m *onnxpb.ModelProto) { m.Graph.Node[1].Domain = proto.String("com.microsoft") }, "domain"},
		{"negative variance", func(m *onnxpb.ModelProto) {
			for _, in := range m.Graph.Initializer {
				if in.GetName() == "stem.bn.running_var" {
					in.RawData[3] |= 0x80
				}
			}
		}, "variance"},
		{"stride 2", func(m *onnxpb.ModelProto) { m.Graph.Node[0].Attribute[2].Ints = []int64{2, 2} }, "stride"},
		{"unknown op", func(m *onnxpb.ModelProto) { m.Graph.Node[2].OpType = proto.String("Sigmoid") }, `node #2 "stem.relu" (Sigmoid)`},
		{"two inputs", func(m *onnxpb.ModelProto) {
			m.Graph.Input = append(m.Graph.Input, proto.Clone(m.Graph.Input[0]).(*onnxpb.ValueInfoProto))
			m.Graph.Input[1].Name = proto.String("extra")
		}, "2 inputs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := parse(t, buf)
			c.edit(m)
			_, err := load(marshal(t, m), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
			t.Log(err)
		})
	}
}

// TestValuePerPlayerRefused: in a two-player game a [batch, players]
// value is not taken for the value by its shape (it could be a
// policy); the error names it as a value per player.
func TestValuePerPlayerRefused(t *testing.T) {
	buf, _ := smallModel(t)
	m := parse(t, buf)
	for _, in := range m.Graph.Initializer {
		switch in.GetName() {
		case "value.fc2.weight":
			in.Dims[0] = 2
			in.RawData = append(in.RawData, in.RawData...)
		case "value.fc2.bias":
			in.Dims[0] = 2
			in.RawData = append(in.RawData, in.RawData...)
		}
	}
	_, err := load(marshal(t, m), "")
	if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "per player") {
		t.Fatalf("got %v", err)
	}
	t.Log(err)
}

// FuzzDecode: the reader and the importer never panic, whatever the bytes.
func FuzzDecode(f *testing.F) {
	buf, _ := smallModel(f)
	f.Add(buf)
	files, _ := filepath.Glob("testdata/torch/*.onnx")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	g := games.MustNew("connect4")
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b, "")
		if err != nil {
			return
		}
		Import(m, g, ImportOptions{})
		gr, err := CompileGraph(m, g, ImportOptions{}, 2)
		if err != nil {
			return
		}
		in, pn := gr.Shape()
		gr.Evaluate(context.Background(), 2, make([]float32, 2*in), make([]float32, 2*pn), make([]float32, 2))
	})
}

// TestDropoutTrainingMode: an inference Dropout (training_mode false) is
// the identity; one in training mode is refused by both paths.
func TestDropoutTrainingMode(t *testing.T) {
	buf, n := smallModel(t)
	for _, training := range []byte{0, 1} {
		m := parse(t, buf)
		// Insert Dropout(policy.fc input) before the policy Gemm.
		var gi int
		for i, nd := range m.Graph.Node {
			if nd.GetName() == "policy.fc" {
				gi = i
			}
		}
		gemm := m.Graph.Node[gi]
		m.Graph.Initializer = append(m.Graph.Initializer, &onnxpb.TensorProto{Name: proto.String("train"),
			DataType: proto.Int32(int32(onnxpb.TensorProto_BOOL)), RawData: []byte{training}})
		drop := &onnxpb.NodeProto{OpType: proto.String("Dropout"), Name: proto.String("drop"),
			Input: []string{gemm.Input[0], "", "train"}, Output: []string{"dropped"}}
		gemm.Input[0] = "dropped"
		m.Graph.Node = append(m.Graph.Node[:gi], append([]*onnxpb.NodeProto{drop}, m.Graph.Node[gi:]...)...)
		got, err := load(marshal(t, m), "")
		mm, _ := Decode(marshal(t, m), "")
		_, gerr := CompileGraph(mm, games.MustNew("connect4"), ImportOptions{}, 2)
		if training == 0 {
			if err != nil || !sameNet(got, n) || gerr != nil {
				t.Fatalf("inference dropout: %v, %v", err, gerr)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "training mode") || gerr == nil {
			t.Fatalf("training dropout: %v, %v", err, gerr)
		}
	}
}
