package onnx

import (
	"fmt"

	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/nets/onnx/onnxpb"
)

// Names of the recurrent graph's state inputs and outputs (besides
// InputName, PolicyName and ValueName).
const (
	HiddenIn  = "h_in"  // [batch, Hidden] LSTM hidden state before the move
	CellIn    = "c_in"  // [batch, Hidden] LSTM cell state before the move
	HiddenOut = "h_out" // [batch, Hidden] after the move
	CellOut   = "c_out" // [batch, Hidden] after the move
)

// MetaRecurrentConfig holds a recurrent net's nets.RecurrentConfig as JSON.
const MetaRecurrentConfig = "canopy.recurrent"

const recurrentValueConvention = "linear (not squashed), the critic's estimate of the return for the player to move"

// ExportRecurrent writes study 000's CNN-LSTM as one step of the network
// (nets.Recurrent.Step) at opset 17 with a dynamic batch: inputs "obs"
// [batch, N] (the game's flat feature encoding: board planes then flat
// features), "h_in" and "c_in" [batch, Hidden] (zeros at the start of a
// game), outputs "policy" [batch, Cards*Squares] (logits card[c] +
// square[s] at index c*Squares+s), "value" [batch, 1] (linear) and the
// state after the move, "h_out" and "c_out". The LSTM cell is spelled out
// in elementary operators (Gemm, Split, Sigmoid, Tanh, Mul, Add) with
// PyTorch's gate order, so any ONNX runtime runs it.
func ExportRecurrent(r *nets.Recurrent, opts ExportOptions) ([]byte, error) {
	c := r.Config()
	b := newBuilder(r.Params(), "canopy_recurrent")
	meta := map[string]string{MetaRecurrentConfig: c.JSON(), MetaGame: c.Game, MetaEncoding: "features",
		MetaValue: recurrentValueConvention, MetaPolicy: policyConvention}
	if opts.Game != nil {
		if err := (nets.Encoding{Features: true}).Check(opts.Game); err != nil {
			return nil, err
		}
		if n := (nets.Encoding{Features: true}).Size(opts.Game); n != r.InputSize() || opts.Game.NumActions() != r.PolicySize() {
			return nil, fmt.Errorf("onnx: the recurrent net takes %d features and %d actions; game %s has %d and %d",
				r.InputSize(), r.PolicySize(), opts.Game.Spec(), n, opts.Game.NumActions())
		}
		meta[MetaGame] = opts.Game.Spec()
	}
	H := int64(c.Hidden)
	b.g.Input = []*onnxpb.ValueInfoProto{tensorInfo(InputName, r.InputSize()), tensorInfo(HiddenIn, c.Hidden), tensorInfo(CellIn, c.Hidden)}
	b.g.Output = []*onnxpb.ValueInfoProto{tensorInfo(PolicyName, r.PolicySize()), tensorInfo(ValueName, 1),
		tensorInfo(HiddenOut, c.Hidden), tensorInfo(CellOut, c.Hidden)}
	nb := int64(c.Planes * c.Height * c.Width)
	axis1 := b.int64s("const.axis1", 1)
	board := b.node("Slice", "board.slice", []string{InputName, b.int64s("const.board_start", 0), b.int64s("const.board_end", nb), axis1}, "board.flat")
	x := b.node("Reshape", "board.reshape", []string{board, b.int64s("const.board_shape", -1, int64(c.Planes), int64(c.Height), int64(c.Width))}, "board")
	for i := range c.ConvChannels {
		p := fmt.Sprintf("convs.%d", i)
		x = b.relu(p+".relu", b.conv(p, x, 3, true))
	}
	zb := b.relu("board_fc.relu", b.dense("board_fc", x, true, ""))
	flat := b.node("Slice", "flat.slice", []string{InputName, b.int64s("const.flat_start", nb), b.int64s("const.flat_end", nb+int64(c.Flat)), axis1}, "flat")
	zf := b.relu("flat_fc.relu", b.dense("flat_fc", flat, false, ""))
	z := b.node("Concat", "lstm.input", []string{zb, zf}, "lstm.z", intAttr("axis", 1))
	// gates = z Wih^T + bih + h Whh^T + bhh, quarters i, f, g, o.
	gx := b.node("Gemm", "lstm.ih", []string{z, b.param("lstm.weight_ih"), b.param("lstm.bias_ih")}, "lstm.gates_ih", intAttr("transB", 1))
	gh := b.node("Gemm", "lstm.hh", []string{HiddenIn, b.param("lstm.weight_hh"), b.param("lstm.bias_hh")}, "lstm.gates_hh", intAttr("transB", 1))
	gates := b.node("Add", "lstm.gates", []string{gx, gh}, "lstm.gates")
	b.g.Node = append(b.g.Node, &onnxpb.NodeProto{OpType: strp("Split"), Name: strp("lstm.split"),
		Input:  []string{gates, b.int64s("const.split", H, H, H, H)},
		Output: []string{"lstm.i_pre", "lstm.f_pre", "lstm.g_pre", "lstm.o_pre"}, Attribute: []*onnxpb.AttributeProto{intAttr("axis", 1)}})
	i := b.node("Sigmoid", "lstm.i", []string{"lstm.i_pre"}, "lstm.i")
	f := b.node("Sigmoid", "lstm.f", []string{"lstm.f_pre"}, "lstm.f")
	g := b.node("Tanh", "lstm.g", []string{"lstm.g_pre"}, "lstm.g")
	o := b.node("Sigmoid", "lstm.o", []string{"lstm.o_pre"}, "lstm.o")
	fc := b.node("Mul", "lstm.fc", []string{f, CellIn}, "lstm.fc")
	ig := b.node("Mul", "lstm.ig", []string{i, g}, "lstm.ig")
	b.node("Add", "lstm.c", []string{fc, ig}, CellOut)
	tc := b.node("Tanh", "lstm.tanh_c", []string{CellOut}, "lstm.tanh_c")
	b.node("Mul", "lstm.h", []string{o, tc}, HiddenOut)
	card := b.dense("card_head", HiddenOut, false, "")
	square := b.dense("square_head", HiddenOut, false, "")
	card3 := b.node("Unsqueeze", "policy.card", []string{card, b.int64s("const.axis2", 2)}, "policy.card3")
	sq3 := b.node("Unsqueeze", "policy.square", []string{square, axis1}, "policy.square3")
	sum := b.node("Add", "policy.sum", []string{card3, sq3}, "policy.grid")
	b.node("Flatten", "policy.flatten", []string{sum}, PolicyName, intAttr("axis", 1))
	b.dense("critic", HiddenOut, false, ValueName)
	if b.err != nil {
		return nil, b.err
	}
	return b.model("Canopy recurrent CNN-LSTM (study 000), one step; see the canopy.* metadata", opts, meta)
}

func strp(s string) *string { return &s }
