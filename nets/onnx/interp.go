package onnx

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/kernels"
	"github.com/canopy-go/canopy/nets"
)

// Graph is an ONNX policy-value graph compiled to run as it is, one
// operator after another over Canopy's CPU kernels, for graphs that are
// not Canopy's ResNet: squeeze-excitation and global-pooling blocks,
// LeakyRelu and Sigmoid, Mul, any convolution padding and stride. It is
// the slower path: no operator fusion, every activation in its own
// buffer, float32 on the CPU only, and no training (Import maps the
// graphs it can onto a nets.Net, which has all of those).
//
// Activations are NCHW, batch first, as ONNX defines them. A Graph is a
// nets.Backend ("onnx-cpu"); Evaluate is safe for concurrent use (calls
// are serialised, as the cpu backend's are).
type Graph struct {
	mu       sync.Mutex // serialises Evaluate: the steps share the buffers
	steps    []func(batch int)
	input    *gval
	policy   *gval
	value    *gval
	maxBatch int
	inSize   int
	polSize  int
	floats   int // activation floats per sample, for the memory cap
}

// gval is a value of the compiled graph: a constant (full shape, data),
// a batched activation (per-sample dims, storage for maxBatch samples,
// possibly shared with the value it is a view of), or a computed shape.
type gval struct {
	konst *Tensor
	dims  []int // per-sample dims of an activation
	buf   []float32
	ints  []int64 // a computed shape (batchSym for the batch)
	isInt bool
	tanh  bool // the activation is a Tanh's output (through views)
	logit *gval
}

func (v *gval) size() int { return numElems(v.dims) }

// maxGraphFloats bounds the floats a Graph holds for its activations,
// all buffers for maxBatch samples together (512 MiB): a hostile graph is
// refused before it allocates more.
const maxGraphFloats = 1 << 27

// CompileGraph compiles m for game g (input and outputs checked as Import
// checks them) to run batches of up to maxBatch samples.
func CompileGraph(m *Model, g games.Game, opts ImportOptions, maxBatch int) (*Graph, error) {
	if maxBatch < 1 || maxBatch > 1<<16 {
		return nil, fmt.Errorf("onnx: max batch %d out of range", maxBatch)
	}
	in, err := checkInput(m, g)
	if err != nil {
		return nil, err
	}
	c := &compiler{m: m, vals: map[string]*gval{}, gr: &Graph{maxBatch: maxBatch}, batch: in.Dims[0]}
	c.gr.input = c.act([]int{int(in.Dims[1]), int(in.Dims[2]), int(in.Dims[3])})
	c.vals[in.Name] = c.gr.input
	c.gr.inSize = c.gr.input.size()
	for _, n := range m.Nodes {
		err := c.node(n)
		if err == nil {
			err = c.err
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v: %v", ErrUnsupported, n, err)
		}
	}
	if err := c.outputs(g, opts); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	return c.gr, nil
}

type compiler struct {
	m     *Model
	vals  map[string]*gval
	gr    *Graph
	err   error // set when the activations outgrow maxGraphFloats
	batch int64 // the input's batch dimension when the exporter fixed it, else -1
}

// act makes an activation with its own storage, unless that would pass
// maxGraphFloats (then it records c.err and allocates nothing).
func (c *compiler) act(dims []int) *gval {
	v := &gval{dims: dims}
	if !c.reserve(v.size()) {
		return v
	}
	v.buf = make([]float32, c.gr.maxBatch*v.size())
	return v
}

// reserve counts n more floats per sample, reporting false (and setting
// c.err) past the limit.
func (c *compiler) reserve(n int) bool {
	c.gr.floats += n
	if n < 0 || n > maxGraphFloats || c.gr.floats > maxGraphFloats/c.gr.maxBatch {
		if c.err == nil {
			c.err = fmt.Errorf("the activations need more than %d floats for batches of %d", maxGraphFloats, c.gr.maxBatch)
		}
		return false
	}
	return true
}

