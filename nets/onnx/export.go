package onnx

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/nets/onnx/onnxpb"
)

// Names of the exported graph's input and outputs.
const (
	InputName  = "obs"    // [batch, C, H, W] float32 planar observations
	PolicyName = "policy" // [batch, A] raw logits
	ValueName  = "value"  // [batch, 1] tanh value for the player to move; [batch, P] per player (nets.Config.ValuePlayers)
	BatchDim   = "batch"  // the symbolic batch dimension
)

// Metadata keys of exported models (metadata_props).
const (
	MetaConfig   = "canopy.config"   // the nets.Config as JSON
	MetaGame     = "canopy.game"     // the game spec the net plays
	MetaEncoding = "canopy.encoding" // "observation" or "observation+legal-plane"
	MetaValue    = "canopy.value"    // the value convention, in words
	MetaPolicy   = "canopy.policy"   // the policy convention, in words
)

// ExportOpset is the opset of exported models, and exportIRVersion the
// IR version that goes with it.
const (
	ExportOpset     = 17
	exportIRVersion = 8
)

// Metadata values that state Canopy's conventions.
const (
	valueConvention = "tanh, in [-1, 1], for the player to move (whose observation is the input); other players get -v/(players-1)"
	// perPlayerValueConvention is a per-player value head's (nets.Config.ValuePlayers).
	perPlayerValueConvention = "tanh, in [-1, 1], one per player, seat-rotated: entry k is the value of player (p + k) mod players, p the player to move (whose observation is the input)"
	policyConvention         = "raw logits over the game's actions (action a at index a); priors are the softmax over the legal actions"
)

// ExportOptions describe the network being exported.
type ExportOptions struct {
	// Game, when set, names the input encoding in the metadata (with or
	// without the legal-move plane) and is checked against the net's
	// shape. Without it the metadata names the config's game only.
	Game games.Game
	// ProducerVersion goes into the model's producer_version.
	ProducerVersion string
}

// Export writes n as an ONNX model (opset 17, dynamic batch; see the
// package documentation for names and metadata). The result is
// deterministic: the same network gives the same bytes.
func Export(n *nets.Net, opts ExportOptions) ([]byte, error) {
	cfg := n.Config()
	b := newBuilder(n.Params(), "canopy_"+string(cfg.Head))
	meta := map[string]string{MetaConfig: cfg.JSON(), MetaGame: cfg.Game, MetaValue: valueConvention, MetaPolicy: policyConvention}
	if cfg.ValuePlayers > 1 {
		meta[MetaValue] = perPlayerValueConvention
	}
	if opts.Game != nil {
		enc, err := nets.EncodingFor(opts.Game, n.InputSize())
		if err != nil {
			return nil, err
		}
		if n.PolicySize() != opts.Game.NumActions() {
			return nil, fmt.Errorf("onnx: the net has %d policy outputs, game %s has %d actions", n.PolicySize(), opts.Game.Spec(), opts.Game.NumActions())
		}
		meta[MetaGame] = opts.Game.Spec()
		meta[MetaEncoding] = "observation"
		if enc.LegalPlane {
			meta[MetaEncoding] = "observation+legal-plane"
		}
	}
	b.g.Input = []*onnxpb.ValueInfoProto{tensorInfo(InputName, cfg.InputPlanes, cfg.Height, cfg.Width)}
	b.g.Output = []*onnxpb.ValueInfoProto{tensorInfo(PolicyName, cfg.PolicySize), tensorInfo(ValueName, cfg.ValueSize())}
	var err error
	switch cfg.Head {
	case nets.HeadAlphaZero:
		err = b.alphaZero(cfg)
	case nets.HeadPPO:
		err = b.ppo(cfg)
	default:
		err = fmt.Errorf("onnx: cannot export head %q", cfg.Head)
	}
	if err != nil {
		return nil, err
	}
	return b.model("Canopy "+string(cfg.Head)+" policy-value network; see the canopy.* metadata", opts, meta)
}

// builder appends nodes and initializers to a graph.
type builder struct {
	params map[string]*nets.Param
	g      *onnxpb.GraphProto
	err    error
}

func newBuilder(params []*nets.Param, name string) *builder {
	b := &builder{params: map[string]*nets.Param{}, g: &onnxpb.GraphProto{Name: proto.String(name)}}
	for _, p := range params {
		b.params[p.Name] = p
	}
	return b
}

// model wraps the graph into a model with meta (keys in metaKeys order)
// and marshals it deterministically.
func (b *builder) model(doc string, opts ExportOptions, meta map[string]string) ([]byte, error) {
	m := &onnxpb.ModelProto{
		IrVersion:       proto.Int64(exportIRVersion),
		OpsetImport:     []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(ExportOpset)}},
		ProducerName:    proto.String("canopy"),
		ProducerVersion: proto.String(opts.ProducerVersion),
		DocString:       proto.String(doc),
		Graph:           b.g,
	}
	for _, k := range []string{MetaConfig, MetaRecurrentConfig, MetaGame, MetaEncoding, MetaValue, MetaPolicy} {
		if v, ok := meta[k]; ok {
			m.MetadataProps = append(m.MetadataProps, &onnxpb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(v)})
		}
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// int64s adds a constant int64 vector (shapes, axes) as an initializer.
func (b *builder) int64s(name string, v ...int64) string {
	b.g.Initializer = append(b.g.Initializer, &onnxpb.TensorProto{Name: proto.String(name), Dims: []int64{int64(len(v))},
		DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Int64Data: v})
	return name
}

