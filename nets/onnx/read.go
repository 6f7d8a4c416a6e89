package onnx

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/canopy-go/canopy/nets/onnx/onnxpb"
)

// Limits that keep a hostile or corrupt file from allocating without
// bound. They are checked before anything of that size is allocated.
const (
	// MaxFileSize bounds a model file (and each external data file read).
	MaxFileSize = 2 << 30
	// maxTensorElems bounds one tensor (the nets package bounds a whole
	// network to 1<<28 parameters).
	maxTensorElems = 1 << 28
	// maxTotalElems bounds all constant tensors of a model together.
	maxTotalElems = 1 << 29
	maxRank       = 8
	maxNodes      = 1 << 16
)

// Opset range this package reads (default domain).
const (
	MinOpset = 11
	MaxOpset = 21
)

// Model is a decoded ONNX model: its graph in topological order with
// every constant tensor resolved (initializers, Constant nodes and
// external data), and its metadata.
type Model struct {
	Opset    int
	Producer string
	Metadata map[string]string
	Inputs   []ValueInfo // graph inputs that are not initializers
	Outputs  []ValueInfo
	Nodes    []*Node            // topological order
	Consts   map[string]*Tensor // initializers and Constant node outputs by name
}

// ValueInfo is a graph input or output: its name and shape. A dimension
// is -1 when symbolic (such as a dynamic batch) or absent.
type ValueInfo struct {
	Name     string
	ElemType int32
	Dims     []int64
	DimNames []string // symbolic names where given
}

// Node is one operator application. Index is its position in the file's
// node list (what errors name); the Model lists nodes in topological
// order, which may differ.
type Node struct {
	Index   int
	Name    string
	Op      string
	Inputs  []string // "" marks an omitted optional input
	Outputs []string
	Attrs   map[string]*onnxpb.AttributeProto
}

func (n *Node) String() string {
	name := n.Name
	if name == "" {
		name = "(unnamed)"
	}
	return fmt.Sprintf("node #%d %q (%s)", n.Index, name, printable(n.Op))
}

// printable returns s when it is a short run of printable ASCII, else
// s quoted: strings from a file go into one-line error messages.
func printable(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "..."
	}
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			return strconv.Quote(s)
		}
	}
	return s
}

// Tensor is a constant: float32 data or int64 data (shapes, axes).
type Tensor struct {
	Name string
	Dims []int
	F32  []float32 // data_type FLOAT
	I64  []int64   // data_type INT64 or INT32
}

// Size is the number of elements.
func (t *Tensor) Size() int { return numElems(t.Dims) }

func numElems(d []int) int {
	n := 1
	for _, v := range d {
		n *= v
	}
	return n
}

// ErrNotONNX is wrapped by errors for bytes that do not parse as an ONNX
// model at all.
var ErrNotONNX = errors.New("not an ONNX model")

