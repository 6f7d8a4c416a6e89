package onnx

import (
	"fmt"
	"math"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// build recognises the layers reaching the policy and value outputs as
// Canopy's AlphaZero ResNet or PPO CNN and returns that network with the
// graph's weights.
func (im *importer) build(g games.Game, pol, value *val) (*nets.Net, error) {
	L := im.layers
	p, v := L[pol.layer], L[value.layer]
	in := im.m.Inputs[0]
	cfg := nets.Config{Preset: "onnx", Game: g.Spec(), InputPlanes: int(in.Dims[1]), Height: int(in.Dims[2]), Width: int(in.Dims[3]),
		PolicySize: p.cout}
	mark := func(i int) *layer { return L[i] }
	// sets collects the parameter values by Canopy name.
	sets := map[string][]float32{}
	var err error
	if p.in >= 0 && p.in == v.in && L[p.in].kind == nets.Dense {
		err = im.matchPPO(&cfg, p, v, mark, sets)
	} else {
		err = im.matchAlphaZero(&cfg, p, v, mark, sets)
	}
	if err != nil {
		return nil, err
	}
	// Layers that feed neither output (auxiliary heads such as KataGo's
	// ownership) are left out.
	net, err := nets.New(cfg, 1)
	if err != nil {
		return nil, fmt.Errorf("the recognised %s network does not fit Canopy's limits: %v", cfg.Head, err)
	}
	for _, prm := range net.Params() {
		vals, ok := sets[prm.Name]
		if !ok {
			return nil, fmt.Errorf("internal error: no value for %q", prm.Name)
		}
		for i, x := range vals {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("%s: %v at index %d after folding", prm.Name, x, i)
			}
		}
		if err := prm.FromFile(vals); err != nil {
			return nil, fmt.Errorf("internal error: %v", err)
		}
	}
	net.Invalidate()
	return net, nil
}

// need checks that l is the kind of layer Canopy has at this place.
func need(l *layer, what string, kind nets.LayerKind, relu, tanh, residual bool) error {
	kinds := map[nets.LayerKind]string{nets.Conv3x3: "a 3x3 convolution", nets.Conv1x1: "a 1x1 convolution", nets.Dense: "a dense layer"}
	switch {
	case l.kind != kind:
		return fmt.Errorf("%v: Canopy's %s is %s, this is %s", l.node, what, kinds[kind], kinds[l.kind])
	case l.relu != relu:
		return fmt.Errorf("%v: Canopy's %s %s a Relu", l.node, what, map[bool]string{true: "ends with", false: "has no"}[relu])
	case l.tanh != tanh:
		return fmt.Errorf("%v: Canopy's %s %s a Tanh", l.node, what, map[bool]string{true: "ends with", false: "has no"}[tanh])
	case (l.res != noRes) != residual:
		return fmt.Errorf("%v: Canopy's %s %s a residual connection", l.node, what, map[bool]string{true: "adds", false: "has no"}[residual])
	}
	return nil
}

func (im *importer) matchAlphaZero(cfg *nets.Config, p, v *layer, mark func(int) *layer, sets map[string][]float32) error {
	cfg.Head = nets.HeadAlphaZero
	if p.in < 0 || v.in < 0 {
		return fmt.Errorf("%v: a head reads the input directly", p.node)
	}
	if err := need(p, "policy output", nets.Dense, false, false, false); err != nil {
		return err
	}
	if err := need(v, "value output", nets.Dense, false, true, false); err != nil {
		return err
	}
	pc := mark(p.in)
	if err := need(pc, "policy head convolution", nets.Conv1x1, true, false, false); err != nil {
		return err
	}
	vh := mark(v.in)
	if err := need(vh, "value hidden layer", nets.Dense, true, false, false); err != nil {
		return err
	}
	if vh.in < 0 {
		return fmt.Errorf("%v: the value head reads the input directly", vh.node)
	}
	vc := mark(vh.in)
	if err := need(vc, "value head convolution", nets.Conv1x1, true, false, false); err != nil {
		return err
	}
	if pc.in != vc.in || pc.in < 0 {
		return fmt.Errorf("%v and %v: the policy and value heads read different layers; Canopy's both read the residual tower", pc.node, vc.node)
	}
	// Walk the tower down from its top: blocks (conv1, conv2 + residual)
	// until the stem, which reads the input.
	var blocks [][2]*layer
	t := pc.in
	for {
		l := mark(t)
		if l.res == noRes {
			if err := need(l, "stem", nets.Conv3x3, true, false, false); err != nil {
				return err
			}
			if l.in != -1 {
				return fmt.Errorf("%v: Canopy's tower is a stem convolution of the input and residual blocks of two 3x3 convolutions; this layer is neither", l.node)
			}
			cfg.Channels = l.cout
			sets = convBN(sets, "stem.conv", "stem.bn", l)
			break
		}
		if err := need(l, "second convolution of a residual block", nets.Conv3x3, true, false, true); err != nil {
			return err
		}
		if l.in < 0 {
			return fmt.Errorf("%v: a residual block reads the input directly", l.node)
		}
		c1 := mark(l.in)
		if err := need(c1, "first convolution of a residual block", nets.Conv3x3, true, false, false); err != nil {
			return err
		}
		if c1.in != l.res || l.res < 0 {
			return fmt.Errorf("%v: the residual added is not the block's input", l.node)
		}
		blocks = append(blocks, [2]*layer{c1, l})
		t = l.res
	}
	cfg.Blocks = len(blocks)
	for i := range blocks {
		b := blocks[len(blocks)-1-i] // the walk went top-down
		pre := fmt.Sprintf("blocks.%d.", i)
		for j, l := range b {
			if l.cout != cfg.Channels {
				return fmt.Errorf("%v: %d channels, the stem has %d (Canopy's tower has one width)", l.node, l.cout, cfg.Channels)
			}
			convBN(sets, fmt.Sprintf("%sconv%d", pre, j+1), fmt.Sprintf("%sbn%d", pre, j+1), l)
		}
	}
	cfg.PolicyFilters, cfg.ValueFilters, cfg.ValueHidden = pc.cout, vc.cout, vh.cout
	if v.cout > 1 {
		cfg.ValuePlayers = v.cout // a per-player value head (pickOutputs checked the count)
	}
	convBN(sets, "policy.conv", "policy.bn", pc)
	convBN(sets, "value.conv", "value.bn", vc)
	dense(sets, "policy.fc", p)
	dense(sets, "value.fc1", vh)
	dense(sets, "value.fc2", v)
	return nil
}