func (c *compiler) in(n *Node, i int) (*gval, error) {
	if i >= len(n.Inputs) || n.Inputs[i] == "" {
		return nil, fmt.Errorf("input %d is missing", i)
	}
	if t, ok := c.m.Consts[n.Inputs[i]]; ok {
		if t.I64 != nil {
			return &gval{konst: t, ints: t.I64, isInt: true}, nil
		}
		return &gval{konst: t}, nil
	}
	v, ok := c.vals[n.Inputs[i]]
	if !ok {
		return nil, fmt.Errorf("input %q is not computed", n.Inputs[i])
	}
	return v, nil
}

// actIn is input i, which must be an activation.
func (c *compiler) actIn(n *Node, i int) (*gval, error) {
	v, err := c.in(n, i)
	if err == nil && (v.konst != nil || v.isInt) {
		err = fmt.Errorf("input %q is a constant or a shape; an activation is expected", n.Inputs[i])
	}
	return v, err
}

func (c *compiler) floatConst(n *Node, i int) (*Tensor, error) {
	v, err := c.in(n, i)
	if err != nil {
		return nil, err
	}
	if v.konst == nil || v.konst.F32 == nil {
		return nil, fmt.Errorf("input %q must be a float constant", n.Inputs[i])
	}
	return v.konst, nil
}

func (c *compiler) set(n *Node, v *gval) { c.vals[n.Outputs[0]] = v }

// view is v with other dims over the same storage.
func view(v *gval, dims []int) *gval {
	return &gval{dims: dims, buf: v.buf, tanh: v.tanh, logit: v.logit}
}

func (c *compiler) node(n *Node) error {
	if len(n.Outputs) == 0 || n.Outputs[0] == "" {
		return errors.New("no output")
	}
	switch n.Op {
	case "Constant":
		return nil
	case "Relu", "LeakyRelu", "Sigmoid", "Tanh":
		x, err := c.actIn(n, 0)
		if err != nil {
			return err
		}
		y := c.act(x.dims)
		y.tanh = n.Op == "Tanh"
		alpha := attrFloat(n, "alpha", 0.01)
		size, op := x.size(), n.Op
		c.gr.steps = append(c.gr.steps, func(b int) { unary(op, alpha, x.buf[:b*size], y.buf[:b*size]) })
		c.set(n, y)
		return nil
	case "Conv":
		return c.conv(n)
	case "BatchNormalization":
		return c.batchNorm(n)
	case "Add", "Mul", "Sub", "Div":
		return c.binary(n)
	case "Gemm", "MatMul":
		return c.gemm(n)
	case "GlobalAveragePool", "ReduceMean":
		return c.pool(n)
	case "Flatten", "Reshape", "Squeeze", "Unsqueeze", "Identity", "Dropout":
		if err := inferenceDropout(n, c.m); err != nil {
			return err
		}
		if v, err := c.in(n, 0); err == nil && v.isInt && (n.Op == "Unsqueeze" || n.Op == "Squeeze" || n.Op == "Identity") {
			c.set(n, &gval{ints: v.ints, isInt: true}) // a shape element as a vector, or back
			return nil
		}
		return c.reshape(n)
	case "Softmax", "LogSoftmax":
		x, err := c.actIn(n, 0)
		if err != nil {
			return err
		}
		if len(x.dims) != 1 {
			return fmt.Errorf("%s over a value of per-sample shape %v: only over [batch, N]", n.Op, x.dims)
		}
		if ax := attrInt(n, "axis", -1); ax != 1 && ax != -1 {
			return fmt.Errorf("%s over axis %d", n.Op, ax)
		}
		y := c.act(x.dims)
		y.logit = x
		N, log := x.dims[0], n.Op == "LogSoftmax"
		c.gr.steps = append(c.gr.steps, func(b int) { softmaxRows(x.buf[:b*N], y.buf[:b*N], N, log) })
		c.set(n, y)
		return nil
	case "Shape", "Gather", "Concat", "Slice", "Cast":
		if n.Op == "Concat" {
			if v, err := c.in(n, 0); err == nil && !v.isInt {
				return c.concat(n)
			}
		}
		return c.shapeOp(n)
	}
	return fmt.Errorf("unsupported operator %s; the CPU graph runner runs Conv, BatchNormalization, Relu, LeakyRelu, Sigmoid, Tanh, Add, Sub, Mul, Div, Gemm, MatMul, GlobalAveragePool, ReduceMean, Flatten, Reshape, Squeeze, Unsqueeze, Identity, Dropout, Concat, Softmax, LogSoftmax and shape operators", printable(n.Op))
}

