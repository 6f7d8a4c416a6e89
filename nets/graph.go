package nets

// LayerKind is the operation of one inference layer.
type LayerKind uint8

const (
	Conv3x3 LayerKind = LayerKind(kindConv3) // 3x3 same convolution: im2col then GEMM
	Conv1x1 LayerKind = LayerKind(kindConv1) // 1x1 convolution: a GEMM over cells
	Dense   LayerKind = LayerKind(kindDense) // fully connected over the flattened NHWC input
)

// InferenceLayer is one unit of the inference graph:
// out = tanh?(relu?(in*W + B + res)) over per-sample NHWC buffers, with
// batch norm already folded into W and B.
type InferenceLayer struct {
	Name         string // parameter prefix, e.g. "blocks.0.conv1"
	Kind         LayerKind
	In, Out, Res int // buffer ids; Res is -1 when there is no residual
	Cin, Cout    int // input channels per cell, output channels
	Cells, K     int // GEMM rows per sample (1 for Dense) and inner dimension
	ReLU, Tanh   bool
	W, B         []float32 // folded weights [K][Cout] (kernels layout) and bias [Cout]; copies
}

// InferenceGraph is the network as evaluated by Forward: buffers, layers in
// order and the output buffers. Other backends (the CUDA one) build from
// it, so the topology and the batch-norm folding exist in one place.
type InferenceGraph struct {
	Buffers       [][2]int // per-sample (cells, channels) of each buffer; 0 is the input
	Layers        []InferenceLayer
	Policy, Value int // buffer ids of the policy logits and the value
}

// InferenceGraph returns n's inference graph with the current weights
// folded (a snapshot: later training does not change it).
func (n *Net) InferenceGraph() InferenceGraph {
	if n.folded != n.version {
		n.fold()
	}
	g := InferenceGraph{Policy: n.policy, Value: n.value}
	for _, b := range n.bufs {
		g.Buffers = append(g.Buffers, [2]int{b.cells, b.ch})
	}
	for _, u := range n.units {
		g.Layers = append(g.Layers, InferenceLayer{
			Name: u.w.Name[:len(u.w.Name)-len(".weight")], Kind: LayerKind(u.kind),
			In: u.in, Out: u.out, Res: u.res, Cin: u.cin, Cout: u.cout, Cells: u.cells, K: u.k,
			ReLU: u.relu, Tanh: u.tanh,
			W: append([]float32(nil), u.foldW...), B: append([]float32(nil), u.foldB...),
		})
	}
	return g
}
