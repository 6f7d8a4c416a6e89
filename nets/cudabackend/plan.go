package cudabackend

import (
	"fmt"
	"slices"

	"github.com/canopy-go/canopy/nets"
)

// Layer kinds are nets' (one definition of the graph for every backend).
const (
	kindConv3 = nets.Conv3x3
	kindConv1 = nets.Conv1x1
	kindDense = nets.Dense
)

// bufShape is a per-sample activation shape: cells x ch, NHWC.
type bufShape struct{ cells, ch int }

func (b bufShape) size() int { return b.cells * b.ch }

// layer is one unit: out = tanh?(relu?(in*W + b + res)) with W the folded
// [k][cout] GEMM B matrix and b the folded bias.
type layer struct {
	name         string
	kind         nets.LayerKind
	in, out, res int // buffer ids; res -1 when none
	cin, cout    int
	cells, k     int // GEMM rows per sample and inner dimension
	// ld is the inner dimension as the GEMM runs it: k, rounded up to a
	// multiple of 8 for 3x3 convolutions, whose im2col rows end in zero
	// columns and whose weights in zero rows. Rows of 16-byte multiples let
	// cuBLAS use its vectorised kernels: the sequence stem's k = 9*107 =
	// 963 got an align-1 kernel 10 times slower than the other layers'
	// (H200, 2026-11-28).
	ld         int
	relu, tanh bool
	w, b       []float32 // folded weights [k][cout] and bias [cout]
}

// plan is the network as a list of layers over numbered buffers; buffer 0
// is the NHWC input.
type plan struct {
	cfg           nets.Config
	bufs          []bufShape
	layers        []*layer
	policy, value int // buffer ids of the outputs
}

// buildPlan takes net's inference graph (topology and folded weights come
// from package nets, so the GPU runs exactly the CPU's layer list).
func buildPlan(net *nets.Net) (*plan, error) {
	g := net.InferenceGraph()
	p := &plan{cfg: net.Config(), policy: g.Policy, value: g.Value}
	for _, b := range g.Buffers {
		p.bufs = append(p.bufs, bufShape{b[0], b[1]})
	}
	for _, l := range g.Layers {
		switch l.Kind {
		case kindConv3, kindConv1, kindDense:
		default:
			return nil, fmt.Errorf("cudabackend: layer %s: unsupported kind %d", l.Name, l.Kind)
		}
		ly := &layer{name: l.Name, kind: l.Kind, in: l.In, out: l.Out, res: l.Res,
			cin: l.Cin, cout: l.Cout, cells: l.Cells, k: l.K, ld: l.K, relu: l.ReLU, tanh: l.Tanh, w: l.W, b: l.B}
		if l.Kind == kindConv3 && l.K%8 != 0 {
			ly.ld = (l.K + 7) / 8 * 8
			ly.w = append(slices.Clone(l.W[:l.K*l.Cout]), make([]float32, (ly.ld-l.K)*l.Cout)...)
		}
		p.layers = append(p.layers, ly)
	}
	return p, nil
}

// slots assigns buffers to storage slots by liveness, like nets does, so
// that GPU memory is O(live activations): it returns buffer id -> slot and
// the per-sample size of each slot. The outputs get slots of their own.
func (p *plan) slots() (slot []int, per []int) {
	last := make([]int, len(p.bufs))
	for i := range last {
		last[i] = -1
	}
	for i, l := range p.layers {
		last[l.in] = i
		if l.res >= 0 {
			last[l.res] = i
		}
	}
	slot = make([]int, len(p.bufs))
	var free []int
	take := func(b int) {
		if len(free) > 0 && b != p.policy && b != p.value {
			slot[b] = free[len(free)-1]
			free = free[:len(free)-1]
		} else {
			slot[b] = len(per)
			per = append(per, 0)
		}
		per[slot[b]] = max(per[slot[b]], p.bufs[b].size())
	}
	take(0)
	for i, l := range p.layers {
		take(l.out)
		for _, b := range []int{l.in, l.res} {
			if b >= 0 && last[b] == i && b != p.policy && b != p.value {
				free = append(free, slot[b])
				last[b] = -2 // freed once even when in == res
			}
		}
	}
	return slot, per
}

// maxCols is the largest per-sample im2col matrix (cells x ld).
func (p *plan) maxCols() int {
	m := 0
	for _, l := range p.layers {
		if l.kind == kindConv3 {
			m = max(m, l.cells*l.ld)
		}
	}
	return m
}

// maxGemmInput is the largest per-sample GEMM A operand (for the reduced
// precision copy of 1x1 and dense inputs).
func (p *plan) maxGemmInput() int {
	m := 0
	for _, l := range p.layers {
		m = max(m, l.cells*l.k)
	}
	return m
}
