package nets

import (
	"fmt"
	"math"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/kernels"
)

// LSTMCell is one long short-term memory cell with PyTorch's gate order
// (input, forget, cell, output) and parameter names (weight_ih [4H, In],
// weight_hh [4H, H], bias_ih, bias_hh):
//
//	gates = x*Wih^T + h*Whh^T + bih + bhh
//	i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of the four quarters
//	c' = f*c + i*g;  h' = o*tanh(c')
//
// It is a building block for recurrent policies (recurrent PPO); it is not
// part of the preset networks. An LSTMCell is not safe for concurrent use
// during Backward (gradients accumulate into its Params); Forward without a
// step record only reads the weights.
type LSTMCell struct {
	In, Hidden int
	Wih, Whh   *Param // internal layout [In][4H] and [H][4H]
	Bih, Bhh   *Param
}

// NewLSTMCell makes a cell with PyTorch's initialisation, every weight
// uniform in [-1/sqrt(H), 1/sqrt(H)], drawn from seed. name prefixes the
// parameter names (e.g. "lstm." gives "lstm.weight_ih").
func NewLSTMCell(name string, in, hidden int, seed uint64) *LSTMCell {
	l := &LSTMCell{In: in, Hidden: hidden}
	g := 4 * hidden
	l.Wih = newParam(name+"weight_ih", []int{g, in}, true, true, layoutDense)
	l.Wih.d0, l.Wih.d1, l.Wih.d2 = g, in, 1
	l.Whh = newParam(name+"weight_hh", []int{g, hidden}, true, true, layoutDense)
	l.Whh.d0, l.Whh.d1, l.Whh.d2 = g, hidden, 1
	l.Bih = newParam(name+"bias_ih", []int{g}, true, false, layoutPlain)
	l.Bhh = newParam(name+"bias_hh", []int{g}, true, false, layoutPlain)
	rng := games.NewRand(seed)
	k := 1 / math.Sqrt(float64(hidden))
	for _, p := range l.Params() {
		for i := range p.Data {
			p.Data[i] = float32((2*rng.Float64() - 1) * k)
		}
	}
	return l
}

// Params returns the cell's four parameters.
func (l *LSTMCell) Params() []*Param { return []*Param{l.Wih, l.Whh, l.Bih, l.Bhh} }

// LSTMStep records one Forward for Backward. Make it with NewStep.
type LSTMStep struct {
	batch           int
	x, hPrev, cPrev []float32
	gates           []float32 // batch x 4H after the nonlinearities
	tanhC           []float32 // batch x H
	dGates          []float32
}

// NewStep allocates a step record for batches up to maxBatch.
func (l *LSTMCell) NewStep(maxBatch int) *LSTMStep {
	h := l.Hidden
	return &LSTMStep{
		x: make([]float32, maxBatch*l.In), hPrev: make([]float32, maxBatch*h), cPrev: make([]float32, maxBatch*h),
		gates: make([]float32, maxBatch*4*h), tanhC: make([]float32, maxBatch*h),
		dGates: make([]float32, maxBatch*4*h),
	}
}

func sigmoid(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }

// Forward computes one step for batch rows: x is batch x In, hPrev, cPrev,
// h and c are batch x Hidden (h and c must not alias the inputs). With a
// non-nil step it records what Backward needs (copies, so the caller may
// reuse its buffers). Without one it needs a scratch of batch x 4H, which
// it takes from gates (len >= batch*4*Hidden), or allocates when nil.
func (l *LSTMCell) Forward(batch int, x, hPrev, cPrev, h, c []float32, step *LSTMStep, gates []float32) error {
	H, G := l.Hidden, 4*l.Hidden
	if len(x) < batch*l.In || len(hPrev) < batch*H || len(cPrev) < batch*H || len(h) < batch*H || len(c) < batch*H {
		return fmt.Errorf("nets: LSTMCell.Forward(batch=%d): slices too short for In=%d Hidden=%d", batch, l.In, H)
	}
	if step != nil {
		if len(step.gates) < batch*G {
			return fmt.Errorf("nets: LSTMStep holds %d rows, need %d", len(step.gates)/G, batch)
		}
		step.batch = batch
		copy(step.x, x[:batch*l.In])
		copy(step.hPrev, hPrev[:batch*H])
		copy(step.cPrev, cPrev[:batch*H])
		gates = step.gates
	} else if len(gates) < batch*G {
		gates = make([]float32, batch*G)
	}
	gates = gates[:batch*G]
	for r := 0; r < batch; r++ {
		row := gates[r*G : (r+1)*G]
		for j := range row {
			row[j] = l.Bih.Data[j] + l.Bhh.Data[j]
		}
	}
	kernels.Gemm(false, false, batch, G, l.In, 1, x, l.In, l.Wih.Data, G, 1, gates, G)
	kernels.Gemm(false, false, batch, G, H, 1, hPrev, H, l.Whh.Data, G, 1, gates, G)
	for r := 0; r < batch; r++ {
		row := gates[r*G : (r+1)*G]
		for j := 0; j < H; j++ {
			i, f := sigmoid(row[j]), sigmoid(row[H+j])
			g, o := float32(math.Tanh(float64(row[2*H+j]))), sigmoid(row[3*H+j])
			row[j], row[H+j], row[2*H+j], row[3*H+j] = i, f, g, o
			cn := f*cPrev[r*H+j] + i*g
			tc := float32(math.Tanh(float64(cn)))
			c[r*H+j] = cn
			h[r*H+j] = o * tc
			if step != nil {
				step.tanhC[r*H+j] = tc
			}
		}
	}
	return nil
}

// Backward takes the gradients of the loss w.r.t. the step's outputs h and
// c (dc may be nil when c feeds nothing else), ADDS the parameter gradients
// into the Params' Grad, and writes the gradients w.r.t. x, hPrev and cPrev
// into dx, dhPrev and dcPrev (each may be nil when not needed).
func (l *LSTMCell) Backward(step *LSTMStep, dh, dc, dx, dhPrev, dcPrev []float32) error {
	batch, H, G := step.batch, l.Hidden, 4*l.Hidden
	if len(dh) < batch*H || (dc != nil && len(dc) < batch*H) || (dx != nil && len(dx) < batch*l.In) ||
		(dhPrev != nil && len(dhPrev) < batch*H) || (dcPrev != nil && len(dcPrev) < batch*H) {
		return fmt.Errorf("nets: LSTMCell.Backward(batch=%d): gradient slices too short", batch)
	}
	dg := step.dGates[:batch*G]
	for r := 0; r < batch; r++ {
		row, d := step.gates[r*G:(r+1)*G], dg[r*G:(r+1)*G]
		for j := 0; j < H; j++ {
			k := r*H + j
			i, f, g, o := row[j], row[H+j], row[2*H+j], row[3*H+j]
			tc := step.tanhC[k]
			dct := dh[k] * o * (1 - tc*tc)
			if dc != nil {
				dct += dc[k]
			}
			d[j] = dct * g * i * (1 - i)
			d[H+j] = dct * step.cPrev[k] * f * (1 - f)
			d[2*H+j] = dct * i * (1 - g*g)
			d[3*H+j] = dh[k] * tc * o * (1 - o)
			if dcPrev != nil {
				dcPrev[k] = dct * f
			}
		}
	}
	kernels.Gemm(true, false, l.In, G, batch, 1, step.x, l.In, dg, G, 1, l.Wih.Grad, G)
	kernels.Gemm(true, false, H, G, batch, 1, step.hPrev, H, dg, G, 1, l.Whh.Grad, G)
	for r := 0; r < batch; r++ {
		for j, v := range dg[r*G : (r+1)*G] {
			l.Bih.Grad[j] += v
			l.Bhh.Grad[j] += v
		}
	}
	if dx != nil {
		kernels.Gemm(false, true, batch, l.In, G, 1, dg, G, l.Wih.Data, G, 0, dx, l.In)
	}
	if dhPrev != nil {
		kernels.Gemm(false, true, batch, H, G, 1, dg, G, l.Whh.Data, G, 0, dhPrev, H)
	}
	return nil
}