// ReadFile reads and decodes the model at path; external data files are
// looked up in path's folder.
func ReadFile(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxFileSize {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d-byte limit of a model file", path, st.Size(), int64(MaxFileSize))
	}
	buf, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	m, err := Decode(buf, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Decode parses and validates an ONNX model. dir is the folder external
// data files are resolved against; "" refuses external data. Every error
// says what is wrong and where (tensor, node and position); malformed
// input never panics.
func Decode(buf []byte, dir string) (*Model, error) {
	var mp onnxpb.ModelProto
	if err := (proto.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(buf, &mp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotONNX, err)
	}
	g := mp.GetGraph()
	if g == nil || mp.GetIrVersion() == 0 {
		return nil, fmt.Errorf("%w: no graph or no ir_version (a truncated or foreign file?)", ErrNotONNX)
	}
	m := &Model{Producer: printable(strings.TrimSpace(mp.GetProducerName() + " " + mp.GetProducerVersion())),
		Metadata: map[string]string{}, Consts: map[string]*Tensor{}}
	for _, p := range mp.GetMetadataProps() {
		m.Metadata[p.GetKey()] = p.GetValue()
	}
	for _, os := range mp.GetOpsetImport() {
		if d := os.GetDomain(); d == "" || d == "ai.onnx" {
			m.Opset = int(os.GetVersion())
		}
	}
	if m.Opset < MinOpset || m.Opset > MaxOpset {
		return nil, fmt.Errorf("opset %d of the default domain: Canopy reads opsets %d-%d (re-export with opset_version=17)", m.Opset, MinOpset, MaxOpset)
	}
	if len(g.GetNode()) > maxNodes {
		return nil, fmt.Errorf("%d nodes, more than the %d limit", len(g.GetNode()), maxNodes)
	}
	total := 0
	addConst := func(t *Tensor, where string) error {
		if t.Name == "" {
			return fmt.Errorf("%s: a tensor without a name", where)
		}
		if _, dup := m.Consts[t.Name]; dup {
			return fmt.Errorf("%s: tensor %q defined twice", where, t.Name)
		}
		total += t.Size()
		if total > maxTotalElems {
			return fmt.Errorf("%s: constant tensors hold more than %d values in all", where, maxTotalElems)
		}
		m.Consts[t.Name] = t
		return nil
	}
	for i, tp := range g.GetInitializer() {
		t, err := decodeTensor(tp, dir)
		if err != nil {
			return nil, fmt.Errorf("initializer #%d: %w", i, err)
		}
		if err := addConst(t, fmt.Sprintf("initializer #%d", i)); err != nil {
			return nil, err
		}
	}
	for _, vi := range g.GetInput() {
		if _, isConst := m.Consts[vi.GetName()]; isConst {
			continue // old exporters list initializers as inputs too
		}
		v, err := valueInfo(vi)
		if err != nil {
			return nil, fmt.Errorf("graph input: %w", err)
		}
		m.Inputs = append(m.Inputs, v)
	}
	for _, vi := range g.GetOutput() {
		v, err := valueInfo(vi)
		if err != nil {
			return nil, fmt.Errorf("graph output: %w", err)
		}
		m.Outputs = append(m.Outputs, v)
	}
	nodes := make([]*Node, len(g.GetNode()))
	for i, np := range g.GetNode() {
		n := &Node{Index: i, Name: np.GetName(), Op: np.GetOpType(), Inputs: np.GetInput(), Outputs: np.GetOutput(),
			Attrs: map[string]*onnxpb.AttributeProto{}}
		if d := np.GetDomain(); d != "" && d != "ai.onnx" {
			return nil, fmt.Errorf("%v: operator domain %q: Canopy reads only the default ONNX domain", n, d)
		}
		for _, a := range np.GetAttribute() {
			n.Attrs[a.GetName()] = a
		}
		nodes[i] = n
		if n.Op == "Constant" {
			t, err := constantValue(n, dir)
			if err != nil {
				return nil, err
			}
			if err := addConst(t, n.String()); err != nil {
				return nil, err
			}
		}
	}
	var err error
	if m.Nodes, err = topoSort(nodes, m); err != nil {
		return nil, err
	}
	return m, nil
}

func valueInfo(vi *onnxpb.ValueInfoProto) (ValueInfo, error) {
	v := ValueInfo{Name: vi.GetName()}
	if v.Name == "" {
		return v, errors.New("a value without a name")
	}
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		return v, fmt.Errorf("%q is not a tensor", v.Name)
	}
	v.ElemType = tt.GetElemType()
	dims := tt.GetShape().GetDim()
	if len(dims) > maxRank {
		return v, fmt.Errorf("%q has rank %d, more than %d", v.Name, len(dims), maxRank)
	}
	for _, d := range dims {
		n := int64(-1)
		if _, ok := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); ok {
			n = d.GetDimValue()
			if n < 0 || n > maxTensorElems {
				return v, fmt.Errorf("%q has dimension %d", v.Name, n)
			}
		}
		v.Dims = append(v.Dims, n)
		v.DimNames = append(v.DimNames, d.GetDimParam())
	}
	return v, nil
}

// constantValue decodes a Constant node's value attribute (a tensor, or a
// float/int scalar or list).
func constantValue(n *Node, dir string) (*Tensor, error) {
	if len(n.Outputs) != 1 {
		return nil, fmt.Errorf("%v: a Constant needs one output", n)
	}
	var t *Tensor
	switch {
	case n.Attrs["value"] != nil:
		tp := n.Attrs["value"].GetT()
		if tp == nil {
			return nil, fmt.Errorf("%v: value attribute holds no tensor", n)
		}
		var err error
		if t, err = decodeTensor(tp, dir); err != nil {
			return nil, fmt.Errorf("%v: %w", n, err)
		}
	case n.Attrs["value_float"] != nil:
		t = &Tensor{F32: []float32{n.Attrs["value_float"].GetF()}}
	case n.Attrs["value_floats"] != nil:
		fs := n.Attrs["value_floats"].GetFloats()
		t = &Tensor{Dims: []int{len(fs)}, F32: fs}
	case n.Attrs["value_int"] != nil:
		t = &Tensor{I64: []int64{n.Attrs["value_int"].GetI()}}
	case n.Attrs["value_ints"] != nil:
		is := n.Attrs["value_ints"].GetInts()
		t = &Tensor{Dims: []int{len(is)}, I64: is}
	default:
		return nil, fmt.Errorf("%v: a Constant without a tensor, float or int value (sparse and string constants are not supported)", n)
	}
	for _, v := range t.F32 {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("%v: constant holds %v", n, v)
		}
	}
	t.Name = n.Outputs[0]
	return t, nil
}

