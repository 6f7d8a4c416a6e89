package nets

import (
	"fmt"
	"math"

	"github.com/canopy-go/canopy/kernels"
)

// trainScratch holds everything ForwardTrain keeps for Backward.
type trainScratch struct {
	batch int         // samples of the last ForwardTrain
	cap   int         // capacity in samples
	act   [][]float32 // per buffer: activations (post activation function)
	grad  [][]float32 // per buffer: gradient of the loss w.r.t. act
	pre   [][]float32 // per unit with batch norm: the convolution output
	mean  [][]float64 // per unit with batch norm: batch mean
	istd  [][]float64 // per unit with batch norm: 1/sqrt(batch var + eps)
	dz    []float32   // gradient w.r.t. a unit's pre-activation
	cols  []float32   // im2col matrix (and its gradient)
	acc   [2][]float64
	valid bool // ForwardTrain ran since the last Backward or weight change
}

func (n *Net) reserveTrain(batch int) {
	t := &n.tr
	if batch <= t.cap {
		return
	}
	t.act = make([][]float32, len(n.bufs))
	t.grad = make([][]float32, len(n.bufs))
	for i, b := range n.bufs {
		t.act[i] = make([]float32, batch*b.size())
		t.grad[i] = make([]float32, batch*b.size())
	}
	t.pre = make([][]float32, len(n.units))
	t.mean = make([][]float64, len(n.units))
	t.istd = make([][]float64, len(n.units))
	maxOut, maxCols, maxC := 0, 0, 0
	for i, u := range n.units {
		sz := batch * u.cells * u.cout
		maxOut = max(maxOut, sz)
		maxC = max(maxC, u.cout)
		if u.bn != nil {
			t.pre[i] = make([]float32, sz)
			t.mean[i] = make([]float64, u.cout)
			t.istd[i] = make([]float64, u.cout)
		}
		if u.kind == kindConv3 {
			maxCols = max(maxCols, batch*u.cells*u.k)
		}
	}
	t.dz = make([]float32, maxOut)
	t.cols = make([]float32, maxCols)
	t.acc = [2][]float64{make([]float64, maxC), make([]float64, maxC)}
	t.cap = batch
}

// ForwardTrain evaluates batch samples in training mode and keeps what
// Backward needs: batch norm normalises with the batch's own statistics
// and updates the running averages (momentum 0.1, unbiased variance, as
// PyTorch does). policy and value receive logits and tanh values like
// Forward. Batch norm needs batch >= 2.
func (n *Net) ForwardTrain(batch int, input, policy, value []float32) error {
	if batch < 2 && n.hasBN() {
		return fmt.Errorf("nets: training batch of %d; batch norm needs at least 2", batch)
	}
	if batch < 1 || len(input) < batch*n.InputSize() || len(policy) < batch*n.PolicySize() || len(value) < batch {
		return fmt.Errorf("nets: ForwardTrain(batch=%d): input %d (want %d), policy %d (want %d), value %d",
			batch, len(input), batch*n.InputSize(), len(policy), batch*n.PolicySize(), len(value))
	}
	n.reserveTrain(batch)
	t := &n.tr
	t.batch = batch
	act := func(b int) []float32 { return t.act[b][:batch*n.bufs[b].size()] }
	nchwToNHWC(batch, n.cfg.InputPlanes, n.cfg.Height*n.cfg.Width, input, act(0))
	for i, u := range n.units {
		a, out := act(u.in), act(u.out)
		m := batch * u.cells
		if u.kind == kindConv3 {
			cols := t.cols[:m*u.k]
			kernels.Im2Col3x3(a, batch, u.cin, n.cfg.Height, n.cfg.Width, cols)
			a = cols
		}
		var res []float32
		if u.res >= 0 {
			res = act(u.res)
		}
		if u.bn == nil {
			var bias []float32
			if u.b != nil {
				bias = u.b.Data
			}
			kernels.GemmBiasAct(m, u.cout, u.k, a, u.k, u.w.Data, u.cout, bias, res, u.relu, out, u.cout)
		} else {
			z := t.pre[i][:m*u.cout]
			kernels.Gemm(false, false, m, u.cout, u.k, 1, a, u.k, u.w.Data, u.cout, 0, z, u.cout)
			n.bnForward(i, u, m, z, out)
			if res != nil {
				kernels.Axpy(1, res, out)
			}
			if u.relu {
				kernels.ReLU(out)
			}
		}
		if u.tanh {
			tanhInPlace(out)
		}
	}
	copy(policy, act(n.policy))
	copy(value, act(n.value))
	t.valid = true
	n.version++ // running statistics changed
	return nil
}

func (n *Net) hasBN() bool {
	for _, u := range n.units {
		if u.bn != nil {
			return true
		}
	}
	return false
}

// bnForward normalises z (m rows x cout) with batch statistics into out and
// updates the running averages.
func (n *Net) bnForward(i int, u *unit, m int, z, out []float32) {
	t := &n.tr
	c := u.cout
	sum, sq := t.acc[0][:c], t.acc[1][:c]
	clear(sum)
	clear(sq)
	for r := 0; r < m; r++ {
		row := z[r*c : (r+1)*c]
		for j, v := range row {
			sum[j] += float64(v)
		}
	}
	mean, istd := t.mean[i], t.istd[i]
	for j := range mean {
		mean[j] = sum[j] / float64(m)
	}
	for r := 0; r < m; r++ {
		row := z[r*c : (r+1)*c]
		for j, v := range row {
			d := float64(v) - mean[j]
			sq[j] += d * d
		}
	}
	g, b := u.bn.gamma.Data, u.bn.beta.Data
	rm, rv := u.bn.mean.Data, u.bn.variance.Data
	for j := range istd {
		v := sq[j] / float64(m)
		istd[j] = 1 / math.Sqrt(v+bnEps)
		rm[j] = float32((1-bnMomentum)*float64(rm[j]) + bnMomentum*mean[j])
		rv[j] = float32((1-bnMomentum)*float64(rv[j]) + bnMomentum*sq[j]/float64(m-1))
	}
	for r := 0; r < m; r++ {
		zr, or := z[r*c:(r+1)*c], out[r*c:(r+1)*c]
		for j, v := range zr {
			or[j] = float32((float64(v)-mean[j])*istd[j]*float64(g[j]) + float64(b[j]))
		}
	}
}

