package onnx

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// ImportOptions pick the graph's outputs. Empty names choose by shape:
// the output with the game's action count is the policy, the one with one
// value per sample the value (in games of three or more players, failing
// that, the one with a value per player: a per-player value head,
// nets.Config.ValuePlayers, seat-rotated so that entry k is the value of
// player (mover + k) mod players).
type ImportOptions struct {
	PolicyOutput string
	ValueOutput  string
}

// ErrUnsupported is wrapped by Import's errors for graphs that are valid
// ONNX but not a network Canopy can run.
var ErrUnsupported = errors.New("not a network Canopy can import")

// Import maps m onto a Canopy network for game g (see the package
// documentation for what maps). The graph's input must be g's observation
// [batch, C, H, W], with or without the legal-move plane; the error names
// the difference otherwise. A graph that is not Canopy's ResNet or PPO
// CNN gives one error naming the first node that does not fit.
func Import(m *Model, g games.Game, opts ImportOptions) (*nets.Net, error) {
	in, err := checkInput(m, g)
	if err != nil {
		return nil, err
	}
	im := &importer{m: m, vals: map[string]*val{}, uses: map[string]int{}, outputs: map[string]bool{}, batch: in.Dims[0]}
	for _, n := range m.Nodes {
		if n.Op == "Shape" {
			continue // reads only the shape, which fusing does not change
		}
		for _, i := range n.Inputs {
			im.uses[i]++
		}
	}
	for _, o := range m.Outputs {
		im.outputs[o.Name] = true
	}
	im.vals[in.Name] = &val{layer: -1, c: int(in.Dims[1]), h: int(in.Dims[2]), w: int(in.Dims[3]), spatial: true, solo: true}
	for _, n := range m.Nodes {
		if err := im.node(n); err != nil {
			return nil, fmt.Errorf("%w: %v: %v", ErrUnsupported, n, err)
		}
	}
	pol, valOut, err := im.pickOutputs(g, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	net, err := im.build(g, pol, valOut)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return net, nil
}

// checkInput finds the graph's one input and checks it against g's
// observation shape.
func checkInput(m *Model, g games.Game) (ValueInfo, error) {
	if len(m.Inputs) != 1 {
		names := make([]string, len(m.Inputs))
		for i, in := range m.Inputs {
			names[i] = in.Name
		}
		return ValueInfo{}, fmt.Errorf("%w: the graph has %d inputs (%s); Canopy's networks take one, the observation", ErrUnsupported, len(m.Inputs), strings.Join(names, ", "))
	}
	in := m.Inputs[0]
	planes, h, w := obsDims(g)
	want := fmt.Sprintf("[batch,%d,%d,%d]", planes, h, w)
	if in.ElemType != 1 {
		return in, fmt.Errorf("%w: input %q has element type %d; Canopy feeds float32 (1)", ErrUnsupported, in.Name, in.ElemType)
	}
	if len(in.Dims) != 4 {
		return in, fmt.Errorf("%w: input %q has rank %d (%s); %s observations are %s", ErrUnsupported, in.Name, len(in.Dims), dimsString(in.Dims), g.Spec(), want)
	}
	var diffs []string
	if c := int(in.Dims[1]); c != planes && c != planes+1 {
		diffs = append(diffs, fmt.Sprintf("channels %d vs %d (or %d with the legal-move plane)", c, planes, planes+1))
	}
	if int(in.Dims[2]) != h {
		diffs = append(diffs, fmt.Sprintf("height %d vs %d", in.Dims[2], h))
	}
	if int(in.Dims[3]) != w {
		diffs = append(diffs, fmt.Sprintf("width %d vs %d", in.Dims[3], w))
	}
	if len(diffs) > 0 {
		return in, fmt.Errorf("input %q is %s; %s observations are %s: %s", in.Name, dimsString(in.Dims), g.Spec(), want, strings.Join(diffs, ", "))
	}
	if _, err := nets.EncodingFor(g, int(in.Dims[1])*h*w); err != nil {
		return in, err
	}
	return in, nil
}

// obsDims is g's observation as planes x height x width, the way
// nets.Config.ForGame reads it.
func obsDims(g games.Game) (planes, h, w int) {
	s := g.ObservationShape()
	planes, h, w = 1, 1, 1
	if len(s) == 1 {
		return s[0], 1, 1
	}
	h, w = s[len(s)-2], s[len(s)-1]
	for _, d := range s[:len(s)-2] {
		planes *= d
	}
	return planes, h, w
}

func dimsString(d []int64) string {
	parts := make([]string, len(d))
	for i, v := range d {
		parts[i] = fmt.Sprint(v)
		if v < 0 {
			parts[i] = "?"
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// layer is one Canopy unit being recognised: a convolution or dense layer
// and what fuses after it, in Canopy's order
// out = tanh?(relu?(bn?(W*in + b) + residual)).
type layer struct {
	node      *Node
	kind      nets.LayerKind
	in        int // producing layer, -1 for the graph input
	cin, cout int
	w         []float32 // file layout: [cout][cin][k][k] or [out][in]
	b         []float32 // nil: no bias
	bn        *batchNorm
	res       int // residual layer, -1 the input, noRes none
	relu      bool
	tanh      bool
	stage     stage
}

const noRes = -2

type stage uint8

const (
	stLinear stage = iota // W*in (+ b)
	stBN
	stRes
	stReLU
	stTanh
)

type batchNorm struct {
	gamma, beta, mean, variance []float32
	eps                         float32
}

// val is what a graph value is to the importer: a constant, or an
// activation (the output of layer, -1 the graph input) seen either as
// [C,H,W] maps or flattened; solo says every value on the way from the
// layer's output to this one is read once, so that an operator on it may
// fuse into the layer.
type val struct {
	konst   *Tensor
	layer   int
	stage   stage
	spatial bool
	c, h, w int // spatial shape, or c values per sample when flat
	rank1   bool
	softmax bool // a (log-)softmax of the layer's logits
	solo    bool
	// shape is set for a shape computed from an activation's (Shape,
	// Gather, Unsqueeze, Concat, Slice: PyTorch's x.view(x.size(0), -1)),
	// with batchSym for the batch dimension; scalar marks a rank-0 one.
	shape  []int64
	scalar bool
}

// batchSym stands for the symbolic batch size in computed shapes.
const batchSym = math.MinInt64

type importer struct {
	batch   int64 // the input's batch dimension, -1 when symbolic
	m       *Model
	layers  []*layer
	vals    map[string]*val
	uses    map[string]int
	outputs map[string]bool
}

func (im *importer) input(n *Node, i int) (*val, error) {
	if i >= len(n.Inputs) || n.Inputs[i] == "" {
		return nil, fmt.Errorf("input %d is missing", i)
	}
	name := n.Inputs[i]
	if t, ok := im.m.Consts[name]; ok {
		return &val{konst: t}, nil
	}
	v, ok := im.vals[name]
	if !ok {
		return nil, fmt.Errorf("input %q comes from a node the importer skipped", name)
	}
	return v, nil
}

func (im *importer) konst(n *Node, i int) (*Tensor, error) {
	v, err := im.input(n, i)
	if err != nil {
		return nil, err
	}
	if v.konst == nil {
		return nil, fmt.Errorf("input %d (%q) must be a constant (an initializer), not computed", i, n.Inputs[i])
	}
	return v.konst, nil
}

// fusable reports whether an operator reading the value called name (v)
// may fuse into that value's layer: the value is the layer's latest
// stage, read by that operator alone, and not a graph output.
func (im *importer) fusable(name string, v *val) bool {
	return v.layer >= 0 && v.shape == nil && v.solo && im.uses[name] == 1 && !im.outputs[name] &&
		im.layers[v.layer].stage == v.stage && !v.softmax
}

// buffer checks that v can be read as a finished activation.
func (im *importer) buffer(v *val) error {
	if v.konst != nil || v.shape != nil {
		return errors.New("a constant where an activation is expected")
	}
	if v.softmax {
		return errors.New("reads a softmax of logits: only an output may")
	}
	return nil
}

func (im *importer) set(n *Node, v *val) {
	im.vals[n.Outputs[0]] = v
}

// view returns v seen differently (flattened, squeezed): a new val over
// the same layer that fuses only if v did and v is read once.
func (im *importer) view(n *Node, v *val) *val {
	c := *v
	c.solo = v.solo && im.uses[n.Inputs[0]] == 1 && !im.outputs[n.Inputs[0]]
	return &c
}

func attrInt(n *Node, name string, def int64) int64 {
	if a, ok := n.Attrs[name]; ok {
		return a.GetI()
	}
	return def
}

func attrFloat(n *Node, name string, def float32) float32 {
	if a, ok := n.Attrs[name]; ok {
		return a.GetF()
	}
	return def
}

func attrInts(n *Node, name string) ([]int64, bool) {
	a, ok := n.Attrs[name]
	if !ok {
		return nil, false
	}
	return a.GetInts(), true
}

func allEqual(v []int64, x int64) bool {
	for _, e := range v {
		if e != x {
			return false
		}
	}
	return true
}

const supportedOps = "Conv, BatchNormalization, Relu, Add, Gemm, MatMul, Flatten, Reshape, Squeeze, Identity, Dropout, Tanh, Softmax, LogSoftmax, Constant, and Shape, Gather, Unsqueeze, Concat, Slice, Cast on shapes"

func (im *importer) node(n *Node) error {
	if len(n.Outputs) == 0 || n.Outputs[0] == "" {
		return errors.New("no output")
	}
	switch n.Op {
	case "Constant":
		return nil // resolved by Decode
	case "Conv":
		return im.conv(n)
	case "BatchNormalization":
		return im.batchNorm(n)
	case "Relu", "Tanh":
		v, err := im.input(n, 0)
		if err != nil {
			return err
		}
		if !im.fusable(n.Inputs[0], v) {
			return fmt.Errorf("%s of a value that is not the fresh output of a convolution or dense layer (Canopy applies it inside a layer)", n.Op)
		}
		l := im.layers[v.layer]
		if n.Op == "Relu" {
			if l.stage >= stReLU {
				return errors.New("a second activation on one layer")
			}
			l.relu, l.stage = true, stReLU
		} else {
			if l.stage >= stTanh {
				return errors.New("a second Tanh on one layer")
			}
			l.tanh, l.stage = true, stTanh
		}
		c := *v
		c.stage = l.stage
		c.solo = true
		im.set(n, &c)
		return nil
	case "Add":
		return im.add(n)
	case "Gemm", "MatMul":
		return im.dense(n)
	case "Flatten":
		v, err := im.input(n, 0)
		if err != nil {
			return err
		}
		if err := im.buffer(v); err != nil {
			return err
		}
		if attrInt(n, "axis", 1) != 1 {
			return fmt.Errorf("axis %d: only axis 1 (keep the batch) is supported", attrInt(n, "axis", 1))
		}
		c := im.view(n, v)
		c.c, c.h, c.w, c.spatial, c.rank1 = v.c*v.h*v.w, 1, 1, false, false
		im.set(n, c)
		return nil
	case "Reshape":
		return im.reshape(n)
	case "Shape", "Gather", "Unsqueeze", "Concat", "Slice", "Cast":
		return im.shapeOp(n)
	case "Squeeze":
		v, err := im.input(n, 0)
		if err != nil {
			return err
		}
		axes, ok := attrInts(n, "axes")
		if len(n.Inputs) > 1 && n.Inputs[1] != "" {
			t, err := im.konst(n, 1)
			if err != nil {
				return err
			}
			axes, ok = t.I64, true
		}
		if v.spatial || v.c != 1 || v.rank1 || (ok && (len(axes) != 1 || (axes[0] != 1 && axes[0] != -1))) {
			return errors.New("only the squeeze of a [batch,1] value to [batch] is supported")
		}
		c := im.view(n, v)
		c.rank1 = true
		im.set(n, c)
		return nil
	case "Identity", "Dropout":
		v, err := im.input(n, 0)
		if err != nil {
			return err
		}
		if len(n.Outputs) > 1 && n.Outputs[1] != "" && im.uses[n.Outputs[1]] > 0 {
			return errors.New("uses Dropout's mask")
		}
		if err := inferenceDropout(n, im.m); err != nil {
			return err
		}
		im.set(n, im.view(n, v))
		return nil
	case "Softmax", "LogSoftmax":
		v, err := im.input(n, 0)
		if err != nil {
			return err
		}
		if v.konst != nil || v.shape != nil || v.spatial || v.rank1 || v.softmax {
			return fmt.Errorf("%s over something other than a dense layer's logits", n.Op)
		}
		if ax := attrInt(n, "axis", map[bool]int64{true: -1, false: 1}[im.m.Opset >= 13]); ax != 1 && ax != -1 {
			return fmt.Errorf("%s over axis %d: only over the actions (axis 1)", n.Op, ax)
		}
		c := im.view(n, v)
		c.softmax = true
		im.set(n, c)
		return nil
	}
	hint := ""
	switch n.Op {
	case "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceMax", "Mul", "Sigmoid":
		hint = " (squeeze-excitation and global-pooling blocks are not part of Canopy's ResNet; agents run such graphs as they are on the CPU: az:net=MODEL.onnx)"
	case "LeakyRelu", "Elu", "Selu", "Gelu", "HardSigmoid", "HardSwish", "Mish", "PRelu", "Clip":
		hint = " (Canopy's ResNet uses Relu only; agents run such graphs as they are on the CPU: az:net=MODEL.onnx)"
	}
	return fmt.Errorf("unsupported operator %s%s; Canopy imports %s", printable(n.Op), hint, supportedOps)
}

func (im *importer) conv(n *Node) error {
	x, err := im.input(n, 0)
	if err != nil {
		return err
	}
	if err := im.buffer(x); err != nil {
		return err
	}
	if !x.spatial {
		return errors.New("convolution of a flattened value")
	}
	w, err := im.konst(n, 1)
	if err != nil {
		return err
	}
	if len(w.Dims) != 4 || w.Dims[1] != x.c || w.Dims[2] != w.Dims[3] || w.F32 == nil {
		return fmt.Errorf("weight %q has shape %v; want [cout,%d,k,k] float", w.Name, w.Dims, x.c)
	}
	k := w.Dims[2]
	if ks, ok := attrInts(n, "kernel_shape"); ok && (len(ks) != 2 || ks[0] != int64(k) || ks[1] != int64(k)) {
		return fmt.Errorf("kernel_shape %v disagrees with weight %q of shape %v", ks, w.Name, w.Dims)
	}
	if k != 1 && k != 3 {
		return fmt.Errorf("kernel %dx%d: Canopy's ResNet has 3x3 and 1x1 convolutions only", k, k)
	}
	if g := attrInt(n, "group", 1); g != 1 {
		return fmt.Errorf("group = %d: only group = 1", g)
	}
	if s, ok := attrInts(n, "strides"); ok && !allEqual(s, 1) {
		return fmt.Errorf("strides %v: only stride 1", s)
	}
	if d, ok := attrInts(n, "dilations"); ok && !allEqual(d, 1) {
		return fmt.Errorf("dilations %v: only dilation 1", d)
	}
	pad := int64(k / 2)
	switch ap := string(n.Attrs["auto_pad"].GetS()); ap {
	case "", "NOTSET":
		p, _ := attrInts(n, "pads")
		if p == nil {
			p = []int64{0, 0, 0, 0}
		}
		if len(p) != 4 || !allEqual(p, pad) {
			return fmt.Errorf("pads %v with a %dx%d kernel: Canopy's convolutions keep the board size (pads %d)", p, k, k, pad)
		}
	case "SAME_UPPER", "SAME_LOWER":
	case "VALID":
		if k != 1 {
			return fmt.Errorf("auto_pad VALID with a %dx%d kernel shrinks the board", k, k)
		}
	default:
		return fmt.Errorf("auto_pad %q", ap)
	}
	l := &layer{node: n, kind: nets.Conv3x3, in: x.layer, cin: x.c, cout: w.Dims[0], w: w.F32, res: noRes}
	if k == 1 {
		l.kind = nets.Conv1x1
	}
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		b, err := im.konst(n, 2)
		if err != nil {
			return err
		}
		if b.Size() != l.cout || b.F32 == nil {
			return fmt.Errorf("bias %q has shape %v; want [%d]", b.Name, b.Dims, l.cout)
		}
		l.b = b.F32
	}
	im.layers = append(im.layers, l)
	im.set(n, &val{layer: len(im.layers) - 1, spatial: true, c: l.cout, h: x.h, w: x.w, solo: true})
	return nil
}

func (im *importer) batchNorm(n *Node) error {
	x, err := im.input(n, 0)
	if err != nil {
		return err
	}
	if attrInt(n, "training_mode", 0) != 0 {
		return errors.New("training_mode = 1: export the model in eval mode")
	}
	for _, o := range n.Outputs[1:] {
		if o != "" && im.uses[o] > 0 {
			return errors.New("reads the batch statistics outputs (a training graph): export in eval mode")
		}
	}
	if x.konst != nil || !x.spatial || !im.fusable(n.Inputs[0], x) || im.layers[x.layer].stage != stLinear {
		return errors.New("batch norm of a value that is not the fresh output of a convolution (Canopy folds it into the convolution before it)")
	}
	l := im.layers[x.layer]
	bn := &batchNorm{eps: attrFloat(n, "epsilon", 1e-5)}
	for i, dst := range []*[]float32{&bn.gamma, &bn.beta, &bn.mean, &bn.variance} {
		t, err := im.konst(n, i+1)
		if err != nil {
			return err
		}
		if t.Size() != l.cout || t.F32 == nil {
			return fmt.Errorf("input %q has shape %v; want [%d]", t.Name, t.Dims, l.cout)
		}
		*dst = t.F32
	}
	for i, v := range bn.variance {
		if v < 0 {
			return fmt.Errorf("variance %q holds %v at index %d", n.Inputs[4], v, i)
		}
	}
	if bn.eps <= 0 || math.IsNaN(float64(bn.eps)) {
		return fmt.Errorf("epsilon %v", bn.eps)
	}
	l.bn, l.stage = bn, stBN
	c := *x
	c.stage, c.solo = stBN, true
	im.set(n, &c)
	return nil
}

func (im *importer) add(n *Node) error {
	a, err := im.input(n, 0)
	if err != nil {
		return err
	}
	b, err := im.input(n, 1)
	if err != nil {
		return err
	}
	an, bn := n.Inputs[0], n.Inputs[1]
	if a.konst != nil {
		a, b, an, bn = b, a, bn, an
	}
	if b.konst != nil { // a bias
		if a.konst != nil || !im.fusable(an, a) || im.layers[a.layer].stage != stLinear || im.layers[a.layer].b != nil {
			return errors.New("adds a constant to a value that is not a convolution or dense layer without a bias")
		}
		l := im.layers[a.layer]
		want := [][]int{{l.cout}, {1, l.cout}}
		if l.kind != nets.Dense {
			want = [][]int{{l.cout, 1, 1}, {1, l.cout, 1, 1}}
		}
		if b.konst.F32 == nil || !(slices.Equal(b.konst.Dims, want[0]) || slices.Equal(b.konst.Dims, want[1])) {
			return fmt.Errorf("bias %q has shape %v; want %v or %v", b.konst.Name, b.konst.Dims, want[0], want[1])
		}
		l.b = b.konst.F32
		c := *a
		c.solo = true
		im.set(n, &c)
		return nil
	}
	// A residual connection: the later layer (still fusable, before its
	// activation) absorbs the earlier activation.
	if a.layer < b.layer {
		a, b, an = b, a, bn
	}
	if !im.fusable(an, a) || im.layers[a.layer].stage > stBN {
		return errors.New("adds two values neither of which is the fresh output of a convolution (Canopy adds the residual inside a layer, before its activation)")
	}
	if err := im.buffer(b); err != nil {
		return err
	}
	if a.spatial != b.spatial || a.c != b.c || a.h != b.h || a.w != b.w || a.rank1 != b.rank1 {
		return errors.New("adds values of different shapes (broadcasting is not supported)")
	}
	l := im.layers[a.layer]
	l.res, l.stage = b.layer, stRes
	c := *a
	c.stage, c.solo = stRes, true
	im.set(n, &c)
	return nil
}

func (im *importer) dense(n *Node) error {
	x, err := im.input(n, 0)
	if err != nil {
		return err
	}
	if err := im.buffer(x); err != nil {
		return err
	}
	if x.spatial || x.rank1 {
		return fmt.Errorf("%s of a value that is not [batch, features] (flatten it first)", n.Op)
	}
	w, err := im.konst(n, 1)
	if err != nil {
		return err
	}
	if len(w.Dims) != 2 || w.F32 == nil {
		return fmt.Errorf("weight %q has shape %v; want a float matrix", w.Name, w.Dims)
	}
	transB := n.Op == "Gemm" && attrInt(n, "transB", 0) != 0
	k, out := w.Dims[0], w.Dims[1]
	if transB {
		k, out = out, k
	}
	if k != x.c {
		return fmt.Errorf("weight %q has shape %v; the input has %d features", w.Name, w.Dims, x.c)
	}
	l := &layer{node: n, kind: nets.Dense, in: x.layer, cin: x.c, cout: out, res: noRes}
	if transB {
		l.w = w.F32
	} else {
		l.w = make([]float32, len(w.F32))
		for i := range k {
			for o := range out {
				l.w[o*k+i] = w.F32[i*out+o]
			}
		}
	}
	if n.Op == "Gemm" {
		if attrInt(n, "transA", 0) != 0 || attrFloat(n, "alpha", 1) != 1 {
			return errors.New("transA or alpha != 1")
		}
		if len(n.Inputs) > 2 && n.Inputs[2] != "" {
			c, err := im.konst(n, 2)
			if err != nil {
				return err
			}
			if c.F32 == nil || !(slices.Equal(c.Dims, []int{out}) || slices.Equal(c.Dims, []int{1, out})) {
				return fmt.Errorf("bias %q has shape %v; want [%d]", c.Name, c.Dims, out)
			}
			beta := attrFloat(n, "beta", 1)
			l.b = make([]float32, out)
			for i, v := range c.F32 {
				l.b[i] = beta * v
			}
		}
	}
	im.layers = append(im.layers, l)
	im.set(n, &val{layer: len(im.layers) - 1, c: out, h: 1, w: 1, solo: true})
	return nil
}

func (im *importer) reshape(n *Node) error {
	x, err := im.input(n, 0)
	if err != nil {
		return err
	}
	if err := im.buffer(x); err != nil {
		return err
	}
	sv, err := im.input(n, 1)
	if err != nil {
		return err
	}
	var s []int64
	switch {
	case sv.shape != nil:
		s = sv.shape
	case sv.konst != nil && sv.konst.I64 != nil:
		s = sv.konst.I64
	default:
		return fmt.Errorf("shape %q is neither a constant nor computed from a shape", n.Inputs[1])
	}
	size := int64(x.c * x.h * x.w)
	c := im.view(n, x)
	switch {
	case len(s) == 2 && im.isBatch(s[0]) && (s[1] == -1 || s[1] == size) && !x.rank1:
		c.c, c.h, c.w, c.spatial = int(size), 1, 1, false
	case len(s) == 1 && s[0] != 0 && im.isBatch(s[0]) && size == 1:
		c.rank1 = true
	default:
		for i, d := range s {
			if d == batchSym {
				s[i] = -1 // for the message
			}
		}
		return fmt.Errorf("reshape of %v per sample to %v: only flattening to [batch, %d] (or [batch,1] to [batch]) is supported", []int{x.c, x.h, x.w}, s, size)
	}
	im.set(n, c)
	return nil
}

// isBatch reports whether a target dimension of Reshape keeps the batch:
// 0 (copy), -1 (infer), the computed batch size, or the batch size of an
// input exported with a fixed one.
func (im *importer) isBatch(d int64) bool {
	return d == 0 || d == -1 || d == batchSym || (im.batch > 0 && d == im.batch)
}

// pickOutputs finds the policy and value outputs.
func (im *importer) pickOutputs(g games.Game, opts ImportOptions) (pol, value *val, err error) {
	names := make([]string, len(im.m.Outputs))
	for i, o := range im.m.Outputs {
		names[i] = o.Name
	}
	get := func(name, what string) (*val, error) {
		v, ok := im.vals[name]
		if !ok {
			if _, isConst := im.m.Consts[name]; isConst {
				return nil, fmt.Errorf("%s output %q is a constant", what, name)
			}
			return nil, fmt.Errorf("no output %q (outputs: %s)", name, strings.Join(names, ", "))
		}
		return v, nil
	}
	pname, vname := opts.PolicyOutput, opts.ValueOutput
	if pname == "" || vname == "" {
		var pc, vc []string
		for _, o := range im.m.Outputs {
			v, ok := im.vals[o.Name]
			if !ok || v.spatial {
				continue
			}
			switch {
			case v.c == 1:
				vc = append(vc, o.Name)
			case v.c == g.NumActions():
				pc = append(pc, o.Name)
			}
		}
		if pname == "" {
			if len(pc) != 1 {
				return nil, nil, fmt.Errorf("cannot tell the policy output among %s (want [batch,%d]); name it with --policy-output", strings.Join(names, ", "), g.NumActions())
			}
			pname = pc[0]
		}
		if vname == "" {
			if len(vc) != 1 {
				var per []string
				for _, o := range im.m.Outputs {
					if v, ok := im.vals[o.Name]; ok && !v.spatial && o.Name != pname && v.c == g.NumPlayers() && g.NumPlayers() > 2 {
						per = append(per, o.Name)
					}
				}
				if len(vc) != 0 || len(per) != 1 {
					return nil, nil, fmt.Errorf("cannot tell the value output among %s (want [batch] or [batch,1], or [batch,%d] with a value per player); name it with --value-output", strings.Join(names, ", "), g.NumPlayers())
				}
				vc = per
			}
			vname = vc[0]
		}
	}
	if pol, err = get(pname, "policy"); err != nil {
		return nil, nil, err
	}
	if value, err = get(vname, "value"); err != nil {
		return nil, nil, err
	}
	if pol.spatial || pol.rank1 || pol.c != g.NumActions() || pol.layer < 0 || im.layers[pol.layer].kind != nets.Dense {
		return nil, nil, fmt.Errorf("policy output %q must be a dense layer's [batch,%d] logits", pname, g.NumActions())
	}
	if l := im.layers[pol.layer]; l.relu || l.tanh || l.res != noRes {
		return nil, nil, fmt.Errorf("policy output %q: logits must come straight from a dense layer (no activation)", pname)
	}
	if value.spatial || value.layer < 0 || im.layers[value.layer].kind != nets.Dense || value.softmax {
		return nil, nil, fmt.Errorf("value output %q must be a dense layer's value", vname)
	}
	if value.c != 1 && value.c != g.NumPlayers() {
		return nil, nil, fmt.Errorf("value output %q is [batch,%d]: Canopy's networks give one value, for the player to move, or one per player (%d, seat-rotated)", vname, value.c, g.NumPlayers())
	}
	if l := im.layers[value.layer]; !l.tanh || l.relu || l.res != noRes {
		return nil, nil, fmt.Errorf("value output %q must be tanh of a dense layer (Canopy's value is squashed into [-1,1]; add torch.tanh)", vname)
	}
	return pol, value, nil
}

// shapeOp evaluates the small shape computations exporters write for
// x.view(x.size(0), -1): Shape of an activation, Gather, Unsqueeze,
// Concat and Slice of shape vectors and int64 constants, Cast to int64.
func (im *importer) shapeOp(n *Node) error {
	vec := func(i int) ([]int64, bool, error) {
		v, err := im.input(n, i)
		if err != nil {
			return nil, false, err
		}
		switch {
		case v.shape != nil:
			return v.shape, v.scalar, nil
		case v.konst != nil && v.konst.I64 != nil:
			return v.konst.I64, len(v.konst.Dims) == 0, nil
		}
		return nil, false, fmt.Errorf("input %q is not a shape or an int64 constant", n.Inputs[i])
	}
	ints := func(i int) ([]int64, error) {
		t, err := im.konst(n, i)
		if err != nil {
			return nil, err
		}
		if t.I64 == nil {
			return nil, fmt.Errorf("input %q is not an int64 constant", n.Inputs[i])
		}
		return t.I64, nil
	}
	var out []int64
	scalar := false
	switch n.Op {
	case "Shape":
		v, err := im.input(n, 0)
		if err != nil {
			return err
		}
		if v.konst != nil || v.shape != nil {
			return errors.New("Shape of a constant or of a shape")
		}
		switch {
		case v.spatial:
			out = []int64{batchSym, int64(v.c), int64(v.h), int64(v.w)}
		case v.rank1:
			out = []int64{batchSym}
		default:
			out = []int64{batchSym, int64(v.c)}
		}
		s, e := clampRange(attrInt(n, "start", 0), attrInt(n, "end", int64(len(out))), len(out))
		out = out[min(s, e):e]
	case "Cast":
		v, s, err := vec(0)
		if err != nil {
			return err
		}
		if to := attrInt(n, "to", 0); to != 7 && to != 6 {
			return fmt.Errorf("Cast of a shape to type %d", to)
		}
		out, scalar = v, s
	case "Gather":
		v, _, err := vec(0)
		if err != nil {
			return err
		}
		t, err := im.konst(n, 1)
		if err != nil {
			return err
		}
		if attrInt(n, "axis", 0) != 0 || t.I64 == nil {
			return errors.New("Gather of a shape needs int64 indices and axis 0")
		}
		for _, i := range t.I64 {
			if i < 0 {
				i += int64(len(v))
			}
			if i < 0 || i >= int64(len(v)) {
				return fmt.Errorf("index %d out of a shape of rank %d", i, len(v))
			}
			out = append(out, v[i])
		}
		scalar = len(t.Dims) == 0
	case "Unsqueeze":
		v, s, err := vec(0)
		if err != nil {
			return err
		}
		axes, ok := attrInts(n, "axes")
		if len(n.Inputs) > 1 && n.Inputs[1] != "" {
			if axes, err = ints(1); err != nil {
				return err
			}
			ok = true
		}
		if !s || !ok || len(axes) != 1 || axes[0] != 0 && axes[0] != -1 {
			return errors.New("only the Unsqueeze of a scalar shape element to a vector is supported")
		}
		out = v
	case "Concat":
		if attrInt(n, "axis", 0) != 0 {
			return errors.New("Concat of shapes needs axis 0")
		}
		for i := range n.Inputs {
			v, _, err := vec(i)
			if err != nil {
				return err
			}
			out = append(out, v...)
		}
	case "Slice":
		v, _, err := vec(0)
		if err != nil {
			return err
		}
		starts, err := ints(1)
		if err != nil {
			return err
		}
		ends, err := ints(2)
		if err != nil {
			return err
		}
		if len(starts) != 1 || len(ends) != 1 || (len(n.Inputs) > 4 && n.Inputs[4] != "") {
			return errors.New("Slice of a shape over more than one axis or with steps")
		}
		s, e := clampRange(starts[0], ends[0], len(v))
		if s < e {
			out = append(out, v[s:e]...)
		}
	}
	if len(out) > maxRank {
		return fmt.Errorf("a shape of rank %d", len(out))
	}
	im.set(n, &val{layer: -1, shape: append(make([]int64, 0, len(out)), out...), scalar: scalar})
	return nil
}

// clampRange resolves ONNX start/end indices (negative from the end,
// clamped) over a length n.
func clampRange(start, end int64, n int) (int, int) {
	fix := func(i int64) int {
		if i < 0 {
			i += int64(n)
		}
		return int(min(max(i, 0), int64(n)))
	}
	return fix(start), fix(end)
}

// inferenceDropout refuses a Dropout that a runtime would apply: one
// whose training_mode input is a true constant, or computed.
func inferenceDropout(n *Node, m *Model) error {
	if n.Op != "Dropout" || len(n.Inputs) < 3 || n.Inputs[2] == "" {
		return nil
	}
	t, ok := m.Consts[n.Inputs[2]]
	if !ok {
		return errors.New("Dropout with a computed training_mode")
	}
	for _, v := range t.I64 {
		if v != 0 {
			return errors.New("Dropout in training mode: export the model in eval mode")
		}
	}
	if t.I64 == nil {
		return errors.New("Dropout's training_mode is not a boolean constant")
	}
	return nil
}