func unary(op string, alpha float32, x, y []float32) {
	switch op {
	case "Relu":
		for i, v := range x {
			y[i] = max(v, 0)
		}
	case "LeakyRelu":
		for i, v := range x {
			if v < 0 {
				v *= alpha
			}
			y[i] = v
		}
	case "Sigmoid":
		for i, v := range x {
			y[i] = float32(1 / (1 + math.Exp(-float64(v))))
		}
	case "Tanh":
		for i, v := range x {
			y[i] = float32(math.Tanh(float64(v)))
		}
	}
}

func softmaxRows(x, y []float32, n int, log bool) {
	for r := 0; r+n <= len(x); r += n {
		row, out := x[r:r+n], y[r:r+n]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, float64(v))
		}
		s := 0.0
		for _, v := range row {
			s += math.Exp(float64(v) - mx)
		}
		for i, v := range row {
			if log {
				out[i] = float32(float64(v) - mx - math.Log(s))
			} else {
				out[i] = float32(math.Exp(float64(v)-mx) / s)
			}
		}
	}
}

func (c *compiler) conv(n *Node) error {
	x, err := c.actIn(n, 0)
	if err != nil {
		return err
	}
	w, err := c.floatConst(n, 1)
	if err != nil {
		return err
	}
	if len(x.dims) != 3 || len(w.Dims) != 4 || w.Dims[1] != x.dims[0] {
		return fmt.Errorf("input %v and weight %v do not make a 2-D convolution", x.dims, w.Dims)
	}
	if g := attrInt(n, "group", 1); g != 1 {
		return fmt.Errorf("group = %d: only group = 1", g)
	}
	ci, h, wd := x.dims[0], x.dims[1], x.dims[2]
	co, kh, kw := w.Dims[0], w.Dims[2], w.Dims[3]
	st, sok := attrInts(n, "strides")
	dl, dok := attrInts(n, "dilations")
	if !sok {
		st = []int64{1, 1}
	}
	if !dok {
		dl = []int64{1, 1}
	}
	if len(st) != 2 || len(dl) != 2 || st[0] < 1 || st[1] < 1 || dl[0] < 1 || dl[1] < 1 || st[0] > 64 || st[1] > 64 || dl[0] > 64 || dl[1] > 64 {
		return fmt.Errorf("strides %v, dilations %v", st, dl)
	}
	sh, sw, dh, dw := int(st[0]), int(st[1]), int(dl[0]), int(dl[1])
	var pt, pl, pb, pr int
	switch ap := string(n.Attrs["auto_pad"].GetS()); ap {
	case "", "NOTSET":
		if p, ok := attrInts(n, "pads"); ok {
			if len(p) != 4 || p[0] < 0 || p[1] < 0 || p[2] < 0 || p[3] < 0 || p[0] > 64 || p[1] > 64 || p[2] > 64 || p[3] > 64 {
				return fmt.Errorf("pads %v", p)
			}
			pt, pl, pb, pr = int(p[0]), int(p[1]), int(p[2]), int(p[3])
		}
	case "VALID":
	case "SAME_UPPER", "SAME_LOWER":
		same := func(in, s, k, d int) (int, int) {
			out := (in + s - 1) / s
			total := max(0, (out-1)*s+(k-1)*d+1-in)
			if ap == "SAME_UPPER" {
				return total / 2, total - total/2
			}
			return total - total/2, total / 2
		}
		pt, pb = same(h, sh, kh, dh)
		pl, pr = same(wd, sw, kw, dw)
	default:
		return fmt.Errorf("auto_pad %q", ap)
	}
	oh := (h+pt+pb-dh*(kh-1)-1)/sh + 1
	ow := (wd+pl+pr-dw*(kw-1)-1)/sw + 1
	if oh < 1 || ow < 1 {
		return fmt.Errorf("the convolution leaves no output (%dx%d)", oh, ow)
	}
	var bias []float32
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		b, err := c.floatConst(n, 2)
		if err != nil {
			return err
		}
		if b.Size() != co {
			return fmt.Errorf("bias %v for %d channels", b.Dims, co)
		}
		bias = b.F32
	}
	if oh > maxTensorElems/ow/co {
		return fmt.Errorf("output %dx%dx%d too large", co, oh, ow)
	}
	y := c.act([]int{co, oh, ow})
	K, P := ci*kh*kw, oh*ow
	if c.err != nil || !c.reserve(K*P/c.gr.maxBatch+1) {
		return c.err
	}
	col := make([]float32, K*P)
	in, out, wt := x.size(), y.size(), w.F32
	c.gr.steps = append(c.gr.steps, func(b int) {
		for s := range b {
			src := x.buf[s*in : (s+1)*in]
			for c0 := range ci {
				for i := range kh {
					for j := range kw {
						row := col[((c0*kh+i)*kw+j)*P:][:P]
						for r := range oh {
							yy := r*sh - pt + i*dh
							for q := range ow {
								xx := q*sw - pl + j*dw
								v := float32(0)
								if yy >= 0 && yy < h && xx >= 0 && xx < wd {
									v = src[(c0*h+yy)*wd+xx]
								}
								row[r*ow+q] = v
							}
						}
					}
				}
			}
			dst := y.buf[s*out : (s+1)*out]
			kernels.Gemm(false, false, co, P, K, 1, wt, K, col, P, 0, dst, P)
			if bias != nil {
				for o := range co {
					for p := range P {
						dst[o*P+p] += bias[o]
					}
				}
			}
		}
	})
	c.set(n, y)
	return nil
}