// decodeTensor checks a tensor's shape and data and decodes it. Floats
// must be finite.
func decodeTensor(tp *onnxpb.TensorProto, dir string) (*Tensor, error) {
	if tp == nil {
		return nil, errors.New("no tensor")
	}
	t := &Tensor{Name: tp.GetName()}
	if len(tp.GetDims()) > maxRank {
		return nil, fmt.Errorf("tensor %q has rank %d, more than %d", t.Name, len(tp.GetDims()), maxRank)
	}
	n := 1
	for _, d := range tp.GetDims() {
		if d < 0 {
			return nil, fmt.Errorf("tensor %q has shape %v: a negative dimension (a corrupt file?)", t.Name, tp.GetDims())
		}
		if d > maxTensorElems || (d > 0 && n > maxTensorElems/int(d)) {
			return nil, fmt.Errorf("tensor %q has shape %v: more than %d values (a corrupt file?)", t.Name, tp.GetDims(), maxTensorElems)
		}
		n *= int(d)
		t.Dims = append(t.Dims, int(d))
	}
	raw := tp.GetRawData()
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		var err error
		if raw, err = externalData(tp, dir, n); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", t.Name, err)
		}
	}
	switch dt := onnxpb.TensorProto_DataType(tp.GetDataType()); dt {
	case onnxpb.TensorProto_FLOAT:
		switch {
		case raw != nil || tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL:
			if len(raw) != 4*n {
				return nil, fmt.Errorf("tensor %q: %d bytes of data for shape %v (%d floats)", t.Name, len(raw), t.Dims, n)
			}
			t.F32 = make([]float32, n)
			for i := range t.F32 {
				t.F32[i] = math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
			}
		default:
			if len(tp.GetFloatData()) != n {
				return nil, fmt.Errorf("tensor %q: %d values for shape %v (%d)", t.Name, len(tp.GetFloatData()), t.Dims, n)
			}
			t.F32 = tp.GetFloatData()
		}
		for i, v := range t.F32 {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("tensor %q holds %v at index %d (a diverged or corrupt network)", t.Name, v, i)
			}
		}
	case onnxpb.TensorProto_INT64, onnxpb.TensorProto_INT32:
		size := 8
		if dt == onnxpb.TensorProto_INT32 {
			size = 4
		}
		switch {
		case raw != nil:
			if len(raw) != size*n {
				return nil, fmt.Errorf("tensor %q: %d bytes of data for shape %v (%d %v)", t.Name, len(raw), t.Dims, n, dt)
			}
			t.I64 = make([]int64, n)
			for i := range t.I64 {
				var u uint64
				for b := size - 1; b >= 0; b-- {
					u = u<<8 | uint64(raw[size*i+b])
				}
				if size == 4 {
					t.I64[i] = int64(int32(uint32(u)))
				} else {
					t.I64[i] = int64(u)
				}
			}
		case dt == onnxpb.TensorProto_INT64:
			if len(tp.GetInt64Data()) != n {
				return nil, fmt.Errorf("tensor %q: %d values for shape %v (%d)", t.Name, len(tp.GetInt64Data()), t.Dims, n)
			}
			t.I64 = tp.GetInt64Data()
		default:
			if len(tp.GetInt32Data()) != n {
				return nil, fmt.Errorf("tensor %q: %d values for shape %v (%d)", t.Name, len(tp.GetInt32Data()), t.Dims, n)
			}
			t.I64 = make([]int64, n)
			for i, v := range tp.GetInt32Data() {
				t.I64[i] = int64(v)
			}
		}
	case onnxpb.TensorProto_BOOL: // flags such as Dropout's training_mode
		t.I64 = make([]int64, 0, min(n, len(raw)+len(tp.GetInt32Data())))
		switch {
		case raw != nil:
			if len(raw) != n {
				return nil, fmt.Errorf("tensor %q: %d bytes of data for shape %v (%d booleans)", t.Name, len(raw), t.Dims, n)
			}
			for _, b := range raw {
				t.I64 = append(t.I64, int64(b))
			}
		default:
			if len(tp.GetInt32Data()) != n {
				return nil, fmt.Errorf("tensor %q: %d values for shape %v (%d)", t.Name, len(tp.GetInt32Data()), t.Dims, n)
			}
			for _, v := range tp.GetInt32Data() {
				t.I64 = append(t.I64, int64(v))
			}
		}
	default:
		return nil, fmt.Errorf("tensor %q has data type %v: Canopy reads FLOAT weights and INT64/INT32/BOOL shapes and flags (convert the model to float32)", t.Name, dt)
	}
	return t, nil
}