func (im *importer) matchPPO(cfg *nets.Config, p, v *layer, mark func(int) *layer, sets map[string][]float32) error {
	cfg.Head = nets.HeadPPO
	if err := need(p, "actor", nets.Dense, false, false, false); err != nil {
		return err
	}
	if err := need(v, "critic", nets.Dense, false, true, false); err != nil {
		return err
	}
	f := mark(p.in)
	if err := need(f, "dense layer after the convolutions", nets.Dense, true, false, false); err != nil {
		return err
	}
	var convs []*layer
	for t := f.in; t >= 0; {
		l := mark(t)
		if err := need(l, "convolution", nets.Conv3x3, true, false, false); err != nil {
			return err
		}
		convs = append(convs, l)
		t = l.in
	}
	if len(convs) == 0 {
		return fmt.Errorf("%v: Canopy's PPO CNN has convolutions before its dense layer", f.node)
	}
	for i := range convs {
		l := convs[len(convs)-1-i]
		cfg.ConvChannels = append(cfg.ConvChannels, l.cout)
		w, b := foldBN(l)
		name := fmt.Sprintf("convs.%d", i)
		sets[name+".weight"], sets[name+".bias"] = w, b
	}
	cfg.Dense = f.cout
	dense(sets, "fc", f)
	dense(sets, "actor", p)
	dense(sets, "critic", v)
	if v.cout > 1 {
		cfg.ValuePlayers = v.cout // a per-player critic (pickOutputs checked the count)
	}
	return nil
}

// bnEps is the epsilon Canopy's batch norm folds with (PyTorch's).
const bnEps = 1e-5

// convBN sets a Canopy convolution (no bias) followed by batch norm from
// l: its batch norm with the convolution's bias moved into the running
// mean and a different epsilon moved into gamma; a convolution without
// batch norm (the exporter folded it) gets one that is the identity up
// to rounding (gamma = sqrt(1 + eps), variance 1) with its bias as beta.
func convBN(sets map[string][]float32, conv, bn string, l *layer) map[string][]float32 {
	n := l.cout
	gamma, beta, mean, variance := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	if l.bn == nil {
		for i := range n {
			gamma[i], variance[i] = float32(math.Sqrt(1+bnEps)), 1
			if l.b != nil {
				beta[i] = l.b[i]
			}
		}
	} else {
		copy(gamma, l.bn.gamma)
		copy(beta, l.bn.beta)
		copy(mean, l.bn.mean)
		copy(variance, l.bn.variance)
		for i := range n {
			if l.b != nil {
				mean[i] -= l.b[i] // bn(Wx + b) = gamma (Wx - (mean - b)) / s + beta
			}
			if l.bn.eps != float32(bnEps) {
				v := float64(variance[i])
				gamma[i] = float32(float64(gamma[i]) * math.Sqrt(v+bnEps) / math.Sqrt(v+float64(l.bn.eps)))
			}
		}
	}
	sets[conv+".weight"] = l.w
	sets[bn+".weight"], sets[bn+".bias"], sets[bn+".running_mean"], sets[bn+".running_var"] = gamma, beta, mean, variance
	return sets
}

// foldBN returns l's weights and bias with its batch norm folded in, for
// Canopy layers that have a bias and no batch norm.
func foldBN(l *layer) (w, b []float32) {
	b = make([]float32, l.cout)
	if l.b != nil {
		copy(b, l.b)
	}
	if l.bn == nil {
		return l.w, b
	}
	w = make([]float32, len(l.w))
	per := len(l.w) / l.cout
	for co := range l.cout {
		scale := float64(l.bn.gamma[co]) / math.Sqrt(float64(l.bn.variance[co])+float64(l.bn.eps))
		for i := range per {
			w[co*per+i] = float32(float64(l.w[co*per+i]) * scale)
		}
		b[co] = float32((float64(b[co])-float64(l.bn.mean[co]))*scale + float64(l.bn.beta[co]))
	}
	return w, b
}

// dense sets a Canopy dense layer (weight [out][in], bias) from l.
func dense(sets map[string][]float32, name string, l *layer) {
	b := make([]float32, l.cout)
	if l.b != nil {
		copy(b, l.b)
	}
	sets[name+".weight"], sets[name+".bias"] = l.w, b
}
