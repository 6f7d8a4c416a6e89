package nets

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/kernels"
)

// RecurrentConfig describes study 000's recurrent policy-value network
// (section 3.3): the board planes through a CNN, the flat features (the
// hand one-hot and rank counts) through a linear layer, both concatenated
// into an LSTM, and from the LSTM's hidden state a factored policy (a
// card head and a square head whose Kronecker product is the policy) and
// a linear critic. It is stored as JSON under RecurrentConfigKey.
//
// An input row is Planes x Height x Width planar board values followed by
// Flat values (State.Features of games/sequence writes exactly this).
type RecurrentConfig struct {
	Preset string `json:"preset,omitempty"`
	Game   string `json:"game,omitempty"`
	Planes int    `json:"planes"`
	Height int    `json:"height"`
	Width  int    `json:"width"`
	Flat   int    `json:"flat"`
	// ConvChannels are the 3x3 convolutions (bias, ReLU) over the board.
	ConvChannels []int `json:"conv_channels"`
	// BoardDense and FlatDense are the widths of the dense layers (ReLU)
	// over the flattened CNN output and over the flat features; their
	// concatenation is the LSTM's input.
	BoardDense int `json:"board_dense"`
	FlatDense  int `json:"flat_dense"`
	// Hidden is the LSTM's width.
	Hidden int `json:"hidden"`
	// Cards x Squares is the policy size: the logit of action
	// c*Squares+s is card[c] + square[s], so that the masked softmax over
	// actions is the Kronecker product of the two heads' softmaxes
	// restricted to the legal actions and renormalised.
	Cards   int `json:"cards"`
	Squares int `json:"squares"`
}

// RecurrentConfigKey is the safetensors metadata key of a recurrent net's
// RecurrentConfig (a plain net has ConfigKey instead).
const RecurrentConfigKey = "canopy.recurrent"

// InputSize is the length of one input row.
func (c *RecurrentConfig) InputSize() int { return c.Planes*c.Height*c.Width + c.Flat }

// PolicySize is Cards*Squares.
func (c *RecurrentConfig) PolicySize() int { return c.Cards * c.Squares }

// Validate reports the first field out of range.
func (c *RecurrentConfig) Validate() error {
	if len(c.ConvChannels) < 1 || len(c.ConvChannels) > 16 {
		return fmt.Errorf("recurrent config: %d conv_channels, want 1..16", len(c.ConvChannels))
	}
	dims := []namedDim{{"planes", c.Planes}, {"height", c.Height}, {"width", c.Width}, {"flat", c.Flat},
		{"board_dense", c.BoardDense}, {"flat_dense", c.FlatDense}, {"hidden", c.Hidden}, {"cards", c.Cards}, {"squares", c.Squares}}
	for i, ch := range c.ConvChannels {
		dims = append(dims, namedDim{fmt.Sprintf("conv_channels[%d]", i), ch})
	}
	for _, d := range dims {
		if d.v < 1 || d.v > maxDim {
			return fmt.Errorf("recurrent config: %s = %d, want 1..%d", d.name, d.v, maxDim)
		}
	}
	if c.Height*c.Width > maxDim {
		return fmt.Errorf("recurrent config: board %dx%d too large", c.Height, c.Width)
	}
	last := c.ConvChannels[len(c.ConvChannels)-1]
	if p := int64(c.Height*c.Width*last)*int64(c.BoardDense) + 4*int64(c.Hidden)*int64(c.BoardDense+c.FlatDense+c.Hidden); p > maxParams {
		return fmt.Errorf("recurrent config: about %d parameters, more than the %d limit", p, maxParams)
	}
	return nil
}