// externalData reads the n-element payload of a tensor stored outside
// the model (ONNX external data: location, offset, length). The location
// must be a relative path inside dir, with no "..", and stay inside dir
// after symbolic links are resolved.
func externalData(tp *onnxpb.TensorProto, dir string, n int) ([]byte, error) {
	kv := map[string]string{}
	for _, e := range tp.GetExternalData() {
		kv[e.GetKey()] = e.GetValue()
	}
	loc := kv["location"]
	if dir == "" {
		return nil, fmt.Errorf("external data %q: this model was given as bytes, without a folder to read external data from", loc)
	}
	if loc == "" || filepath.IsAbs(loc) || strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, `\`) || !filepath.IsLocal(loc) {
		return nil, fmt.Errorf("external data location %q: must be a relative path inside the model's folder (no absolute paths, no ..)", loc)
	}
	for _, part := range strings.FieldsFunc(loc, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return nil, fmt.Errorf("external data location %q: must not contain ..", loc)
		}
	}
	elem := 4
	if onnxpb.TensorProto_DataType(tp.GetDataType()) == onnxpb.TensorProto_INT64 {
		elem = 8
	}
	want := int64(n) * int64(elem)
	var off int64
	if s, ok := kv["offset"]; ok {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("external data %q: bad offset %q", loc, s)
		}
		off = v
	}
	if s, ok := kv["length"]; ok {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v != want {
			return nil, fmt.Errorf("external data %q: length %q, but the tensor's shape needs %d bytes", loc, s, want)
		}
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("external data %q: %v", loc, err)
	}
	path, err := filepath.EvalSymlinks(filepath.Join(root, loc))
	if err != nil {
		return nil, fmt.Errorf("external data %q: %v", loc, err)
	}
	if rel, err := filepath.Rel(root, path); err != nil || !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("external data %q resolves to %s, outside the model's folder %s", loc, path, root)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("external data: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("external data: %v", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("external data %q is not a regular file", loc)
	}
	if off > st.Size() || want > st.Size()-off {
		return nil, fmt.Errorf("external data %q: %d bytes at offset %d, but the file has %d bytes", loc, want, off, st.Size())
	}
	buf := make([]byte, want)
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("external data %q: %v", loc, err)
	}
	return buf, nil
}

// topoSort orders nodes so that every input is produced before it is
// read (Kahn's algorithm; ties keep file order). An input that nothing
// produces, a value produced twice and a cycle are errors.
func topoSort(nodes []*Node, m *Model) ([]*Node, error) {
	producer := map[string]int{}
	for _, in := range m.Inputs {
		producer[in.Name] = -1
	}
	for name := range m.Consts {
		producer[name] = -1
	}
	for i, n := range nodes {
		if n.Op == "Constant" {
			continue
		}
		for _, o := range n.Outputs {
			if o == "" {
				continue
			}
			if p, dup := producer[o]; dup {
				where := "a graph input or constant"
				if p >= 0 {
					where = nodes[p].String()
				}
				return nil, fmt.Errorf("%v: output %q is already produced by %s", n, o, where)
			}
			producer[o] = i
		}
	}
	indeg := make([]int, len(nodes))
	users := make([][]int, len(nodes))
	for i, n := range nodes {
		for _, in := range n.Inputs {
			if in == "" {
				continue
			}
			p, ok := producer[in]
			if !ok {
				return nil, fmt.Errorf("%v: input %q is not a graph input, a constant or any node's output", n, in)
			}
			if p >= 0 {
				indeg[i]++
				users[p] = append(users[p], i)
			}
		}
	}
	var order []*Node
	ready := &intHeap{}
	for i := range nodes {
		if indeg[i] == 0 {
			heap.Push(ready, i) // smallest index first: an acyclic file keeps its order
		}
	}
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		order = append(order, nodes[i])
		for _, u := range users[i] {
			if indeg[u]--; indeg[u] == 0 {
				heap.Push(ready, u)
			}
		}
	}
	if len(order) < len(nodes) {
		for i, n := range nodes {
			if indeg[i] > 0 {
				return nil, fmt.Errorf("the graph has a cycle: %v is on a cycle or depends on one", n)
			}
		}
	}
	for _, o := range m.Outputs {
		if _, ok := producer[o.Name]; !ok {
			return nil, fmt.Errorf("graph output %q is not produced by any node", o.Name)
		}
	}
	return order, nil
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