func (c *compiler) batchNorm(n *Node) error {
	x, err := c.actIn(n, 0)
	if err != nil {
		return err
	}
	if attrInt(n, "training_mode", 0) != 0 {
		return errors.New("training_mode = 1: export the model in eval mode")
	}
	if len(x.dims) < 1 {
		return errors.New("batch norm of a scalar")
	}
	ch, eps := x.dims[0], float64(attrFloat(n, "epsilon", 1e-5))
	var p [4][]float32
	for i := range p {
		t, err := c.floatConst(n, i+1)
		if err != nil {
			return err
		}
		if t.Size() != ch {
			return fmt.Errorf("input %q has %d values for %d channels", n.Inputs[i+1], t.Size(), ch)
		}
		p[i] = t.F32
	}
	scale, shift := make([]float32, ch), make([]float32, ch)
	for i := range ch {
		if p[3][i] < 0 || eps <= 0 {
			return fmt.Errorf("variance %v, epsilon %v", p[3][i], eps)
		}
		s := float64(p[0][i]) / math.Sqrt(float64(p[3][i])+eps)
		scale[i], shift[i] = float32(s), float32(float64(p[1][i])-float64(p[2][i])*s)
	}
	y := c.act(x.dims)
	per := x.size() / ch
	size := x.size()
	c.gr.steps = append(c.gr.steps, func(b int) {
		for s := range b {
			for k := range ch {
				src := x.buf[s*size+k*per:][:per]
				dst := y.buf[s*size+k*per:][:per]
				for i, v := range src {
					dst[i] = v*scale[k] + shift[k]
				}
			}
		}
	})
	c.set(n, y)
	return nil
}

