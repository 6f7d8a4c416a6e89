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
	cols  []float32   // a block of the im2col matrix (and its gradient)
	wt    []float32   // a 3x3 convolution's weights transposed
	acc   [2][]float64
	f32   [3][]float32 // per-channel float32 coefficients of batch norm
	valid bool         // ForwardTrain ran since the last Backward or weight change
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
	maxOut, maxCols, maxC, maxW := 0, 0, 0, 0
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
			per := min(batch, max(1, trainBlockRows/u.cells))
			maxCols = max(maxCols, per*u.cells*u.k)
			maxW = max(maxW, u.k*u.cout)
		}
	}
	t.dz = make([]float32, maxOut)
	t.cols = make([]float32, maxCols)
	t.wt = make([]float32, maxW)
	t.acc = [2][]float64{make([]float64, maxC), make([]float64, maxC)}
	t.f32 = [3][]float32{make([]float32, maxC), make([]float32, maxC), make([]float32, maxC)}
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
		var res []float32
		if u.res >= 0 {
			res = act(u.res)
		}
		if u.bn == nil {
			var bias []float32
			if u.b != nil {
				bias = u.b.Data
			}
			if u.kind == kindConv3 {
				kernels.Conv3x3BiasAct(a, batch, u.cin, n.cfg.Height, n.cfg.Width, u.w.Data, u.cout, bias, res, u.relu, out)
			} else {
				kernels.GemmBiasAct(m, u.cout, u.k, a, u.k, u.w.Data, u.cout, bias, res, u.relu, out, u.cout)
			}
		} else {
			z := t.pre[i][:m*u.cout]
			if u.kind == kindConv3 {
				kernels.Conv3x3BiasAct(a, batch, u.cin, n.cfg.Height, n.cfg.Width, u.w.Data, u.cout, nil, nil, false, z)
			} else {
				kernels.Gemm(false, false, m, u.cout, u.k, 1, a, u.k, u.w.Data, u.cout, 0, z, u.cout)
			}
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
	// out = z*scale + shift per channel, in float32 (the per-element
	// float64 arithmetic cost a tenth of a training step).
	scale, shift := t.f32[0][:c], t.f32[1][:c]
	for j := range scale {
		sc := istd[j] * float64(g[j])
		scale[j] = float32(sc)
		shift[j] = float32(float64(b[j]) - mean[j]*sc)
	}
	for r := 0; r < m; r++ {
		zr, or := z[r*c:(r+1)*c], out[r*c:(r+1)*c]
		zr = zr[:len(or)]
		for j, v := range zr {
			or[j] = v*scale[j] + shift[j]
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
			// d = 0 where the unit's output is 0, without a branch (the
			// sign is unpredictable; the branch mispredicts often).
			for j, v := range y {
				keep := ^uint32(0)
				if v <= 0 {
					keep = 0
				}
				d[j] = math.Float32frombits(math.Float32bits(d[j]) & keep)
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
			n.conv3Backward(u, batch, a, dz, grad(u.in))
		} else {
			kernels.Gemm(true, false, u.k, u.cout, m, 1, a, u.k, dz, u.cout, 1, u.w.Grad, u.cout)
			if u.in != 0 {
				kernels.Gemm(false, true, m, u.k, u.cout, 1, dz, u.cout, u.w.Data, u.cout, 1, grad(u.in), u.k)
			}
		}
	}
	return nil
}

// trainBlockRows is the target number of im2col rows (board cells of whole
// samples) a 3x3 convolution's backward pass expands at a time: the block
// (rows x 9*Cin floats, about 300 KB for Connect Four) stays in L2 while
// both GEMMs read it, instead of streaming a batch-sized im2col matrix
// through DRAM. Reading the im2col matrix transposed for the weight gradient
// with a K dimension of a whole batch measured 4x slower than the forward
// GEMM of the same size.
const trainBlockRows = 128

// conv3Backward adds the weight gradient of 3x3 convolution u into
// u.w.Grad and, unless u reads the network input, the input gradient into
// din, given its input a and the gradient dz of its output (before the
// activation), block of samples by block of samples.
func (n *Net) conv3Backward(u *unit, batch int, a, dz, din []float32) {
	t := &n.tr
	h, w := n.cfg.Height, n.cfg.Width
	per := max(1, trainBlockRows/u.cells) // samples per block
	wt := t.wt[:u.k*u.cout]               // W transposed: cout x 9*cin
	if u.in != 0 {
		for r := 0; r < u.k; r++ {
			for c, v := range u.w.Data[r*u.cout : (r+1)*u.cout] {
				wt[c*u.k+r] = v
			}
		}
	}
	for b0 := 0; b0 < batch; b0 += per {
		nb := min(per, batch-b0)
		rows := nb * u.cells
		cols := t.cols[:rows*u.k]
		src := a[b0*u.cells*u.cin : (b0+nb)*u.cells*u.cin]
		d := dz[b0*u.cells*u.cout : (b0+nb)*u.cells*u.cout]
		kernels.Im2Col3x3(src, nb, u.cin, h, w, cols)
		kernels.Gemm(true, false, u.k, u.cout, rows, 1, cols, u.k, d, u.cout, 1, u.w.Grad, u.cout)
		if u.in != 0 {
			kernels.Gemm(false, false, rows, u.k, u.cout, 1, d, u.cout, wt, u.k, 0, cols, u.k)
			kernels.Col2Im3x3(cols, nb, u.cin, h, w, din[b0*u.cells*u.cin:(b0+nb)*u.cells*u.cin])
		}
	}
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
	// sdx = sum d*xhat = istd*(sum d*z - mean*sum d).
	for r := 0; r < m; r++ {
		dr, zr := d[r*c:(r+1)*c], z[r*c:(r+1)*c]
		zr = zr[:len(dr)]
		for j, v := range dr {
			sd[j] += float64(v)
			sdx[j] += float64(v) * float64(zr[j])
		}
	}
	for j := range sdx {
		sdx[j] = (sdx[j] - mean[j]*sd[j]) * istd[j]
	}
	g := u.bn.gamma.Data
	for j := 0; j < c; j++ {
		u.bn.beta.Grad[j] += float32(sd[j])
		u.bn.gamma.Grad[j] += float32(sdx[j])
	}
	// dz = d*k1 + z*k2 + k3 per channel, with xhat = (z-mean)*istd expanded.
	fm := float64(m)
	k1, k2, k3 := t.f32[0][:c], t.f32[1][:c], t.f32[2][:c]
	for j := range k1 {
		gi := float64(g[j]) * istd[j]
		a := gi * istd[j] * sdx[j] / fm
		k1[j] = float32(gi)
		k2[j] = float32(-a)
		k3[j] = float32(a*mean[j] - gi*sd[j]/fm)
	}
	for r := 0; r < m; r++ {
		dr, zr, out := d[r*c:(r+1)*c], z[r*c:(r+1)*c], dz[r*c:(r+1)*c]
		zr, out = zr[:len(dr)], out[:len(dr)]
		for j, v := range dr {
			out[j] = v*k1[j] + zr[j]*k2[j] + k3[j]
		}
	}
}
