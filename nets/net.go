package nets

import (
	"fmt"
	"math"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/kernels"
)

// bufShape is the per-sample shape of an activation: cells (board squares,
// 1 after a fully connected layer) x ch channels, stored NHWC (cell major).
type bufShape struct{ cells, ch int }

func (b bufShape) size() int { return b.cells * b.ch }

type unitKind uint8

const (
	kindConv3 unitKind = iota // 3x3 same convolution over the board
	kindConv1                 // 1x1 convolution (a GEMM over cells)
	kindDense                 // fully connected over the flattened input
)

// bnParams is a batch-norm layer's parameters and running statistics.
type bnParams struct {
	gamma, beta, mean, variance *Param
}

// bnEps and bnMomentum follow PyTorch's BatchNorm2d defaults.
const (
	bnEps      = 1e-5
	bnMomentum = 0.1
)

// unit is one layer step: out = tanh?(relu?(bn?(W*in + b) + residual)).
// Every network in the package is a list of units over numbered activation
// buffers; buffer 0 is the NHWC input.
type unit struct {
	kind     unitKind
	in, out  int // buffer ids
	res      int // residual buffer id added before the ReLU, or -1
	cin      int // input channels (per cell) of the weights
	cout     int
	cells    int // GEMM rows per sample: board cells for convolutions, 1 for dense
	k        int // GEMM inner dimension
	w, b     *Param
	bn       *bnParams
	relu     bool
	tanh     bool
	foldW    []float32 // inference weights with batch norm folded in
	foldB    []float32 // inference bias with batch norm folded in
	flopsPer int64     // multiply-adds per sample times 2
}

// pointwise reports whether u is a 3x3 same convolution over a board of
// one cell (the flat observations of Sushi Go's views): every tap but the
// centre falls on the zero padding, so it is the GEMM of the centre tap's
// weights (see gemmW), a ninth of the 3x3 products and a sixteenth of
// Winograd's. Its weights keep their 3x3 shape: the other taps get zero
// gradient (weight decay still shrinks them) and files, exports and the
// CUDA backend see the same layer.
func (u *unit) pointwise() bool { return u.kind == kindConv3 && u.cells == 1 }

// spatial reports whether u runs as a 3x3 convolution (Winograd or
// im2col); the other units run as one GEMM (gemmW).
func (u *unit) spatial() bool { return u.kind == kindConv3 && u.cells > 1 }

// gemmW returns the inner dimension and the weight matrix of u's GEMM for
// weights (or their gradient) w in u's layout: all of w for dense and 1x1
// units, rows [4*cin, 5*cin) of the [9*cin, cout] matrix (the centre tap,
// kh = kw = 1) for a pointwise 3x3 unit.
func (u *unit) gemmW(w []float32) (k int, wk []float32) {
	if u.pointwise() {
		w = w[4*u.cin*u.cout : 5*u.cin*u.cout]
	}
	return u.gemmK(), w
}

// gemmK is gemmW's inner dimension: cin for a pointwise unit, else u.k.
func (u *unit) gemmK() int {
	if u.pointwise() {
		return u.cin
	}
	return u.k
}

// Net is a policy-value network: its parameters, its layer list, and the
// scratch memory of inference and training.
//
// A Net is not safe for concurrent use: Forward, ForwardTrain and Backward
// share scratch buffers. Give each goroutine its own Clone, or use a
// Backend, which serialises calls.
type Net struct {
	cfg    Config
	params []*Param
	units  []*unit
	bufs   []bufShape
	policy int // buffer id of the policy logits
	value  int // buffer id of the value

	version, folded uint64 // inference weights are refolded when they differ
	inf             inferScratch
	tr              trainScratch
	wino            *winoState // nil: 3x3 convolutions by im2col (conv_winograd.go)
	bf16            *bf16State // nil: inference in float32 (precision.go)
	// team is the thread budget of inference (SetThreads); the zero Team
	// is the kernels' package default.
	team kernels.Team
}