// binary compiles Add, Sub, Mul and Div with numpy broadcasting between
// activations ([batch, dims...]) and constants (their own shape).
func (c *compiler) binary(n *Node) error {
	var ops [2]*gval
	var full [2][]int // full shapes, -1 for the batch
	for i := range ops {
		v, err := c.in(n, i)
		if err != nil {
			return err
		}
		if v.isInt {
			return errors.New("arithmetic on shapes")
		}
		ops[i] = v
		if v.konst != nil {
			full[i] = v.konst.Dims
		} else {
			full[i] = append([]int{-1}, v.dims...)
		}
	}
	if ops[0].konst != nil && ops[1].konst != nil {
		return errors.New("arithmetic on two constants")
	}
	rank := max(len(full[0]), len(full[1]))
	if rank > maxRank {
		return errors.New("rank too high")
	}
	out := make([]int, rank)
	var pad [2][]int
	for i := range full {
		pad[i] = append(make([]int, rank-len(full[i])), full[i]...)
		for k := range rank - len(full[i]) {
			pad[i][k] = 1
		}
	}
	for k := range rank {
		a, b := pad[0][k], pad[1][k]
		switch {
		case a == b:
			out[k] = a
		case a == 1:
			out[k] = b
		case b == 1:
			out[k] = a
		default:
			return fmt.Errorf("shapes %v and %v do not broadcast", full[0], full[1])
		}
	}
	if out[0] != -1 {
		return fmt.Errorf("the result %v has no batch dimension", out)
	}
	y := c.act(out[1:])
	op := n.Op
	// Strides per operand over the output's dims, 0 where broadcast; the
	// batch stride is the per-sample size (constants never span the batch).
	strides := func(i int) []int {
		st := make([]int, rank)
		acc := 1
		for k := rank - 1; k >= 0; k-- {
			d := pad[i][k]
			if d == -1 {
				st[k] = acc
				continue
			}
			if d != 1 {
				st[k] = acc
			}
			acc *= d
		}
		return st
	}
	sa, sb := strides(0), strides(1)
	bufOf := func(v *gval) []float32 {
		if v.konst != nil {
			return v.konst.F32
		}
		return v.buf
	}
	a, b := ops[0], ops[1]
	same := a.konst == nil && b.konst == nil && slices.Equal(a.dims, b.dims)
	size := y.size()
	idx, dims := make([]int, rank), append([]int(nil), out...) // the step's scratch (one call at a time)
	c.gr.steps = append(c.gr.steps, func(batch int) {
		ab, bb, yb := bufOf(a), bufOf(b), y.buf[:batch*size]
		if same {
			for i := range yb {
				yb[i] = arith(op, ab[i], bb[i])
			}
			return
		}
		clear(idx)
		dims[0] = batch
		ia, ib := 0, 0
		for i := range yb {
			yb[i] = arith(op, ab[ia], bb[ib])
			for k := rank - 1; k >= 0; k-- {
				idx[k]++
				ia += sa[k]
				ib += sb[k]
				if idx[k] < dims[k] {
					break
				}
				ia -= sa[k] * dims[k]
				ib -= sb[k] * dims[k]
				idx[k] = 0
			}
		}
	})
	y.tanh = false
	c.set(n, y)
	return nil
}

func arith(op string, a, b float32) float32 {
	switch op {
	case "Add":
		return a + b
	case "Sub":
		return a - b
	case "Mul":
		return a * b
	}
	return a / b
}