// ZeroGrad clears every parameter gradient.
func (n *Net) ZeroGrad() {
	for _, p := range n.params {
		clear(p.Grad)
	}
}

// Backward back-propagates the gradients of the loss with respect to the
// outputs of the last ForwardTrain (dPolicy: batch x PolicySize logits,
// dValue: batch values after tanh) and ADDS the parameter gradients into
// Param.Grad (call ZeroGrad first for a fresh gradient). It consumes the
// stored activations: call ForwardTrain again before the next Backward.
func (n *Net) Backward(dPolicy, dValue []float32) error {
	t := &n.tr
	if !t.valid {
		return fmt.Errorf("nets: Backward without a preceding ForwardTrain")
	}
	batch := t.batch
	if len(dPolicy) < batch*n.PolicySize() || len(dValue) < batch {
		return fmt.Errorf("nets: Backward: dPolicy %d (want %d), dValue %d (want %d)", len(dPolicy), batch*n.PolicySize(), len(dValue), batch)
	}
	t.valid = false
	grad := func(b int) []float32 { return t.grad[b][:batch*n.bufs[b].size()] }
	act := func(b int) []float32 { return t.act[b][:batch*n.bufs[b].size()] }
	for b := range n.bufs {
		clear(grad(b))
	}
	copy(grad(n.policy), dPolicy)
	copy(grad(n.value), dValue)
	for i := len(n.units) - 1; i >= 0; i-- {
		u := n.units[i]
		m := batch * u.cells
		d, y := grad(u.out), act(u.out)
		if u.tanh {
			for j, v := range y {
				d[j] *= 1 - v*v
			}
		}
		if u.relu {
			for j, v := range y {
				if v <= 0 {
					d[j] = 0
				}
			}
		}
		if u.res >= 0 {
			kernels.Axpy(1, d, grad(u.res))
		}
		dz := d
		if u.bn != nil {
			dz = t.dz[:m*u.cout]
			n.bnBackward(i, u, m, d, dz)
		}
		if u.b != nil {
			g := u.b.Grad
			for r := 0; r < m; r++ {
				for j, v := range dz[r*u.cout : (r+1)*u.cout] {
					g[j] += v
				}
			}
		}
		a := act(u.in)
		if u.kind == kindConv3 {
			cols := t.cols[:m*u.k]
			kernels.Im2Col3x3(a, batch, u.cin, n.cfg.Height, n.cfg.Width, cols)
			kernels.Gemm(true, false, u.k, u.cout, m, 1, cols, u.k, dz, u.cout, 1, u.w.Grad, u.cout)
			if u.in != 0 {
				kernels.Gemm(false, true, m, u.k, u.cout, 1, dz, u.cout, u.w.Data, u.cout, 0, cols, u.k)
				kernels.Col2Im3x3(cols, batch, u.cin, n.cfg.Height, n.cfg.Width, grad(u.in))
			}
		} else {
			kernels.Gemm(true, false, u.k, u.cout, m, 1, a, u.k, dz, u.cout, 1, u.w.Grad, u.cout)
			if u.in != 0 {
				kernels.Gemm(false, true, m, u.k, u.cout, 1, dz, u.cout, u.w.Data, u.cout, 1, grad(u.in), u.k)
			}
		}
	}
	return nil
}

// bnBackward turns the gradient d w.r.t. the batch-norm output into dz
// w.r.t. its input and accumulates the gamma and beta gradients:
// dz = gamma*istd*(d - mean(d) - xhat*mean(d*xhat)).
func (n *Net) bnBackward(i int, u *unit, m int, d, dz []float32) {
	t := &n.tr
	c := u.cout
	z := t.pre[i][:m*c]
	mean, istd := t.mean[i], t.istd[i]
	sd, sdx := t.acc[0][:c], t.acc[1][:c]
	clear(sd)
	clear(sdx)
	for r := 0; r < m; r++ {
		dr, zr := d[r*c:(r+1)*c], z[r*c:(r+1)*c]
		for j, v := range dr {
			sd[j] += float64(v)
			sdx[j] += float64(v) * (float64(zr[j]) - mean[j]) * istd[j]
		}
	}
	g := u.bn.gamma.Data
	for j := 0; j < c; j++ {
		u.bn.beta.Grad[j] += float32(sd[j])
		u.bn.gamma.Grad[j] += float32(sdx[j])
	}
	fm := float64(m)
	for r := 0; r < m; r++ {
		dr, zr, out := d[r*c:(r+1)*c], z[r*c:(r+1)*c], dz[r*c:(r+1)*c]
		for j, v := range dr {
			xh := (float64(zr[j]) - mean[j]) * istd[j]
			out[j] = float32(float64(g[j]) * istd[j] * (float64(v) - sd[j]/fm - xh*sdx[j]/fm))
		}
	}
}