// SetThreads sets how many goroutines (the caller's included) one
// Forward call may use: a batch is sliced over them, and a call on one
// slice splits its kernels over what is left. n <= 0 restores the
// kernels' package default (kernels.SetThreads). The budget is this
// network's alone (the cpu backend's threads= option sets it): other
// networks in the process keep theirs. Training is not affected. Like
// SetPrecision, it must not race with Forward.
func (n *Net) SetThreads(threads int) { n.team = kernels.NewTeam(threads) }

// Threads returns the thread budget of Forward (see SetThreads).
func (n *Net) Threads() int { return n.team.Threads() }

// New builds a network for cfg with weights drawn from seed: He-normal
// convolution and dense weights, zero biases, batch norm at identity
// (gamma 1, beta 0, running mean 0, running variance 1).
func New(cfg Config, seed uint64) (*Net, error) {
	if err := cfg.Normalize(); err != nil {
		return nil, err
	}
	n := &Net{cfg: cfg, version: 1}
	n.build()
	rng := games.NewRand(seed)
	for _, u := range n.units {
		fanIn := float64(u.k)
		std := math.Sqrt(2 / fanIn)
		if u.tanh || u.out == n.policy {
			std = math.Sqrt(1 / fanIn) // output layers: unit-variance logits
		}
		for i := range u.w.Data {
			u.w.Data[i] = float32(rng.NormFloat64() * std)
		}
		if u.bn != nil {
			for i := range u.bn.gamma.Data {
				u.bn.gamma.Data[i] = 1
				u.bn.variance.Data[i] = 1
			}
		}
	}
	return n, nil
}

// Config returns the network's (normalised) configuration.
func (n *Net) Config() Config {
	c := n.cfg
	c.ConvChannels = append([]int(nil), c.ConvChannels...)
	return c
}

// Params returns every parameter and buffer in a fixed order (the order
// of files). The slice is shared; do not modify it.
func (n *Net) Params() []*Param { return n.params }