func (c *compiler) gemm(n *Node) error {
	x, err := c.actIn(n, 0)
	if err != nil {
		return err
	}
	w, err := c.floatConst(n, 1)
	if err != nil {
		return err
	}
	if len(x.dims) != 1 || len(w.Dims) != 2 {
		return fmt.Errorf("%s of %v by %v: only [batch, K] by a [K, N] matrix", n.Op, x.dims, w.Dims)
	}
	transB := n.Op == "Gemm" && attrInt(n, "transB", 0) != 0
	if n.Op == "Gemm" && attrInt(n, "transA", 0) != 0 {
		return errors.New("transA")
	}
	K, N, ldb := w.Dims[0], w.Dims[1], w.Dims[1]
	if transB {
		K, N, ldb = w.Dims[1], w.Dims[0], w.Dims[1]
	}
	if K != x.dims[0] {
		return fmt.Errorf("weight %v for %d inputs", w.Dims, x.dims[0])
	}
	alpha, beta := float32(1), float32(1)
	var bias []float32
	if n.Op == "Gemm" {
		alpha, beta = attrFloat(n, "alpha", 1), attrFloat(n, "beta", 1)
		if len(n.Inputs) > 2 && n.Inputs[2] != "" {
			t, err := c.floatConst(n, 2)
			if err != nil {
				return err
			}
			if !(slices.Equal(t.Dims, []int{N}) || slices.Equal(t.Dims, []int{1, N})) {
				return fmt.Errorf("bias %v for %d outputs", t.Dims, N)
			}
			bias = t.F32
		}
	}
	y := c.act([]int{N})
	wt := w.F32
	c.gr.steps = append(c.gr.steps, func(b int) {
		kernels.Gemm(false, transB, b, N, K, alpha, x.buf, K, wt, ldb, 0, y.buf, N)
		if bias != nil {
			for s := range b {
				for j := range N {
					y.buf[s*N+j] += beta * bias[j]
				}
			}
		}
	})
	c.set(n, y)
	return nil
}

func (c *compiler) pool(n *Node) error {
	x, err := c.actIn(n, 0)
	if err != nil {
		return err
	}
	if len(x.dims) != 3 {
		return fmt.Errorf("%s of a value of per-sample shape %v: only over [batch, C, H, W]", n.Op, x.dims)
	}
	keep := true
	if n.Op == "ReduceMean" {
		axes, ok := attrInts(n, "axes")
		if len(n.Inputs) > 1 && n.Inputs[1] != "" {
			t, err := c.in(n, 1)
			if err != nil || !t.isInt {
				return errors.New("axes must be an int64 constant")
			}
			axes, ok = t.ints, true
		}
		if !ok || len(axes) != 2 || !((axes[0] == 2 || axes[0] == -2) && (axes[1] == 3 || axes[1] == -1)) {
			return fmt.Errorf("ReduceMean over axes %v: only over the board (2, 3)", axes)
		}
		keep = attrInt(n, "keepdims", 1) != 0
	}
	ch, per := x.dims[0], x.dims[1]*x.dims[2]
	dims := []int{ch, 1, 1}
	if !keep {
		dims = []int{ch}
	}
	y := c.act(dims)
	size := x.size()
	c.gr.steps = append(c.gr.steps, func(b int) {
		for s := range b {
			for k := range ch {
				sum := float32(0)
				for _, v := range x.buf[s*size+k*per:][:per] {
					sum += v
				}
				y.buf[s*ch+k] = sum / float32(per)
			}
		}
	})
	c.set(n, y)
	return nil
}

