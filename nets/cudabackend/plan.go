package cudabackend

import (
	"fmt"
	"math"

	"github.com/canopy-go/canopy/nets"
)

type layerKind uint8

const (
	kindConv3 layerKind = iota // 3x3 same convolution: im2col then GEMM
	kindConv1                  // 1x1 convolution: GEMM over cells
	kindDense                  // fully connected over the flattened NHWC input
)

// bufShape is a per-sample activation shape: cells x ch, NHWC.
type bufShape struct{ cells, ch int }

func (b bufShape) size() int { return b.cells * b.ch }

// layer is one unit: out = tanh?(relu?(in*W + b + res)) with W the folded
// [k][cout] GEMM B matrix and b the folded bias.
type layer struct {
	name         string
	kind         layerKind
	in, out, res int // buffer ids; res -1 when none
	cin, cout    int
	cells, k     int // GEMM rows per sample and inner dimension
	relu, tanh   bool
	w, b         []float32 // folded weights [k][cout] and bias [cout]
}

// plan is the network as a list of layers over numbered buffers; buffer 0
// is the NHWC input.
type plan struct {
	cfg           nets.Config
	bufs          []bufShape
	layers        []*layer
	policy, value int // buffer ids of the outputs
}

// bnEps is nets' batch-norm epsilon (PyTorch's default).
const bnEps = 1e-5

// buildPlan mirrors nets.Net's layer list for net and folds batch norm.
func buildPlan(net *nets.Net) (*plan, error) {
	cfg := net.Config()
	p := &plan{cfg: cfg}
	hw := cfg.Height * cfg.Width
	p.bufs = []bufShape{{hw, cfg.InputPlanes}}
	used := map[string]bool{}
	param := func(name string, n int) ([]float32, error) {
		q, ok := net.Param(name)
		if !ok {
			return nil, fmt.Errorf("cudabackend: net has no tensor %q (layer list out of step with package nets)", name)
		}
		if len(q.Data) != n {
			return nil, fmt.Errorf("cudabackend: tensor %q has %d values, want %d", name, len(q.Data), n)
		}
		used[name] = true
		return q.Data, nil
	}
	var firstErr error
	add := func(kind layerKind, name, bnName string, in, cout int, relu bool, res int) *layer {
		src := p.bufs[in]
		l := &layer{name: name, kind: kind, in: in, res: res, cin: src.ch, cout: cout, relu: relu}
		switch kind {
		case kindConv3:
			l.cells, l.k = src.cells, 9*src.ch
		case kindConv1:
			l.cells, l.k = src.cells, src.ch
		case kindDense:
			l.cells, l.k = 1, src.size()
		}
		if kind == kindDense {
			p.bufs = append(p.bufs, bufShape{1, cout})
		} else {
			p.bufs = append(p.bufs, bufShape{src.cells, cout})
		}
		l.out = len(p.bufs) - 1
		p.layers = append(p.layers, l)
		if err := l.fold(param, name, bnName); err != nil && firstErr == nil {
			firstErr = err
		}
		return l
	}
	switch cfg.Head {
	case nets.HeadAlphaZero:
		x := add(kindConv3, "stem.conv", "stem.bn", 0, cfg.Channels, true, -1).out
		for i := 0; i < cfg.Blocks; i++ {
			pre := fmt.Sprintf("blocks.%d.", i)
			t := add(kindConv3, pre+"conv1", pre+"bn1", x, cfg.Channels, true, -1).out
			x = add(kindConv3, pre+"conv2", pre+"bn2", t, cfg.Channels, true, x).out
		}
		pp := add(kindConv1, "policy.conv", "policy.bn", x, cfg.PolicyFilters, true, -1).out
		p.policy = add(kindDense, "policy.fc", "", pp, cfg.PolicySize, false, -1).out
		v := add(kindConv1, "value.conv", "value.bn", x, cfg.ValueFilters, true, -1).out
		v = add(kindDense, "value.fc1", "", v, cfg.ValueHidden, true, -1).out
		vl := add(kindDense, "value.fc2", "", v, 1, false, -1)
		vl.tanh = true
		p.value = vl.out
	case nets.HeadPPO:
		x := 0
		for i, ch := range cfg.ConvChannels {
			x = add(kindConv3, fmt.Sprintf("convs.%d", i), "", x, ch, true, -1).out
		}
		x = add(kindDense, "fc", "", x, cfg.Dense, true, -1).out
		p.policy = add(kindDense, "actor", "", x, cfg.PolicySize, false, -1).out
		vl := add(kindDense, "critic", "", x, 1, false, -1)
		vl.tanh = true
		p.value = vl.out
	default:
		return nil, fmt.Errorf("cudabackend: unsupported head %q", cfg.Head)
	}
	if firstErr != nil {
		return nil, firstErr
	}
	for _, q := range net.Params() {
		if !used[q.Name] {
			return nil, fmt.Errorf("cudabackend: net tensor %q is not used by the GPU layer list (package nets changed?)", q.Name)
		}
	}
	return p, nil
}

// fold loads the layer's weights and folds batch norm into them exactly as
// nets does (in float64, rounded once to float32).
func (l *layer) fold(param func(string, int) ([]float32, error), name, bnName string) error {
	w, err := param(name+".weight", l.k*l.cout)
	if err != nil {
		return err
	}
	l.w = make([]float32, len(w))
	l.b = make([]float32, l.cout)
	if bnName == "" {
		b, err := param(name+".bias", l.cout)
		if err != nil {
			return err
		}
		copy(l.w, w)
		copy(l.b, b)
		return nil
	}
	var bn [4][]float32
	for i, s := range []string{".weight", ".bias", ".running_mean", ".running_var"} {
		if bn[i], err = param(bnName+s, l.cout); err != nil {
			return err
		}
	}
	gamma, beta, mean, variance := bn[0], bn[1], bn[2], bn[3]
	for co := 0; co < l.cout; co++ {
		scale := float64(gamma[co]) / math.Sqrt(float64(variance[co])+bnEps)
		l.b[co] = float32((0-float64(mean[co]))*scale + float64(beta[co]))
		for r := 0; r < l.k; r++ {
			l.w[r*l.cout+co] = float32(float64(w[r*l.cout+co]) * scale)
		}
	}
	return nil
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

// maxCols is the largest per-sample im2col matrix (cells x 9*cin).
func (p *plan) maxCols() int {
	m := 0
	for _, l := range p.layers {
		if l.kind == kindConv3 {
			m = max(m, l.cells*l.k)
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