// tensorInfo is a float32 value [batch, dims...].
func tensorInfo(name string, dims ...int) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{
		{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: BatchDim}}}}
	for _, d := range dims {
		shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Shape: shape}}}}
}

// param adds the net's parameter name as an initializer (file layout,
// raw little-endian float32) and returns its name.
func (b *builder) param(name string) string {
	p, ok := b.params[name]
	if !ok {
		if b.err == nil {
			b.err = fmt.Errorf("onnx: the net has no parameter %q", name)
		}
		return name
	}
	vals := make([]float32, len(p.Data))
	p.ToFile(vals)
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		u := math.Float32bits(v)
		raw[4*i], raw[4*i+1], raw[4*i+2], raw[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	dims := make([]int64, len(p.Shape))
	for i, d := range p.Shape {
		dims[i] = int64(d)
	}
	b.g.Initializer = append(b.g.Initializer, &onnxpb.TensorProto{Name: proto.String(name), Dims: dims,
		DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), RawData: raw})
	return name
}

func (b *builder) node(op, name string, inputs []string, out string, attrs ...*onnxpb.AttributeProto) string {
	b.g.Node = append(b.g.Node, &onnxpb.NodeProto{OpType: proto.String(op), Name: proto.String(name),
		Input: inputs, Output: []string{out}, Attribute: attrs})
	return out
}

func intsAttr(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

func intAttr(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func floatAttr(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

// conv adds a convolution (k = 3 with padding 1, or 1) of the parameters
// prefix.weight (and prefix.bias when withBias) and returns its output.
func (b *builder) conv(prefix, in string, k int, withBias bool) string {
	ins := []string{in, b.param(prefix + ".weight")}
	if withBias {
		ins = append(ins, b.param(prefix+".bias"))
	}
	pad := int64(k / 2)
	return b.node("Conv", prefix, ins, prefix+".out",
		intsAttr("kernel_shape", int64(k), int64(k)), intsAttr("pads", pad, pad, pad, pad),
		intsAttr("strides", 1, 1), intsAttr("dilations", 1, 1), intAttr("group", 1))
}

// bn adds a BatchNormalization with the running statistics of prefix
// (PyTorch's epsilon, the one Canopy folds with).
func (b *builder) bn(prefix, in string) string {
	return b.node("BatchNormalization", prefix, []string{in, b.param(prefix + ".weight"), b.param(prefix + ".bias"),
		b.param(prefix + ".running_mean"), b.param(prefix + ".running_var")}, prefix+".out",
		floatAttr("epsilon", 1e-5), floatAttr("momentum", 0.9))
}

func (b *builder) relu(name, in string) string {
	return b.node("Relu", name, []string{in}, name+".out")
}

// dense adds Flatten (when flatten) and Gemm with prefix.weight [out][in]
// (transB) and prefix.bias; out names its output ("" for a default).
func (b *builder) dense(prefix, in string, flatten bool, out string) string {
	if flatten {
		in = b.node("Flatten", prefix+".flatten", []string{in}, prefix+".flat", intAttr("axis", 1))
	}
	if out == "" {
		out = prefix + ".out"
	}
	return b.node("Gemm", prefix, []string{in, b.param(prefix + ".weight"), b.param(prefix + ".bias")}, out,
		floatAttr("alpha", 1), floatAttr("beta", 1), intAttr("transB", 1))
}

func (b *builder) alphaZero(c nets.Config) error {
	x := b.relu("stem.relu", b.bn("stem.bn", b.conv("stem.conv", InputName, 3, false)))
	for i := 0; i < c.Blocks; i++ {
		p := fmt.Sprintf("blocks.%d.", i)
		t := b.relu(p+"relu1", b.bn(p+"bn1", b.conv(p+"conv1", x, 3, false)))
		t = b.bn(p+"bn2", b.conv(p+"conv2", t, 3, false))
		t = b.node("Add", p+"add", []string{t, x}, p+"add.out")
		x = b.relu(p+"relu2", t)
	}
	pp := b.relu("policy.relu", b.bn("policy.bn", b.conv("policy.conv", x, 1, false)))
	b.dense("policy.fc", pp, true, PolicyName)
	v := b.relu("value.relu", b.bn("value.bn", b.conv("value.conv", x, 1, false)))
	v = b.relu("value.relu1", b.dense("value.fc1", v, true, ""))
	b.node("Tanh", "value.tanh", []string{b.dense("value.fc2", v, false, "")}, ValueName)
	return b.err
}

func (b *builder) ppo(c nets.Config) error {
	x := InputName
	for i := range c.ConvChannels {
		p := fmt.Sprintf("convs.%d", i)
		x = b.relu(p+".relu", b.conv(p, x, 3, true))
	}
	x = b.relu("fc.relu", b.dense("fc", x, true, ""))
	b.dense("actor", x, false, PolicyName)
	b.node("Tanh", "critic.tanh", []string{b.dense("critic", x, false, "")}, ValueName)
	return b.err
}