func (c *compiler) reshape(n *Node) error {
	x, err := c.actIn(n, 0)
	if err != nil {
		return err
	}
	size := x.size()
	var dims []int
	switch n.Op {
	case "Identity", "Dropout":
		dims = x.dims
	case "Flatten":
		if attrInt(n, "axis", 1) != 1 {
			return errors.New("Flatten keeps the batch only with axis 1")
		}
		dims = []int{size}
	case "Squeeze", "Unsqueeze":
		axes, ok := attrInts(n, "axes")
		if len(n.Inputs) > 1 && n.Inputs[1] != "" {
			t, err := c.in(n, 1)
			if err != nil || !t.isInt {
				return errors.New("axes must be an int64 constant")
			}
			axes, ok = t.ints, true
		}
		full := append([]int{-1}, x.dims...)
		if n.Op == "Squeeze" {
			var out []int
			for k, d := range full {
				drop := false
				for _, a := range axes {
					if int(a) == k || int(a)+len(full) == k {
						drop = true
					}
				}
				if (drop || !ok) && d == 1 {
					continue
				}
				if drop {
					return fmt.Errorf("Squeeze of axis %d of size %d", k, d)
				}
				out = append(out, d)
			}
			full = out
		} else {
			if !ok {
				return errors.New("Unsqueeze without axes")
			}
			rank := len(full) + len(axes)
			out := make([]int, 0, rank)
			src := 0
			for k := range rank {
				ins := false
				for _, a := range axes {
					if int(a) == k || int(a)+rank == k {
						ins = true
					}
				}
				if ins {
					out = append(out, 1)
				} else if src < len(full) {
					out = append(out, full[src])
					src++
				}
			}
			full = out
		}
		if len(full) == 0 || full[0] != -1 {
			return errors.New("the batch dimension would move")
		}
		dims = full[1:]
	case "Reshape":
		t, err := c.in(n, 1)
		if err != nil || !t.isInt {
			return errors.New("the shape must be an int64 constant or computed from shapes")
		}
		s := t.ints
		if len(s) == 0 || len(s) > maxRank || !(s[0] == 0 || s[0] == -1 || s[0] == batchSym || (c.batch > 0 && s[0] == c.batch)) {
			return fmt.Errorf("reshape to %v: the batch must stay first", s)
		}
		infer, known := -1, 1
		for k, d := range s[1:] {
			switch {
			case d == -1 && infer < 0:
				infer = k
				dims = append(dims, 0)
			case d == 0 && k+1 < len(x.dims)+1:
				dims = append(dims, x.dims[k])
				known *= x.dims[k]
			case d > 0 && d <= maxTensorElems:
				dims = append(dims, int(d))
				known *= int(d)
			default:
				return fmt.Errorf("reshape to %v", s)
			}
		}
		if infer >= 0 {
			if known == 0 || size%known != 0 {
				return fmt.Errorf("reshape of %v to %v", x.dims, s)
			}
			dims[infer] = size / known
		}
	}
	if numElems(dims) != size {
		return fmt.Errorf("reshape of %v per sample to %v", x.dims, dims)
	}
	c.set(n, view(x, dims))
	return nil
}

// concat joins activations along axis 1 (channels or features).
func (c *compiler) concat(n *Node) error {
	if ax := attrInt(n, "axis", 0); ax != 1 {
		return fmt.Errorf("Concat of activations along axis %d: only 1", ax)
	}
	var xs []*gval
	total := 0
	for i := range n.Inputs {
		x, err := c.actIn(n, i)
		if err != nil {
			return err
		}
		if len(xs) > 0 && !slices.Equal(x.dims[1:], xs[0].dims[1:]) {
			return errors.New("Concat of values of different shapes")
		}
		xs = append(xs, x)
		total += x.dims[0]
	}
	dims := append([]int{total}, xs[0].dims[1:]...)
	y := c.act(dims)
	size := y.size()
	c.gr.steps = append(c.gr.steps, func(b int) {
		for s := range b {
			off := s * size
			for _, x := range xs {
				sz := x.size()
				copy(y.buf[off:off+sz], x.buf[s*sz:(s+1)*sz])
				off += sz
			}
		}
	})
	c.set(n, y)
	return nil
}

// shapeOp evaluates Shape, Gather, Concat, Slice and Cast of shapes at
// compile time (the batch is batchSym).
func (c *compiler) shapeOp(n *Node) error {
	ints := func(i int) ([]int64, error) {
		v, err := c.in(n, i)
		if err != nil {
			return nil, err
		}
		if !v.isInt {
			return nil, fmt.Errorf("input %q is not a shape or an int64 constant", n.Inputs[i])
		}
		return v.ints, nil
	}
	var out []int64
	switch n.Op {
	case "Shape":
		x, err := c.actIn(n, 0)
		if err != nil {
			return err
		}
		out = []int64{batchSym}
		for _, d := range x.dims {
			out = append(out, int64(d))
		}
		s, e := clampRange(attrInt(n, "start", 0), attrInt(n, "end", int64(len(out))), len(out))
		out = out[min(s, e):e]
	case "Cast":
		v, err := ints(0)
		if err != nil {
			return err
		}
		out = v
	case "Gather":
		v, err := ints(0)
		if err != nil {
			return err
		}
		idx, err := ints(1)
		if err != nil || attrInt(n, "axis", 0) != 0 {
			return errors.New("Gather of a shape needs int64 indices and axis 0")
		}
		for _, i := range idx {
			if i < 0 {
				i += int64(len(v))
			}
			if i < 0 || i >= int64(len(v)) {
				return fmt.Errorf("index %d out of a shape of rank %d", i, len(v))
			}
			out = append(out, v[i])
		}
	case "Concat":
		for i := range n.Inputs {
			v, err := ints(i)
			if err != nil {
				return err
			}
			out = append(out, v...)
		}
	case "Slice":
		v, err := ints(0)
		if err != nil {
			return err
		}
		st, err1 := ints(1)
		en, err2 := ints(2)
		if err1 != nil || err2 != nil || len(st) != 1 || len(en) != 1 || (len(n.Inputs) > 4 && n.Inputs[4] != "") {
			return errors.New("Slice of a shape over one axis without steps only")
		}
		s, e := clampRange(st[0], en[0], len(v))
		if s < e {
			out = append(out, v[s:e]...)
		}
	}
	if len(out) > maxRank {
		return fmt.Errorf("a shape of rank %d", len(out))
	}
	c.set(n, &gval{ints: out, isInt: true})
	return nil
}