var recurrentPresets = map[string]RecurrentConfig{
	// sequence-lstm is study 000's CNN-LSTM for the research variant
	// (sequence:jacks=false): 4 board planes (own, opponents', empty
	// chips and the static face plane), a four-layer CNN, the 96-card
	// hand one-hot and 13 rank counts through a linear layer, a 128-unit
	// LSTM, a 7-way card head and a 100-way square head. The study does
	// not give the CNN's widths or the sizes of the embeddings; 32
	// channels, a 256-unit board embedding and a 64-unit hand embedding
	// are Canopy's choice. ForGame reshapes it for other variants.
	"sequence-lstm": {Preset: "sequence-lstm", Game: "sequence:jacks=false", Planes: 4, Height: 10, Width: 10, Flat: 96 + 13,
		ConvChannels: []int{32, 32, 32, 32}, BoardDense: 256, FlatDense: 64, Hidden: 128, Cards: 7, Squares: 100},
}

// RecurrentPresets returns the recurrent preset names.
func RecurrentPresets() []string {
	names := make([]string, 0, len(recurrentPresets))
	for n := range recurrentPresets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// RecurrentPreset returns the named recurrent preset.
func RecurrentPreset(name string) (RecurrentConfig, bool) {
	c, ok := recurrentPresets[name]
	c.ConvChannels = append([]int(nil), c.ConvChannels...)
	return c, ok
}

// FeatureGame is a game with a flat feature encoding for learners (the
// study's encoding of games/sequence): board planes then flat values.
type FeatureGame interface {
	FeatureSize() int
}

// FeatureState writes a FeatureGame's encoding of the state from
// player's side into dst (FeatureSize values).
type FeatureState interface {
	Features(player int, dst []float32)
}

// ForGame returns c shaped for g, a FeatureGame whose actions are
// Cards x Squares with Squares the board's cells: Flat is what follows the
// Planes board planes in g's features, Squares the board's cells and Cards
// the action count over them.
func (c RecurrentConfig) ForGame(g games.Game) (RecurrentConfig, error) {
	fg, ok := g.(FeatureGame)
	if !ok {
		return c, fmt.Errorf("game %s has no flat feature encoding (FeatureSize/Features): the recurrent net reads it", g.Spec())
	}
	cells := c.Height * c.Width
	c.Flat = fg.FeatureSize() - c.Planes*cells
	c.Squares = cells
	c.Cards = g.NumActions() / cells
	c.Game = g.Spec()
	c.ConvChannels = append([]int(nil), c.ConvChannels...)
	if c.Flat < 1 || c.Cards*cells != g.NumActions() {
		return c, fmt.Errorf("game %s: %d features and %d actions do not fit %d planes of %dx%d with a card x square policy",
			g.Spec(), fg.FeatureSize(), g.NumActions(), c.Planes, c.Height, c.Width)
	}
	return c, c.Validate()
}

// denseLayer is out = relu?(in*W + b) over rows.
type denseLayer struct {
	w, b    *Param
	in, out int
	relu    bool
}

// Recurrent is study 000's CNN-LSTM policy-value network (see
// RecurrentConfig). Its state per sequence is the LSTM's (h, c), which
// the caller keeps: Step advances it one move, ForwardTrain runs a whole
// segment from stored start states for truncated backpropagation through
// time.
//
// A Recurrent is not safe for concurrent use (scratch memory); Clone it
// per goroutine.
type Recurrent struct {
	cfg    RecurrentConfig
	params []*Param
	convs  []denseLayer // 3x3 convolutions: w is [9*cin][cout]
	board  denseLayer   // over the flattened NHWC CNN output
	flat   denseLayer
	lstm   *LSTM
	card   denseLayer
	square denseLayer
	critic denseLayer

	// Scratch, sized for rows = T*B.
	rows  int
	x0    []float32   // rows x cells*Planes, NHWC board input
	act   [][]float32 // per conv: rows x cells*cout (after ReLU)
	flatX []float32   // rows x Flat
	z     []float32   // rows x (BoardDense+FlatDense): the LSTM input
	hs    []float32   // rows x Hidden
	cs    []float32
	heads []float32 // rows x (Cards+Squares+1): card, square, value
	// Backward scratch.
	dHeads []float32
	dh     []float32
	dz     []float32
	dAct   [2][]float32 // ping-pong gradients of conv outputs
	cols   []float32    // im2col block
	wt     []float32    // rotated conv weights
	// Records of the last ForwardTrain.
	t, b  int
	reset []bool
	valid bool
}

// NewRecurrent builds the net with weights drawn from seed: He-normal
// convolutions and dense layers (unit variance for the output heads),
// zero biases, and the LSTM with PyTorch's uniform initialisation.
func NewRecurrent(cfg RecurrentConfig, seed uint64) (*Recurrent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Recurrent{cfg: cfg}
	r.build(seed)
	rng := games.NewRand(seed)
	init := func(l denseLayer, gain float64) {
		std := math.Sqrt(gain / float64(l.in))
		for i := range l.w.Data {
			l.w.Data[i] = float32(rng.NormFloat64() * std)
		}
	}
	for _, c := range r.convs {
		init(c, 2)
	}
	init(r.board, 2)
	init(r.flat, 2)
	init(r.card, 1)
	init(r.square, 1)
	init(r.critic, 1)
	return r, nil
}

func (r *Recurrent) build(seed uint64) {
	c := r.cfg
	cells := c.Height * c.Width
	cin := c.Planes
	dense := func(name string, in, ch, cellsIn, out int, relu bool) denseLayer {
		w := newParam(name+".weight", []int{out, in}, true, true, layoutDense)
		w.d0, w.d1, w.d2 = out, ch, cellsIn
		b := newParam(name+".bias", []int{out}, true, false, layoutPlain)
		r.params = append(r.params, w, b)
		return denseLayer{w: w, b: b, in: in, out: out, relu: relu}
	}
	for i, ch := range c.ConvChannels {
		name := fmt.Sprintf("convs.%d", i)
		w := newParam(name+".weight", []int{ch, cin, 3, 3}, true, true, layoutConv)
		w.d0, w.d1, w.d2 = ch, cin, 3
		b := newParam(name+".bias", []int{ch}, true, false, layoutPlain)
		r.params = append(r.params, w, b)
		r.convs = append(r.convs, denseLayer{w: w, b: b, in: 9 * cin, out: ch, relu: true})
		cin = ch
	}
	r.board = dense("board_fc", cells*cin, cin, cells, c.BoardDense, true)
	r.flat = dense("flat_fc", c.Flat, c.Flat, 1, c.FlatDense, true)
	cell := NewLSTMCell("lstm.", c.BoardDense+c.FlatDense, c.Hidden, seed^0x5bd1e995)
	r.params = append(r.params, cell.Params()...)
	r.lstm = NewLSTM(cell, 1, 1)
	r.card = dense("card_head", c.Hidden, c.Hidden, 1, c.Cards, false)
	r.square = dense("square_head", c.Hidden, c.Hidden, 1, c.Squares, false)
	r.critic = dense("critic", c.Hidden, c.Hidden, 1, 1, false)
}

// Config returns the net's configuration.
func (r *Recurrent) Config() RecurrentConfig {
	c := r.cfg
	c.ConvChannels = append([]int(nil), c.ConvChannels...)
	return c
}

// Params returns every parameter in file order (shared; do not modify).
func (r *Recurrent) Params() []*Param { return r.params }

// InputSize, PolicySize and Hidden are the per-row lengths of the input,
// the policy logits and the LSTM state (h and c each).
func (r *Recurrent) InputSize() int  { return r.cfg.InputSize() }
func (r *Recurrent) PolicySize() int { return r.cfg.PolicySize() }
func (r *Recurrent) Hidden() int     { return r.cfg.Hidden }

// NumParams counts the trainable parameters.
func (r *Recurrent) NumParams() int {
	n := 0
	for _, p := range r.params {
		n += len(p.Data)
	}
	return n
}

// Clone returns an independent copy with the same weights.
func (r *Recurrent) Clone() *Recurrent {
	c := &Recurrent{cfg: r.Config()}
	c.build(0)
	for i, p := range r.params {
		copy(c.params[i].Data, p.Data)
	}
	return c
}

// CopyFrom sets r's weights to src's (same configuration).
func (r *Recurrent) CopyFrom(src *Recurrent) error {
	if len(r.params) != len(src.params) {
		return fmt.Errorf("nets: recurrent architectures differ")
	}
	for i, p := range src.params {
		if len(r.params[i].Data) != len(p.Data) || r.params[i].Name != p.Name {
			return fmt.Errorf("nets: recurrent architectures differ at %q", p.Name)
		}
		copy(r.params[i].Data, p.Data)
	}
	return nil
}

// ZeroGrad clears every gradient.
func (r *Recurrent) ZeroGrad() {
	for _, p := range r.params {
		clear(p.Grad)
	}
}

// Reserve sizes the scratch for rows = T*B rows and T steps so that Step
// and ForwardTrain allocate nothing at or below them.
func (r *Recurrent) Reserve(T, B int) {
	r.lstm.reserve(T, B)
	rows := T * B
	if rows <= r.rows {
		return
	}
	c := r.cfg
	cells := c.Height * c.Width
	r.rows = rows
	r.x0 = make([]float32, rows*cells*c.Planes)
	r.act = r.act[:0]
	maxAct := 0
	for _, l := range r.convs {
		r.act = append(r.act, make([]float32, rows*cells*l.out))
		maxAct = max(maxAct, cells*l.out, cells*l.in/9)
	}
	r.flatX = make([]float32, rows*c.Flat)
	nz := c.BoardDense + c.FlatDense
	r.z = make([]float32, rows*nz)
	r.hs = make([]float32, rows*c.Hidden)
	r.cs = make([]float32, rows*c.Hidden)
	nh := c.Cards + c.Squares + 1
	r.heads = make([]float32, rows*nh)
	r.dHeads = make([]float32, rows*nh)
	r.dh = make([]float32, rows*c.Hidden)
	r.dz = make([]float32, rows*nz)
	r.dAct = [2][]float32{make([]float32, rows*maxAct), make([]float32, rows*maxAct)}
	maxK, maxW := 0, 0
	for _, l := range r.convs {
		maxK = max(maxK, l.in)
		maxW = max(maxW, l.in*l.out)
	}
	r.cols = make([]float32, recurrentBlock*cells*maxK)
	r.wt = make([]float32, maxW)
	r.reset = make([]bool, rows)
}

// recurrentBlock is the number of samples whose im2col matrix a
// convolution's backward pass expands at a time.
const recurrentBlock = 8

// trunk computes the LSTM input z of rows input rows: the CNN and its
// dense layer into the first BoardDense columns, the flat layer into the
// rest.
func (r *Recurrent) trunk(rows int, input []float32) {
	c := r.cfg
	cells := c.Height * c.Width
	in, nb := c.InputSize(), c.Planes*cells
	nz := c.BoardDense + c.FlatDense
	for s := range rows {
		row := input[s*in : (s+1)*in]
		nchwToNHWC(1, c.Planes, cells, row[:nb], r.x0[s*nb:(s+1)*nb])
		copy(r.flatX[s*c.Flat:(s+1)*c.Flat], row[nb:])
	}
	a, cin := r.x0[:rows*nb], c.Planes
	for i, l := range r.convs {
		out := r.act[i][:rows*cells*l.out]
		kernels.Conv3x3BiasAct(a, rows, cin, c.Height, c.Width, l.w.Data, l.out, l.b.Data, nil, true, out)
		a, cin = out, l.out
	}
	z := r.z[:rows*nz]
	kernels.GemmBiasAct(rows, c.BoardDense, r.board.in, a, r.board.in, r.board.w.Data, c.BoardDense, r.board.b.Data, nil, true, z, nz)
	kernels.GemmBiasAct(rows, c.FlatDense, c.Flat, r.flatX, c.Flat, r.flat.w.Data, c.FlatDense, r.flat.b.Data, nil, true, z[c.BoardDense:], nz)
}

// headsOut computes the heads of rows hidden states hs into policy
// (rows x Cards*Squares logits, card[c]+square[s]) and value (rows).
func (r *Recurrent) headsOut(rows int, hs, policy, value []float32) {
	c := r.cfg
	H, nh := c.Hidden, c.Cards+c.Squares+1
	hd := r.heads[:rows*nh]
	kernels.GemmBiasAct(rows, c.Cards, H, hs, H, r.card.w.Data, c.Cards, r.card.b.Data, nil, false, hd, nh)
	kernels.GemmBiasAct(rows, c.Squares, H, hs, H, r.square.w.Data, c.Squares, r.square.b.Data, nil, false, hd[c.Cards:], nh)
	kernels.GemmBiasAct(rows, 1, H, hs, H, r.critic.w.Data, 1, r.critic.b.Data, nil, false, hd[c.Cards+c.Squares:], nh)
	P := c.PolicySize()
	for s := range rows {
		row := hd[s*nh : (s+1)*nh]
		card, sq := row[:c.Cards], row[c.Cards:c.Cards+c.Squares]
		out := policy[s*P : (s+1)*P]
		for k, cv := range card {
			o := out[k*c.Squares : (k+1)*c.Squares]
			o = o[:len(sq)]
			for j, sv := range sq {
				o[j] = cv + sv
			}
		}
		value[s] = row[nh-1]
	}
}

// Step advances B sequences by one move: input is B rows, h and c (B x
// Hidden) the state before the move, updated in place; policy receives B x
// PolicySize logits and value B values. Rows whose reset flag is set
// (reset may be nil) start from zero state. After Reserve(1, B) it
// allocates nothing.
func (r *Recurrent) Step(B int, input, h, c []float32, reset []bool, policy, value []float32) error {
	H := r.cfg.Hidden
	if B < 1 || len(input) < B*r.InputSize() || len(h) < B*H || len(c) < B*H || len(policy) < B*r.PolicySize() || len(value) < B ||
		(reset != nil && len(reset) < B) {
		return fmt.Errorf("nets: Recurrent.Step(B=%d): input %d, h %d, c %d, policy %d, value %d: want %d, %d, %d, %d, %d",
			B, len(input), len(h), len(c), len(policy), len(value), B*r.InputSize(), B*H, B*H, B*r.PolicySize(), B)
	}
	r.Reserve(1, B)
	r.valid = false
	r.trunk(B, input)
	for b := range B {
		if reset != nil && reset[b] {
			clear(h[b*H : (b+1)*H])
			clear(c[b*H : (b+1)*H])
		}
	}
	hin, cin := r.lstm.hin[:B*H], r.lstm.cin[:B*H]
	copy(hin, h[:B*H])
	copy(cin, c[:B*H])
	nz := r.cfg.BoardDense + r.cfg.FlatDense
	if err := r.lstm.Cell.Forward(B, r.z[:B*nz], hin, cin, h, c, nil, r.lstm.steps[0].gates); err != nil {
		return err
	}
	r.headsOut(B, h[:B*H], policy, value)
	return nil
}

// ForwardTrain runs a segment of T steps of B sequences (time-major input,
// row t*B+b) from the states h0, c0 (B x Hidden) at its start; reset
// (T*B flags, nil for none) marks rows that begin an episode, whose state
// is zeroed first. policy and value receive the T*B outputs, hT and cT
// (nil when not wanted) the state after the last step. It records what
// Backward needs.
func (r *Recurrent) ForwardTrain(T, B int, input, h0, c0 []float32, reset []bool, policy, value, hT, cT []float32) error {
	H, rows := r.cfg.Hidden, T*B
	if T < 1 || B < 1 || len(input) < rows*r.InputSize() || len(h0) < B*H || len(c0) < B*H ||
		len(policy) < rows*r.PolicySize() || len(value) < rows || (reset != nil && len(reset) < rows) {
		return fmt.Errorf("nets: Recurrent.ForwardTrain(T=%d, B=%d): slices too short", T, B)
	}
	r.Reserve(T, B)
	r.trunk(rows, input)
	nz := r.cfg.BoardDense + r.cfg.FlatDense
	rs := r.reset[:rows]
	clear(rs)
	if reset != nil {
		copy(rs, reset[:rows])
	}
	hs, cs := r.hs[:rows*H], r.cs[:rows*H]
	if err := r.lstm.Forward(T, B, r.z[:rows*nz], h0, c0, rs, hs, cs); err != nil {
		return err
	}
	r.headsOut(rows, hs, policy, value)
	if hT != nil {
		copy(hT, hs[(T-1)*B*H:])
	}
	if cT != nil {
		copy(cT, cs[(T-1)*B*H:])
	}
	r.t, r.b, r.valid = T, B, true
	return nil
}

// Backward back-propagates the gradients of the loss w.r.t. the outputs
// of the last ForwardTrain (dPolicy: T*B x PolicySize, dValue: T*B) through
// the heads, the LSTM (through time, within the segment) and the trunk,
// and ADDS the parameter gradients into Param.Grad.
func (r *Recurrent) Backward(dPolicy, dValue []float32) error {
	if !r.valid {
		return fmt.Errorf("nets: Recurrent.Backward without a preceding ForwardTrain")
	}
	c := r.cfg
	T, B := r.t, r.b
	rows, H, P := T*B, c.Hidden, c.PolicySize()
	if len(dPolicy) < rows*P || len(dValue) < rows {
		return fmt.Errorf("nets: Recurrent.Backward: dPolicy %d (want %d), dValue %d (want %d)", len(dPolicy), rows*P, len(dValue), rows)
	}
	r.valid = false
	nh := c.Cards + c.Squares + 1
	dhd := r.dHeads[:rows*nh]
	// The logit of (k, j) is card[k] + square[j]: the card gradient sums
	// a row of the Cards x Squares gradient, the square gradient a column.
	for s := range rows {
		d := dhd[s*nh : (s+1)*nh]
		clear(d)
		dp := dPolicy[s*P : (s+1)*P]
		dsq := d[c.Cards : c.Cards+c.Squares]
		for k := range c.Cards {
			row := dp[k*c.Squares : (k+1)*c.Squares]
			row = row[:len(dsq)]
			var sum float32
			for j, v := range row {
				sum += v
				dsq[j] += v
			}
			d[k] = sum
		}
		d[nh-1] = dValue[s]
	}
	hs := r.hs[:rows*H]
	dh := r.dh[:rows*H]
	first := true
	for _, hd := range []struct {
		l   denseLayer
		off int
	}{{r.card, 0}, {r.square, c.Cards}, {r.critic, c.Cards + c.Squares}} {
		n := hd.l.out
		kernels.Gemm(true, false, H, n, rows, 1, hs, H, dhd[hd.off:], nh, 1, hd.l.w.Grad, n)
		colSums(rows, n, dhd[hd.off:], nh, hd.l.b.Grad)
		beta := float32(1)
		if first {
			beta, first = 0, false
		}
		kernels.Gemm(false, true, rows, H, n, 1, dhd[hd.off:], nh, hd.l.w.Data, n, beta, dh, H)
	}
	nz := c.BoardDense + c.FlatDense
	dz := r.dz[:rows*nz]
	if err := r.lstm.Backward(r.reset[:rows], dh, dz); err != nil {
		return err
	}
	z := r.z[:rows*nz]
	// ReLU of the two embeddings: the gradient passes where z > 0.
	for i, v := range z {
		if v <= 0 {
			dz[i] = 0
		}
	}
	kernels.Gemm(true, false, c.Flat, c.FlatDense, rows, 1, r.flatX[:rows*c.Flat], c.Flat, dz[c.BoardDense:], nz, 1, r.flat.w.Grad, c.FlatDense)
	colSums(rows, c.FlatDense, dz[c.BoardDense:], nz, r.flat.b.Grad)
	cells := c.Height * c.Width
	last := len(r.convs) - 1
	a := r.act[last][:rows*r.board.in]
	kernels.Gemm(true, false, r.board.in, c.BoardDense, rows, 1, a, r.board.in, dz, nz, 1, r.board.w.Grad, c.BoardDense)
	colSums(rows, c.BoardDense, dz, nz, r.board.b.Grad)
	d := r.dAct[0][:rows*r.board.in]
	kernels.Gemm(false, true, rows, r.board.in, c.BoardDense, 1, dz, nz, r.board.w.Data, c.BoardDense, 0, d, r.board.in)
	for i := last; i >= 0; i-- {
		l := r.convs[i]
		cin := l.in / 9
		y := r.act[i][:rows*cells*l.out]
		for j, v := range y {
			if v <= 0 {
				d[j] = 0
			}
		}
		colSums(rows*cells, l.out, d, l.out, l.b.Grad)
		x := r.x0
		if i > 0 {
			x = r.act[i-1]
		}
		x = x[:rows*cells*cin]
		for b0 := 0; b0 < rows; b0 += recurrentBlock {
			nb := min(recurrentBlock, rows-b0)
			cols := r.cols[:nb*cells*l.in]
			kernels.Im2Col3x3(x[b0*cells*cin:(b0+nb)*cells*cin], nb, cin, c.Height, c.Width, cols)
			kernels.Gemm(true, false, l.in, l.out, nb*cells, 1, cols, l.in, d[b0*cells*l.out:(b0+nb)*cells*l.out], l.out, 1, l.w.Grad, l.out)
		}
		if i == 0 {
			break
		}
		// The input gradient is the same convolution of d with the kernel
		// rotated by 180 degrees and the channel roles swapped.
		wt := r.wt[:l.in*l.out]
		for tap := range 9 {
			src := l.w.Data[(8-tap)*cin*l.out : (9-tap)*cin*l.out]
			dst := wt[tap*l.out*cin : (tap+1)*l.out*cin]
			for ci := range cin {
				for co, v := range src[ci*l.out : (ci+1)*l.out] {
					dst[co*cin+ci] = v
				}
			}
		}
		next := r.dAct[(last-i+1)%2][:rows*cells*cin]
		kernels.Conv3x3BiasAct(d, rows, l.out, c.Height, c.Width, wt, cin, nil, nil, false, next)
		d = next
	}
	return nil
}

// colSums adds the column sums of a rows x n matrix (leading dimension
// ld) into dst.
func colSums(rows, n int, a []float32, ld int, dst []float32) {
	dst = dst[:n]
	for s := range rows {
		row := a[s*ld : s*ld+n]
		for j, v := range row {
			dst[j] += v
		}
	}
}

// JSON returns the config as compact JSON (the metadata value).
func (c RecurrentConfig) JSON() string {
	b, err := json.Marshal(c)
	if err != nil { // cannot happen for this plain struct
		panic(err)
	}
	return string(b)
}

// ParseRecurrentConfig decodes and validates a recurrent config from JSON
// (unknown fields are an error).
func ParseRecurrentConfig(s string) (RecurrentConfig, error) {
	var c RecurrentConfig
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return RecurrentConfig{}, fmt.Errorf("recurrent config: bad JSON: %v", err)
	}
	return c, c.Validate()
}