// Param returns the parameter called name.
func (n *Net) Param(name string) (*Param, bool) {
	for _, p := range n.params {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// NumParams counts trainable parameters (running statistics excluded).
func (n *Net) NumParams() int {
	t := 0
	for _, p := range n.params {
		if p.Grad != nil {
			t += len(p.Data)
		}
	}
	return t
}

// FLOPs is the number of floating-point operations (2 per multiply-add)
// of one evaluation, counting the convolutions and dense layers as they
// run (a 3x3 convolution over a board of one cell: its centre tap).
func (n *Net) FLOPs() int64 {
	var f int64
	for _, u := range n.units {
		f += u.flopsPer
	}
	return f
}

// InputSize and PolicySize are the per-sample lengths Forward expects.
func (n *Net) InputSize() int  { return n.cfg.InputSize() }
func (n *Net) PolicySize() int { return n.cfg.PolicySize }

// ValueSize is the number of value outputs per sample (Config.ValueSize):
// 1 for the scalar head, ValuePlayers for a per-player head.
func (n *Net) ValueSize() int { return n.cfg.ValueSize() }

// Invalidate tells the net that parameter Data changed outside the
// package's own training and loading code, so inference refolds it.
func (n *Net) Invalidate() { n.version++ }

// Clone returns an independent copy with the same weights and no scratch.
func (n *Net) Clone() *Net {
	c := &Net{cfg: n.Config(), version: 1}
	c.build()
	for i, p := range n.params {
		copy(c.params[i].Data, p.Data)
	}
	return c
}

// CopyFrom sets n's parameters and buffers to src's. Both must have the
// same architecture.
func (n *Net) CopyFrom(src *Net) error {
	if err := n.sameShape(src); err != nil {
		return err
	}
	for i, p := range src.params {
		copy(n.params[i].Data, p.Data)
	}
	n.version++
	return nil
}

// Polyak moves n towards src: p = decay*p + (1-decay)*src.p for every
// parameter and batch-norm running statistic. It keeps n as an
// exponential moving average of src's weights (decay near 1, e.g. 0.999).
func (n *Net) Polyak(src *Net, decay float64) error {
	if err := n.sameShape(src); err != nil {
		return err
	}
	d, s := float32(decay), float32(1-decay)
	for i, p := range src.params {
		dst := n.params[i].Data
		for j, v := range p.Data {
			dst[j] = d*dst[j] + s*v
		}
	}
	n.version++
	return nil
}

func (n *Net) sameShape(src *Net) error {
	if len(n.params) != len(src.params) {
		return fmt.Errorf("nets: architectures differ (%d vs %d tensors)", len(n.params), len(src.params))
	}
	for i, p := range src.params {
		if n.params[i].Name != p.Name || len(n.params[i].Data) != len(p.Data) {
			return fmt.Errorf("nets: architectures differ at tensor %q", p.Name)
		}
	}
	return nil
}

// build creates the layer list and parameters for n.cfg.
func (n *Net) build() {
	c := &n.cfg
	hw := c.Height * c.Width
	n.bufs = []bufShape{{hw, c.InputPlanes}}
	newBuf := func(s bufShape) int { n.bufs = append(n.bufs, s); return len(n.bufs) - 1 }
	add := func(kind unitKind, name, bnName string, in int, cout int, relu bool, res int) *unit {
		src := n.bufs[in]
		u := &unit{kind: kind, in: in, res: res, cin: src.ch, cout: cout, relu: relu}
		bias := bnName == ""
		switch kind {
		case kindConv3:
			u.cells, u.k = src.cells, 9*src.ch
			u.w = newParam(name+".weight", []int{cout, src.ch, 3, 3}, true, true, layoutConv)
			u.w.d0, u.w.d1, u.w.d2 = cout, src.ch, 3
			u.out = newBuf(bufShape{src.cells, cout})
		case kindConv1:
			u.cells, u.k = src.cells, src.ch
			u.w = newParam(name+".weight", []int{cout, src.ch, 1, 1}, true, true, layoutConv)
			u.w.d0, u.w.d1, u.w.d2 = cout, src.ch, 1
			u.out = newBuf(bufShape{src.cells, cout})
		case kindDense:
			u.cells, u.k = 1, src.size()
			u.w = newParam(name+".weight", []int{cout, src.size()}, true, true, layoutDense)
			u.w.d0, u.w.d1, u.w.d2 = cout, src.ch, src.cells
			u.out = newBuf(bufShape{1, cout})
		}
		n.params = append(n.params, u.w)
		if bias {
			u.b = newParam(name+".bias", []int{cout}, true, false, layoutPlain)
			n.params = append(n.params, u.b)
		} else {
			u.bn = &bnParams{
				gamma:    newParam(bnName+".weight", []int{cout}, true, false, layoutPlain),
				beta:     newParam(bnName+".bias", []int{cout}, true, false, layoutPlain),
				mean:     newParam(bnName+".running_mean", []int{cout}, false, false, layoutPlain),
				variance: newParam(bnName+".running_var", []int{cout}, false, false, layoutPlain),
			}
			n.params = append(n.params, u.bn.gamma, u.bn.beta, u.bn.mean, u.bn.variance)
		}
		u.flopsPer = 2 * int64(u.cells) * int64(u.gemmK()) * int64(cout)
		u.foldW = make([]float32, len(u.w.Data))
		u.foldB = make([]float32, cout)
		n.units = append(n.units, u)
		return u
	}
	switch c.Head {
	case HeadAlphaZero:
		x := add(kindConv3, "stem.conv", "stem.bn", 0, c.Channels, true, -1).out
		for i := 0; i < c.Blocks; i++ {
			p := fmt.Sprintf("blocks.%d.", i)
			t := add(kindConv3, p+"conv1", p+"bn1", x, c.Channels, true, -1).out
			x = add(kindConv3, p+"conv2", p+"bn2", t, c.Channels, true, x).out
		}
		pp := add(kindConv1, "policy.conv", "policy.bn", x, c.PolicyFilters, true, -1).out
		n.policy = add(kindDense, "policy.fc", "", pp, c.PolicySize, false, -1).out
		v := add(kindConv1, "value.conv", "value.bn", x, c.ValueFilters, true, -1).out
		v = add(kindDense, "value.fc1", "", v, c.ValueHidden, true, -1).out
		vu := add(kindDense, "value.fc2", "", v, c.ValueSize(), false, -1)
		vu.tanh = true
		n.value = vu.out
	case HeadPPO:
		x := 0
		for i, ch := range c.ConvChannels {
			x = add(kindConv3, fmt.Sprintf("convs.%d", i), "", x, ch, true, -1).out
		}
		x = add(kindDense, "fc", "", x, c.Dense, true, -1).out
		n.policy = add(kindDense, "actor", "", x, c.PolicySize, false, -1).out
		vu := add(kindDense, "critic", "", x, c.ValueSize(), false, -1)
		vu.tanh = true
		n.value = vu.out
	}
}

// fold computes the inference weights: batch norm with running statistics
// folded into the preceding convolution, scale = gamma/sqrt(var+eps),
// W' = W*scale per output channel, b' = (b-mean)*scale + beta.
func (n *Net) fold() {
	for _, u := range n.units {
		if u.bn == nil {
			copy(u.foldW, u.w.Data)
			copy(u.foldB, u.b.Data)
			continue
		}
		for co := 0; co < u.cout; co++ {
			scale := float64(u.bn.gamma.Data[co]) / math.Sqrt(float64(u.bn.variance.Data[co])+bnEps)
			b := 0.0
			if u.b != nil {
				b = float64(u.b.Data[co])
			}
			u.foldB[co] = float32((b-float64(u.bn.mean.Data[co]))*scale + float64(u.bn.beta.Data[co]))
			for r := 0; r < u.k; r++ {
				u.foldW[r*u.cout+co] = float32(float64(u.w.Data[r*u.cout+co]) * scale)
			}
		}
	}
	n.folded = n.version
}

// inferScratch holds inference activations. Buffers share slots when
// their lifetimes do not overlap.
type inferScratch struct {
	batch int         // capacity in samples
	slot  []int       // buffer id -> slot index (-1: caller memory)
	slots [][]float32 // per-slot storage for batch samples
	per   []int       // per-sample size of each slot
	part  forwardPart // the batch-sliced call in progress (Forward)
}

// planSlots assigns inference buffers to storage slots by liveness.
func (n *Net) planSlots() {
	s := &n.inf
	last := make([]int, len(n.bufs))
	for i := range last {
		last[i] = -1
	}
	for i, u := range n.units {
		last[u.in] = i
		if u.res >= 0 {
			last[u.res] = i
		}
	}
	s.slot = make([]int, len(n.bufs))
	var free []int
	take := func(b int) {
		if b == n.policy || b == n.value {
			s.slot[b] = -1
			return
		}
		if len(free) > 0 {
			s.slot[b] = free[len(free)-1]
			free = free[:len(free)-1]
		} else {
			s.slot[b] = len(s.per)
			s.per = append(s.per, 0)
		}
		s.per[s.slot[b]] = max(s.per[s.slot[b]], n.bufs[b].size())
	}
	take(0)
	for i, u := range n.units {
		take(u.out)
		for _, b := range []int{u.in, u.res} {
			if b >= 0 && last[b] == i && s.slot[b] >= 0 {
				free = append(free, s.slot[b])
				last[b] = -2 // freed once even when in == res
			}
		}
	}
}

// Reserve sizes the inference scratch for batches up to maxBatch so that
// Forward does not allocate afterwards.
func (n *Net) Reserve(maxBatch int) {
	s := &n.inf
	if s.slot == nil {
		n.planSlots()
	}
	if maxBatch <= s.batch {
		return
	}
	s.slots = make([][]float32, len(s.per))
	for i, p := range s.per {
		s.slots[i] = make([]float32, maxBatch*p)
	}
	s.batch = maxBatch
}

// nchwToNHWC converts batch planar samples (planes x cells) to NHWC.
// It writes each output row whole, four cells at a time from four
// adjacent values of every plane: 2.2x faster on Sequence's 107 x 100
// inputs than walking the planes with strided stores (1.4x on Connect
// Four's 3 x 42), which made a Sequence Forward 1.5-2.6% faster. The
// output rows resliced to one length and a running input index take 12%
// of its instructions off (BenchmarkNCHWToNHWC under cachegrind).
func nchwToNHWC(batch, planes, cells int, src, dst []float32) {
	for b := 0; b < batch; b++ {
		in := src[b*planes*cells : (b+1)*planes*cells]
		out := dst[b*planes*cells : (b+1)*planes*cells]
		s := 0
		for ; s+4 <= cells; s += 4 {
			o0 := out[s*planes : (s+1)*planes]
			o1 := out[(s+1)*planes : (s+2)*planes]
			o2 := out[(s+2)*planes : (s+3)*planes]
			o3 := out[(s+3)*planes : (s+4)*planes]
			o1, o2, o3 = o1[:len(o0)], o2[:len(o0)], o3[:len(o0)] // one length: no bounds checks on the stores
			i := s
			for c := range o0 {
				r := in[i : i+4 : i+4]
				o0[c], o1[c], o2[c], o3[c] = r[0], r[1], r[2], r[3]
				i += cells
			}
		}
		for ; s < cells; s++ {
			o := out[s*planes : (s+1)*planes]
			for c := range o {
				o[c] = in[c*cells+s]
			}
		}
	}
}

// Forward evaluates batch samples for inference. input holds batch planar
// observations (InputPlanes x Height x Width each, as games.State.Observation
// writes them); policy receives batch x PolicySize raw logits and value
// batch x ValueSize values in [-1, 1] (one per sample for the scalar
// head; ValuePlayers per sample, mover first, for a per-player head). Batch norm uses the running statistics (folded
// into the convolutions). After Reserve(maxBatch), or one call at the
// largest batch, Forward allocates nothing. Slices that are too short are a
// programming error and panic; Backend.Evaluate checks and returns errors.
func (n *Net) Forward(batch int, input, policy, value []float32) {
	if batch <= 0 {
		return
	}
	if len(input) < batch*n.InputSize() || len(policy) < batch*n.PolicySize() || len(value) < batch*n.cfg.ValueSize() {
		panic(fmt.Sprintf("nets: Forward(batch=%d): input %d (want %d), policy %d (want %d), value %d (want %d)", batch,
			len(input), batch*n.InputSize(), len(policy), batch*n.PolicySize(), len(value), batch*n.cfg.ValueSize()))
	}
	if n.folded != n.version {
		n.fold()
	}
	n.prepareWinograd()
	n.prepareBF16()
	n.Reserve(batch)
	s := &n.inf
	if parts := n.forwardParts(batch); parts > 1 {
		s.part = forwardPart{n: n, batch: batch, parts: parts, input: input, policy: policy, value: value}
		n.team.Parallel(parts, &s.part)
		s.part = forwardPart{} // drop references to the caller's slices
		return
	}
	n.forwardRows(0, batch, input, policy, value)
}

// forwardMinRows is the fewest samples a slice of a batch-sliced Forward
// gets. Slicing was measured faster than splitting each kernel call at
// batches 16 and 256 (docs/BENCHMARKS.md); that it still pays at 2 to 8
// samples is a judgement, not a measurement.
const forwardMinRows = 2

// forwardMinFLOPs is the least work (FLOPs) a slice of a batch-sliced
// Forward gets: about 10-20 us of the kernels, against the hand-off to
// another thread and that thread's polling for its next job (up to
// kernels' spinWait, 50 us, of runtime.Gosched). Smaller batches run on the
// calling goroutine: Sushi Go's flat networks (about 20 KFLOP an
// evaluation) at a search's batches of 2-8 (docs/BENCHMARKS.md).
const forwardMinFLOPs = 2 << 20

// forwardParts returns the number of slices Forward splits a batch into:
// one per kernel thread that no other call in flight is using, each at
// least forwardMinRows samples and forwardMinFLOPs of work. With no thread
// idle (another network or the trainer busy in the same process) the
// batch runs in one pass rather than in slices one after another.
func (n *Net) forwardParts(batch int) int {
	byWork := int64(batch) * n.FLOPs() / forwardMinFLOPs
	return int(max(1, min(int64(n.team.IdleThreads()), int64(batch/forwardMinRows), byWork)))
}

// forwardPart is one batch-sliced Forward call (kernels.Task): part p
// runs the whole network on samples [p*batch/parts, (p+1)*batch/parts).
// The slices' memory is disjoint: outputs hold one row per sample,
// batch-major, and forwardRows gives each slice its own samples of every
// scratch slot.
type forwardPart struct {
	n                    *Net
	batch, parts         int
	input, policy, value []float32
}

func (f *forwardPart) RunPart(p int) {
	r0, r1 := p*f.batch/f.parts, (p+1)*f.batch/f.parts
	f.n.forwardRows(r0, r1, f.input, f.policy, f.value)
}

// forwardRows runs Forward on samples [r0, r1) of the batch whose
// observations, logits and values are input, policy and value, using
// samples [r0, r1) of each scratch slot (reserved for the batch), so
// that slices run concurrently.
func (n *Net) forwardRows(r0, r1 int, input, policy, value []float32) {
	s := &n.inf
	rows := r1 - r0
	buf := func(b int) []float32 {
		switch {
		case b == n.policy:
			return policy[r0*n.PolicySize() : r1*n.PolicySize()]
		case b == n.value:
			vs := n.cfg.ValueSize()
			return value[r0*vs : r1*vs]
		}
		// A slot holds buffers of different sizes over the layers, and
		// the slices reach a layer at different times: slice rows start
		// at r0 times the slot's largest per-sample size.
		slot := s.slot[b]
		start := r0 * s.per[slot]
		return s.slots[slot][start : start+rows*n.bufs[b].size()]
	}
	nchwToNHWC(rows, n.cfg.InputPlanes, n.cfg.Height*n.cfg.Width, input[r0*n.InputSize():], buf(0))
	for i, u := range n.units {
		a, out := buf(u.in), buf(u.out)
		m := rows * u.cells
		var res []float32
		if u.res >= 0 {
			res = buf(u.res)
		}
		if u.spatial() {
			n.conv3(i, u, rows, a, res, out)
		} else {
			k, w := u.gemmW(u.foldW)
			n.team.GemmBiasAct(m, u.cout, k, a, k, w, u.cout, u.foldB, res, u.relu, out, u.cout)
		}
		if u.tanh {
			tanhInPlace(out)
		}
	}
}

func tanhInPlace(x []float32) {
	for i, v := range x {
		x[i] = float32(math.Tanh(float64(v)))
	}
}

// MaskedSoftmax writes into probs the softmax of logits restricted to the
// actions in legal (illegal actions get probability 0). It returns false,
// leaving probs zero, when legal is empty. len(probs) >= len(logits).
func MaskedSoftmax(logits []float32, legal games.Mask, probs []float32) bool {
	mx := math.Inf(-1)
	for a := range legal.All() {
		if int(a) < len(logits) {
			mx = math.Max(mx, float64(logits[a]))
		}
	}
	clear(probs[:len(logits)])
	if math.IsInf(mx, -1) {
		return false
	}
	var sum float64
	for a := range legal.All() {
		if int(a) < len(logits) {
			e := math.Exp(float64(logits[a]) - mx)
			probs[a] = float32(e)
			sum += e
		}
	}
	inv := 1 / sum
	for a := range legal.All() {
		if int(a) < len(logits) {
			probs[a] = float32(float64(probs[a]) * inv)
		}
	}
	return true
}