// outputs picks the policy and value as Import does: by name, else by
// shape; a (log-)softmax policy is read before the softmax.
func (c *compiler) outputs(g games.Game, opts ImportOptions) error {
	A := g.NumActions()
	pname, vname := opts.PolicyOutput, opts.ValueOutput
	for _, o := range c.m.Outputs {
		v, ok := c.vals[o.Name]
		if !ok || v.konst != nil || v.isInt {
			continue
		}
		switch n := v.size(); {
		case n == A && pname == "" && len(v.dims) == 1:
			pname = o.Name
		case n == 1 && vname == "" && len(v.dims) <= 1:
			vname = o.Name
		}
	}
	pol, ok := c.vals[pname]
	if pname == "" || !ok || pol.isInt || pol.konst != nil || pol.size() != A {
		return fmt.Errorf("no policy output of %d logits (name it with --policy-output)", A)
	}
	val, ok := c.vals[vname]
	if vname == "" || !ok || val.isInt || val.konst != nil || val.size() != 1 {
		return errors.New("no value output of one value per sample (name it with --value-output)")
	}
	if !val.tanh {
		return fmt.Errorf("value output %q is not the output of a Tanh: Canopy's values lie in [-1, 1]", vname)
	}
	if pol.logit != nil {
		pol = pol.logit
	}
	c.gr.policy, c.gr.value, c.gr.polSize = pol, val, A
	return nil
}

// Name is the backend's name.
func (gr *Graph) Name() string { return "onnx-cpu" }

// Shape returns the per-sample input and policy lengths.
func (gr *Graph) Shape() (int, int) { return gr.inSize, gr.polSize }

// PreferredBatch is the batch the graph was compiled for.
func (gr *Graph) PreferredBatch() int { return min(gr.maxBatch, 64) }

// MaxBatch is the largest batch Evaluate takes.
func (gr *Graph) MaxBatch() int { return gr.maxBatch }

// Evaluate runs batch samples: planar observations in, policy logits and
// values out.
func (gr *Graph) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if batch < 1 || batch > gr.maxBatch || len(input) < batch*gr.inSize || len(policy) < batch*gr.polSize || len(value) < batch {
		return fmt.Errorf("onnx-cpu: Evaluate(batch=%d): input %d, policy %d, value %d (max batch %d, input %d, policy %d per sample)",
			batch, len(input), len(policy), len(value), gr.maxBatch, gr.inSize, gr.polSize)
	}
	gr.mu.Lock()
	defer gr.mu.Unlock()
	copy(gr.input.buf, input[:batch*gr.inSize])
	for _, s := range gr.steps {
		s(batch)
	}
	copy(policy, gr.policy.buf[:batch*gr.polSize])
	copy(value, gr.value.buf[:batch])
	// As every backend: no search goes on with a NaN or an infinity.
	return nets.CheckFinite("onnx-cpu", batch, gr.polSize, 1, policy, value)
}
