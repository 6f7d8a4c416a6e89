package nets

import (
	"fmt"
	"math"

	"github.com/canopy-go/canopy/kernels"
)

// trainScratch holds everything ForwardTrain keeps for Backward.
type trainScratch struct {
	batch int          // samples of the last ForwardTrain
	cap   int          // capacity in samples
	act   [][]float32  // per buffer: activations (post activation function)
	grad  [][]float32  // per buffer: gradient of the loss w.r.t. act
	pre   [][]float32  // per unit with batch norm: the convolution output
	mean  [][]float64  // per unit with batch norm: batch mean
	istd  [][]float64  // per unit with batch norm: 1/sqrt(batch var + eps)
	dz    []float32    // gradient w.r.t. a unit's pre-activation
	wt    []float32    // a 3x3 convolution's weights transposed
	wu    []float32    // a 3x3 convolution's Winograd-transformed weights (forward or wt)
	f32   [3][]float32 // per-channel float32 coefficients of batch norm
	fresh []bool       // per buffer, in Backward: grad holds no contribution yet (stale values)
	parts [trainParts]partScratch
	bw    backwardUnit // the passes of Backward over the batch slices
	bnf   bnForwardTask
	valid bool // ForwardTrain ran since the last Backward or weight change
	// conv is the algorithm of the 3x3 convolutions of training when
	// convSet (SetTrainConvAlgorithm), else AutoConvAlgorithm's.
	conv    ConvAlgorithm
	convSet bool
	// prec is the format of the 3x3 convolutions' products
	// (SetTrainPrecision); under BF16, fwb and bwb hold per unit its
	// weights (forward) and rotated weights (input gradient) rounded to
	// bfloat16 and packed, repacked from the float32 master weights on
	// every use (nil until then).
	prec     Precision
	fwb, bwb []bf16Weights
}

// bf16Weights is one convolution's weights packed in bfloat16, for
// Winograd F(2x2) (wu), F(3x4) (w34) or im2col (w); those not in use stay
// nil.
type bf16Weights struct {
	w   *kernels.BF16Matrix
	wu  *kernels.WinogradBF16
	w34 *kernels.Winograd34BF16
}

// bf16Packing is the layout packBF16 packs a convolution's weights in.
type bf16Packing int

const (
	packIm2col bf16Packing = iota // the [9*cin, cout] matrix (kernels.PackBF16)
	packWino22                    // 16 F(2x2) matrices (kernels.PackWinogradBF16)
	packWino34                    // 30 F(3x4) matrices (kernels.PackWinograd34BF16)
)

// SetTrainPrecision makes ForwardTrain and Backward multiply the 3x3
// convolutions' forward pass, input gradients and (under Winograd)
// weight gradients in p. Under BF16 their operands (the transformed image
// or output gradient and the transformed weights under Winograd, the
// image and weights under im2col; the transformed image and output
// gradient for the weight gradient) are rounded to bfloat16 and the
// products summed in float32, as Forward does under SetPrecision(BF16)
// (kernels.Conv3x3WinogradBF16, kernels.Conv3x3BiasActBF16,
// kernels.Conv3x3WinogradWeightGradBF16, and F(3x4,3x3)'s
// kernels.Conv3x3Winograd34BF16 and kernels.Conv3x3Winograd34WeightGradBF16
// where that pays, see trainWino34); a convolution whose channel
// count on the side being rounded is odd (for the weight gradient: either
// not a multiple of 16) stays float32. The weights stay float32 (master
// weights: the optimizer updates them, and they are rounded anew for every
// pass); the weight gradients are summed in float32 over chunks of tiles
// and over the batch; im2col weight gradients, batch norm, 1x1 and dense
// layers run in float32. Without AVX-512 BF16 the bfloat16 kernels run
// portable code, correct but hundreds of times slower
// (kernels.BF16Kernels): callers should refuse BF16 there. The loss
// agrees with FP32's to about 0.1%; the gradients of a freshly
// initialised net differ more, since they are badly conditioned (see
// TestTrainBF16MatchesFP32), and a recorded training run reaches the same
// held-out loss (docs/RESULTS.md). No loss scaling is needed: bfloat16 has
// float32's exponent range, so gradients that float32 represents as
// normal numbers do not underflow (float16, with a 5-bit exponent, would
// lose those below 6e-5). Like ForwardTrain, it must not race with
// training; Clone and New start with FP32.
func (n *Net) SetTrainPrecision(p Precision) {
	if p != n.tr.prec {
		n.tr.cap = 0 // the Winograd scratch's size depends on it (trainWinoPositions)
	}
	n.tr.prec = p
	n.tr.valid = false
}

// TrainPrecision returns the format of training's 3x3 products (see
// SetTrainPrecision).
func (n *Net) TrainPrecision() Precision { return n.tr.prec }

// packBF16 sets *slot to the [9*cin, cout] 3x3 weights w (a unit's, or
// its rotated ones for the input gradient) rounded to bfloat16 and packed
// as how says, reusing the slot's memory; u is scratch for a Winograd
// transform (16 or 30 values per channel pair).
func packBF16(slot *bf16Weights, w []float32, cin, cout int, how bf16Packing, u []float32) {
	switch how {
	case packWino34:
		u = u[:30*cin*cout]
		kernels.WinogradWeights34(w, cin, cout, u)
		slot.w34 = kernels.RepackWinograd34BF16(slot.w34, u, cin, cout)
	case packWino22:
		u = u[:16*cin*cout]
		kernels.WinogradWeights(w, cin, cout, u)
		slot.wu = kernels.RepackWinogradBF16(slot.wu, u, cin, cout)
	default:
		slot.w = kernels.RepackBF16(slot.w, w, 9*cin, cout)
	}
}

// SetTrainConvAlgorithm makes ForwardTrain and Backward compute 3x3
// convolutions with a: under ConvWinograd, the forward convolutions and
// weight gradients of convolutions with at least winoMinCin input
// channels and the input-gradient convolutions (the convolution of the
// output gradient with the rotated kernel) of those with at least
// winoMinCin output channels run by Winograd's F(2x2,3x3)
// (kernels.Conv3x3Winograd, kernels.Conv3x3WinogradWeightGrad), or in
// float32 with the SIMD kernels by F(3x4,3x3) where that pays
// (kernels.Conv3x3Winograd34, kernels.Conv3x3Winograd34WeightGrad; the
// Connect Four board, see wino34Pays), the rest by im2col + GEMM. Until it is called, training uses AutoConvAlgorithm():
// Winograd with SIMD kernels, im2col with the portable ones. Gradients
// agree with im2col's to float32 rounding of the transforms (about 1e-5
// of the largest), not bit for bit. Like ForwardTrain, it must not race
// with training.
func (n *Net) SetTrainConvAlgorithm(a ConvAlgorithm) {
	n.tr.conv, n.tr.convSet = a, true
	n.tr.valid = false
}

// TrainConvAlgorithm returns the algorithm of training's 3x3
// convolutions (see SetTrainConvAlgorithm).
func (n *Net) TrainConvAlgorithm() ConvAlgorithm {
	if n.tr.convSet {
		return n.tr.conv
	}
	return AutoConvAlgorithm()
}

// trainWino34 reports whether training runs a Winograd 3x3 convolution
// of cin -> cout channels by F(3x4,3x3) rather than F(2x2,3x3): where its
// shape pays (wino34Pays), in float32 with the SIMD kernels (the portable
// float32 loops stay on F(2x2)), in bfloat16 with every kernel set, so
// that the portable bfloat16 path computes what the AVX-512 BF16 one does
// (TestTrainBF16MatchesFP32).
func (n *Net) trainWino34(cin, cout int) bool {
	return (n.tr.prec == BF16 || kernels.Current() != "generic") && wino34Pays(n.cfg.Height, n.cfg.Width, cin, cout)
}

// trainWinoPositions is the number of values per channel pair of the
// Winograd scratch (transformed weights and their gradients) of a 3x3
// convolution of cin -> cout channels: 30 where float32 training may run
// it by F(3x4,3x3) (trainWino34 without the kernels' part, so that the
// scratch fits whichever kernels run), else F(2x2,3x3)'s 16 (bfloat16
// training allocates what it did before F(3x4)).
func (n *Net) trainWinoPositions(cin, cout int) int {
	if wino34Pays(n.cfg.Height, n.cfg.Width, cin, cout) {
		return 30
	}
	return 16
}

// trainParts is the number of slices of whole samples the batch is cut into
// for the passes of training that run on several goroutines (batch-norm
// statistics, elementwise passes, the backward of 3x3 convolutions). Each
// slice accumulates its own partial sums and weight gradients, which are
// then added in slice order, so results do not depend on the thread count
// or on which goroutine ran which slice.
const trainParts = 4

// partScratch is one batch slice's private scratch.
type partScratch struct {
	cols []float32    // a block of the im2col matrix (and its gradient)
	dw   []float32    // the slice's weight gradient of a 3x3 convolution
	du   []float32    // the same for its Winograd-transformed weights
	db   []float32    // the slice's bias gradient
	acc  [2][]float64 // the slice's per-channel sums
}

func (n *Net) reserveTrain(batch int) {
	t := &n.tr
	if batch <= t.cap {
		return
	}
	t.act = make([][]float32, len(n.bufs))
	t.fresh = make([]bool, len(n.bufs))
	t.grad = make([][]float32, len(n.bufs))
	for i, b := range n.bufs {
		t.act[i] = make([]float32, batch*b.size())
		t.grad[i] = make([]float32, batch*b.size())
	}
	t.pre = make([][]float32, len(n.units))
	t.mean = make([][]float64, len(n.units))
	t.istd = make([][]float64, len(n.units))
	maxOut, maxCols, maxC, maxW, maxU := 0, 0, 0, 0, 0
	for i, u := range n.units {
		sz := batch * u.cells * u.cout
		maxOut = max(maxOut, sz)
		maxC = max(maxC, u.cout)
		if u.bn != nil {
			t.pre[i] = make([]float32, sz)
			t.mean[i] = make([]float64, u.cout)
			t.istd[i] = make([]float64, u.cout)
		}
		if u.spatial() {
			per := min(batch, max(1, trainBlockRows/u.cells))
			maxCols = max(maxCols, per*u.cells*u.k)
			maxW = max(maxW, u.k*u.cout)
			maxU = max(maxU, n.trainWinoPositions(u.cin, u.cout)*u.cin*u.cout)
		}
	}
	t.dz = make([]float32, maxOut)
	t.wt = make([]float32, maxW)
	t.wu = make([]float32, maxU)
	for p := range t.parts {
		t.parts[p] = partScratch{cols: make([]float32, maxCols), dw: make([]float32, maxW), du: make([]float32, maxU), db: make([]float32, maxC),
			acc: [2][]float64{make([]float64, maxC), make([]float64, maxC)}}
	}
	t.f32 = [3][]float32{make([]float32, maxC), make([]float32, maxC), make([]float32, maxC)}
	t.cap = batch
}

// TrainBytes is the memory, in bytes, of the training scratch that
// ForwardTrain allocates for batches of batch rows (reserveTrain):
// activations and their gradients, batch-norm pre-activations, and the
// per-part im2col and gradient buffers, the packed GEMM operand of
// Backward, and under SetTrainPrecision(BF16) the bfloat16 weights.
// Memory guards use it before training; the parameters, their gradients and the optimizer's state
// (a few times NumParams float32s) are not counted.
func (n *Net) TrainBytes(batch int) int64 {
	b := int64(batch)
	var total int64
	for _, buf := range n.bufs {
		total += 2 * 4 * b * int64(buf.size()) // act and grad
	}
	maxOut, maxCols, maxC, maxW, maxU := 0, 0, 0, 0, 0
	for _, u := range n.units {
		sz := batch * u.cells * u.cout
		maxOut = max(maxOut, sz)
		maxC = max(maxC, u.cout)
		if u.bn != nil {
			total += 4*b*int64(u.cells*u.cout) + 16*int64(u.cout) // pre, mean, istd
		}
		if u.spatial() {
			per := min(batch, max(1, trainBlockRows/u.cells))
			maxCols = max(maxCols, per*u.cells*u.k)
			maxW = max(maxW, u.k*u.cout)
			maxU = max(maxU, n.trainWinoPositions(u.cin, u.cout)*u.cin*u.cout)
		}
	}
	total += 4*int64(maxOut) + 4*int64(maxW) + 4*int64(maxU)                             // dz, wt, wu
	total += int64(len(n.tr.parts)) * (4*int64(maxCols+maxW+maxU+maxC) + 16*int64(maxC)) // parts
	total += 3 * 4 * int64(maxC)                                                         // f32
	if n.tr.prec == BF16 {
		// fwb and bwb: per 3x3 convolution its weights (when cin is
		// even) and rotated weights (when it has an input gradient and
		// cout is even) in bfloat16 (packBF16): 16 F(2x2) or 30 F(3x4)
		// Winograd matrices (trainWinoPositions) of k = cin (cout) rows,
		// or the [9*cin, cout] ([9*cout, cin]) im2col matrix, each in
		// k/2 pairs rounded up of n columns padded to whole strips
		// (kernels.PackBF16).
		wino := n.TrainConvAlgorithm() == ConvWinograd
		packed := func(k, cols int, wino bool) int64 {
			pad := int64(min((cols+31)/32*32, (cols+63)/64*64))
			if wino {
				return int64(n.trainWinoPositions(k, cols)) * int64((k+1)/2*2) * pad
			}
			return int64((9*k+1)/2*2) * pad
		}
		for _, u := range n.units {
			if !u.spatial() {
				continue
			}
			if u.cin%2 == 0 {
				total += 2 * packed(u.cin, u.cout, wino && u.cin >= winoMinCin)
			}
			if u.in != 0 && u.cout%2 == 0 {
				total += 2 * packed(u.cout, u.cin, wino && u.cout >= winoMinCin)
			}
		}
	}
	// The GEMMs of Backward pack an operand of about one layer's output
	// (kernels' pooled buffers, one per kernel thread that packs at once:
	// more with many threads and narrow layers).
	total += 4 * int64(maxOut)
	return total
}

// numParts is the number of batch slices for a batch of the given size.
func numParts(batch int) int { return min(trainParts, batch) }

// partSamples returns the samples [s0, s1) of slice p of np.
func partSamples(batch, np, p int) (s0, s1 int) {
	return p * batch / np, (p + 1) * batch / np
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
	if batch < 1 || len(input) < batch*n.InputSize() || len(policy) < batch*n.PolicySize() || len(value) < batch*n.ValueSize() {
		return fmt.Errorf("nets: ForwardTrain(batch=%d): input %d (want %d), policy %d (want %d), value %d (want %d)",
			batch, len(input), batch*n.InputSize(), len(policy), batch*n.PolicySize(), len(value), batch*n.ValueSize())
	}
	n.reserveTrain(batch)
	t := &n.tr
	t.batch = batch
	act := func(b int) []float32 { return t.act[b][:batch*n.bufs[b].size()] }
	nchwToNHWC(batch, n.cfg.InputPlanes, n.cfg.Height*n.cfg.Width, input, act(0))
	wino := n.TrainConvAlgorithm() == ConvWinograd
	bf16 := t.prec == BF16
	if bf16 && len(t.fwb) != len(n.units) {
		t.fwb, t.bwb = make([]bf16Weights, len(n.units)), make([]bf16Weights, len(n.units))
	}
	h, w := n.cfg.Height, n.cfg.Width
	// conv3 is the 3x3 convolution of unit i, u (see kernels.Conv3x3BiasAct).
	// With shift non-nil (a convolution into batch norm: no bias,
	// residual or activation), the Winograd paths also add the outputs'
	// moments around shift into t.parts[0].acc in the output transform's
	// store (kernels.Conv3x3WinogradMoments) and return true; the others
	// return false and bnForward takes the moments in a pass of its own.
	conv3 := func(i int, u *unit, a []float32, bias, res []float32, relu bool, out, shift []float32) (summed bool) {
		var s1, s2 []float64
		if shift != nil {
			s1, s2 = t.parts[0].acc[0][:u.cout], t.parts[0].acc[1][:u.cout]
			clear(s1)
			clear(s2)
		}
		if bf16 && u.cin%2 == 0 {
			wu := t.wu[:n.trainWinoPositions(u.cin, u.cout)*u.cin*u.cout]
			if wino && u.cin >= winoMinCin && n.trainWino34(u.cin, u.cout) {
				packBF16(&t.fwb[i], u.w.Data, u.cin, u.cout, packWino34, wu)
				if shift != nil {
					kernels.Conv3x3Winograd34BF16Moments(a, batch, u.cin, h, w, t.fwb[i].w34, shift, s1, s2, out)
					return true
				}
				kernels.Conv3x3Winograd34BF16(a, batch, u.cin, h, w, t.fwb[i].w34, bias, res, relu, out)
				return false
			}
			if wino && u.cin >= winoMinCin {
				packBF16(&t.fwb[i], u.w.Data, u.cin, u.cout, packWino22, wu)
				if shift != nil {
					kernels.Conv3x3WinogradBF16Moments(a, batch, u.cin, h, w, t.fwb[i].wu, shift, s1, s2, out)
					return true
				}
				kernels.Conv3x3WinogradBF16(a, batch, u.cin, h, w, t.fwb[i].wu, bias, res, relu, out)
				return false
			}
			packBF16(&t.fwb[i], u.w.Data, u.cin, u.cout, packIm2col, wu)
			kernels.Conv3x3BiasActBF16(a, batch, u.cin, h, w, t.fwb[i].w, bias, res, relu, out)
			return false
		}
		if wino && u.cin >= winoMinCin && n.trainWino34(u.cin, u.cout) {
			wu := t.wu[:30*u.cin*u.cout]
			kernels.WinogradWeights34(u.w.Data, u.cin, u.cout, wu)
			if shift != nil {
				kernels.Conv3x3Winograd34Moments(a, batch, u.cin, h, w, wu, u.cout, shift, s1, s2, out)
				return true
			}
			kernels.Conv3x3Winograd34(a, batch, u.cin, h, w, wu, u.cout, bias, res, relu, out)
			return false
		}
		if wino && u.cin >= winoMinCin {
			wu := t.wu[:16*u.cin*u.cout]
			kernels.WinogradWeights(u.w.Data, u.cin, u.cout, wu)
			if shift != nil {
				kernels.Conv3x3WinogradMoments(a, batch, u.cin, h, w, wu, u.cout, shift, s1, s2, out)
				return true
			}
			kernels.Conv3x3Winograd(a, batch, u.cin, h, w, wu, u.cout, bias, res, relu, out)
			return false
		}
		kernels.Conv3x3BiasAct(a, batch, u.cin, h, w, u.w.Data, u.cout, bias, res, relu, out)
		return false
	}
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
			if u.spatial() {
				conv3(i, u, a, bias, res, u.relu, out, nil)
			} else {
				k, w := u.gemmW(u.w.Data)
				kernels.GemmBiasAct(m, u.cout, k, a, k, w, u.cout, bias, res, u.relu, out, u.cout)
			}
		} else {
			z := t.pre[i][:m*u.cout]
			summed := false
			if u.spatial() {
				summed = conv3(i, u, a, nil, nil, false, z, n.bnShift(u))
			} else {
				k, w := u.gemmW(u.w.Data)
				kernels.Gemm(false, false, m, u.cout, k, 1, a, k, w, u.cout, 0, z, u.cout)
			}
			n.bnForward(i, u, batch, z, res, out, summed)
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

// bnShift returns the shift around which the convolution of unit u,
// followed by batch norm, sums its outputs' moments (see bnForward): the
// running means, within a few standard deviations of the batch's once
// training has run a few steps, or 0 where one is not finite (in
// n.tr.f32[2]).
func (n *Net) bnShift(u *unit) []float32 {
	shift := n.tr.f32[2][:u.cout]
	for j, v := range u.bn.mean.Data[:u.cout] {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			v = 0
		}
		shift[j] = v
	}
	return shift
}

// bnForward normalises z (batch*u.cells rows x u.cout) with batch
// statistics into out, adds res (unless nil), applies u.relu, and updates
// the running averages. Unless summed (the convolution that wrote z took
// the moments in its store, around n.tr.f32[2], into n.tr.parts[0].acc:
// see ForwardTrain), the sums run here per batch slice in float64 and
// are added in slice order.
func (n *Net) bnForward(i int, u *unit, batch int, z, res, out []float32, summed bool) {
	t := &n.tr
	c := u.cout
	m := batch * u.cells
	np := numParts(batch)
	// One pass for both moments, around a shift (row 0 of z, within a few
	// standard deviations of the mean, or bnShift's) so the sums do not
	// cancel: with e = z - shift, mean = shift + sum e/m and the sum of
	// squared deviations is sum e^2 - (sum e)^2/m.
	mean, istd := t.mean[i], t.istd[i]
	task := &t.bnf
	*task = bnForwardTask{n: n, u: u, batch: batch, np: np, z: z, res: res, out: out, mean: mean[:c]}
	nsum := 1 // slices holding sums
	if summed {
		for j := range mean {
			mean[j] = float64(t.f32[2][j])
		}
	} else {
		for j := range mean {
			mean[j] = float64(z[j])
		}
		kernels.Parallel(np, task)
		nsum = np
	}
	g, b := u.bn.gamma.Data, u.bn.beta.Data
	rm, rv := u.bn.mean.Data, u.bn.variance.Data
	for j := range istd {
		var s1, s2 float64
		for p := range nsum {
			s1 += t.parts[p].acc[0][j]
			s2 += t.parts[p].acc[1][j]
		}
		mean[j] += s1 / float64(m)
		sq := max(s2-s1*s1/float64(m), 0)
		v := sq / float64(m)
		istd[j] = 1 / math.Sqrt(v+bnEps)
		rm[j] = float32((1-bnMomentum)*float64(rm[j]) + bnMomentum*mean[j])
		rv[j] = float32((1-bnMomentum)*float64(rv[j]) + bnMomentum*sq/float64(m-1))
	}
	// out = z*scale + shift per channel, in float32 (the per-element
	// float64 arithmetic cost a tenth of a training step).
	scale, shift := t.f32[0][:c], t.f32[1][:c]
	for j := range scale {
		sc := istd[j] * float64(g[j])
		scale[j] = float32(sc)
		shift[j] = float32(float64(b[j]) - mean[j]*sc)
	}
	task.scale, task.shift = scale, shift
	kernels.Parallel(np, task)
	*task = bnForwardTask{} // drop the references
}

// bnForwardTask is bnForward's two passes over the batch slices, run by
// kernels.Parallel (a field of trainScratch, so that running them
// allocates nothing): with scale nil, the moments of z around mean into
// the slices' sums; then out = z*scale + shift (+ res) and u's ReLU.
type bnForwardTask struct {
	n            *Net
	u            *unit
	batch, np    int
	z, res, out  []float32
	mean         []float64
	scale, shift []float32
}

// RunPart runs the current pass on batch slice p.
func (k *bnForwardTask) RunPart(p int) {
	c := k.u.cout
	s0, s1 := partSamples(k.batch, k.np, p)
	r0, r1 := s0*k.u.cells, s1*k.u.cells
	if k.scale == nil {
		acc := &k.n.tr.parts[p].acc
		m1, m2 := acc[0][:c], acc[1][:c]
		clear(m1)
		clear(m2)
		kernels.Moments(k.z[r0*c:r1*c], c, k.mean, m1, m2)
		return
	}
	var rp []float32
	if k.res != nil {
		rp = k.res[r0*c : r1*c]
	}
	kernels.ScaleShift(k.z[r0*c:r1*c], c, k.scale, k.shift, rp, k.u.relu, k.out[r0*c:r1*c])
}

// ZeroGrad clears every parameter gradient.
func (n *Net) ZeroGrad() {
	for _, p := range n.params {
		clear(p.Grad)
	}
}

// Backward back-propagates the gradients of the loss with respect to the
// outputs of the last ForwardTrain (dPolicy: batch x PolicySize logits,
// dValue: batch x ValueSize values after tanh) and ADDS the parameter gradients into
// Param.Grad (call ZeroGrad first for a fresh gradient). It consumes the
// stored activations: call ForwardTrain again before the next Backward.
func (n *Net) Backward(dPolicy, dValue []float32) error {
	t := &n.tr
	if !t.valid {
		return fmt.Errorf("nets: Backward without a preceding ForwardTrain")
	}
	batch := t.batch
	if len(dPolicy) < batch*n.PolicySize() || len(dValue) < batch*n.ValueSize() {
		return fmt.Errorf("nets: Backward: dPolicy %d (want %d), dValue %d (want %d)", len(dPolicy), batch*n.PolicySize(), len(dValue), batch*n.ValueSize())
	}
	t.valid = false
	grad := func(b int) []float32 { return t.grad[b][:batch*n.bufs[b].size()] }
	act := func(b int) []float32 { return t.act[b][:batch*n.bufs[b].size()] }
	np := numParts(batch)
	wino := n.TrainConvAlgorithm() == ConvWinograd
	// A buffer's gradient is the sum of its consumers' contributions; the
	// first one to arrive (units run in reverse) overwrites the stale
	// values instead of adding to them, so no pass clears the buffers
	// (clearing was a tenth of Sequence's step). Buffer 0, the input, gets
	// none.
	for b := range t.fresh {
		t.fresh[b] = true
	}
	copy(grad(n.policy), dPolicy)
	copy(grad(n.value), dValue)
	t.fresh[n.policy], t.fresh[n.value] = false, false
	for i := len(n.units) - 1; i >= 0; i-- {
		u := n.units[i]
		m := batch * u.cells
		c := u.cout
		d, y := grad(u.out), act(u.out)
		size := n.bufs[u.out].size() // values per sample of d and y
		if t.fresh[u.out] {
			clear(d) // nothing reads u's output (not in the presets)
			t.fresh[u.out] = false
		}
		var dres, z []float32
		resFresh := false // dres gets its first contribution: copy, not add
		if u.res >= 0 {
			dres = grad(u.res)
			resFresh = t.fresh[u.res]
			t.fresh[u.res] = false
		}
		if u.bn != nil {
			z = t.pre[i][:m*c]
		}
		// Pass 1, per batch slice: the activation's derivative, the
		// residual's gradient, and batch norm's per-channel sums.
		bw := &t.bw
		*bw = backwardUnit{n: n, i: i, u: u, batch: batch, np: np, size: size, c: c, d: d, y: y, z: z,
			dres: dres, resFresh: resFresh, fused: z != nil && u.relu && !u.tanh && size == u.cells*c, pass: 1}
		kernels.Parallel(np, bw)
		dz := d
		if u.bn != nil {
			dz = t.dz[:m*c]
			n.bnCoeffs(i, u, m, np)
		}
		a := act(u.in)
		conv3 := u.spatial()
		var din []float32
		inFresh := false // din gets its first contribution: overwrite, not add
		if u.in != 0 {
			din = grad(u.in)
			inFresh = t.fresh[u.in]
			t.fresh[u.in] = false
		}
		winoIn := false         // the input gradient by Winograd, with n.tr.wu
		in34 := false           // ... by F(3x4,3x3)
		var inBF16 *bf16Weights // the input gradient in bfloat16, with these weights
		if conv3 && din != nil {
			// The input gradient of a 3x3 same convolution is the 3x3 same
			// convolution of dz with the kernel rotated by 180 degrees and
			// the channel roles swapped: wt[(kh*3+kw)*cout+co][ci] =
			// W[((2-kh)*3+2-kw)*cin+ci][co].
			wt := t.wt[:u.k*c]
			for tap := range 9 {
				src := u.w.Data[(8-tap)*u.cin*c : (9-tap)*u.cin*c]
				dst := wt[tap*c*u.cin : (tap+1)*c*u.cin]
				for ci := range u.cin {
					for co, v := range src[ci*c : (ci+1)*c] {
						dst[co*u.cin+ci] = v
					}
				}
			}
			winoIn = wino && c >= winoMinCin
			switch {
			case t.prec == BF16 && c%2 == 0:
				how := packIm2col
				switch {
				case winoIn && n.trainWino34(c, u.cin):
					in34, how = true, packWino34
				case winoIn:
					how = packWino22
				}
				packBF16(&t.bwb[i], wt, c, u.cin, how, t.wu)
				inBF16 = &t.bwb[i]
			case winoIn && n.trainWino34(c, u.cin):
				in34 = true
				kernels.WinogradWeights34(wt, c, u.cin, t.wu[:30*c*u.cin])
			case winoIn:
				kernels.WinogradWeights(wt, c, u.cin, t.wu[:16*c*u.cin])
			}
		}
		// Pass 2, per batch slice: batch norm's input gradient, the bias
		// gradient and, for 3x3 convolutions, the weight and input
		// gradients, each slice into its own partial sums.
		bw.dz, bw.a, bw.din, bw.inFresh, bw.conv3, bw.winoIn, bw.inBF16, bw.pass = dz, a, din, inFresh, conv3, winoIn, inBF16, 2
		bw.winoW = conv3 && wino && u.cin >= winoMinCin
		bw.in34, bw.w34 = in34, bw.winoW && n.trainWino34(u.cin, c)
		kernels.Parallel(np, bw)
		winoW, w34 := bw.winoW, bw.w34
		*bw = backwardUnit{} // drop the references
		if w34 {
			// As below, for F(3x4,3x3)'s 30 transformed positions.
			du := t.parts[0].du[:30*u.cin*c]
			for p := 1; p < np; p++ {
				kernels.Axpy(1, t.parts[p].du[:len(du)], du)
			}
			kernels.WinogradWeights34Grad(du, u.cin, c, t.parts[0].dw)
		} else if winoW {
			// The slices' transformed-weight gradients, added up, then
			// transformed back once.
			du := t.parts[0].du[:16*u.cin*c]
			for p := 1; p < np; p++ {
				kernels.Axpy(1, t.parts[p].du[:len(du)], du)
			}
			kernels.WinogradWeightsGrad(du, u.cin, c, t.parts[0].dw)
		}
		for p := range np {
			if u.b != nil {
				kernels.Axpy(1, t.parts[p].db[:c], u.b.Grad)
			}
			if conv3 && (p == 0 || !winoW) {
				kernels.Axpy(1, t.parts[p].dw[:u.k*c], u.w.Grad)
			}
		}
		if !conv3 {
			// Dense, 1x1 and pointwise units (gemmW).
			k, wg := u.gemmW(u.w.Grad)
			_, wd := u.gemmW(u.w.Data)
			kernels.Gemm(true, false, k, c, m, 1, a, k, dz, c, 1, wg, c)
			if din != nil {
				beta := float32(1)
				if inFresh {
					beta = 0
				}
				kernels.Gemm(false, true, m, k, c, 1, dz, c, wd, c, beta, din, k)
			}
		}
	}
	return nil
}

// backwardUnit is one unit's backward passes over the batch slices, run
// by kernels.Parallel: a field of trainScratch, so that running them
// allocates nothing (closures passed to other goroutines escape to the
// heap).
type backwardUnit struct {
	n                  *Net
	i                  int
	u                  *unit
	batch, np, size, c int // size: values per sample of d and y
	// d and y are the gradient and value of u's output, z its batch
	// norm's input (nil without), dz the gradient before batch norm, dres
	// the residual's gradient, a and din u's input and its gradient.
	d, y, z, dz, dres, a, din []float32
	// fused: batch norm + ReLU in one pass; resFresh, inFresh: dres, din
	// get their first contribution (overwrite, not add); winoIn: the input
	// gradient by Winograd; winoW: the weight gradient by Winograd; in34,
	// w34: either by F(3x4,3x3) (kernels.Conv3x3Winograd34,
	// kernels.Conv3x3Winograd34WeightGrad) instead of F(2x2,3x3).
	fused, resFresh, inFresh, conv3, winoIn, winoW, in34, w34 bool
	// inBF16, unless nil, holds the bfloat16 weights of the input gradient.
	inBF16 *bf16Weights
	pass   int // 1 or 2
}

// RunPart runs the current pass on batch slice p.
func (b *backwardUnit) RunPart(p int) {
	if b.pass == 1 {
		b.pass1(p)
		return
	}
	b.pass2(p)
}

// pass1 is, on slice p, the activation's derivative, the residual's
// gradient, and batch norm's per-channel sums.
func (b *backwardUnit) pass1(p int) {
	n, t, u, c, size := b.n, &b.n.tr, b.u, b.c, b.size
	s0, s1 := partSamples(b.batch, b.np, p)
	dp, yp := b.d[s0*size:s1*size], b.y[s0*size:s1*size]
	if b.fused {
		// The residual tower's case in one pass over the rows.
		var rp []float32
		if b.dres != nil {
			rp = b.dres[s0*size : s1*size]
		}
		bnReLUSums(&t.parts[p], c, dp, yp, b.z[s0*size:s1*size], rp, !b.resFresh)
		return
	}
	if u.tanh {
		for j, v := range yp {
			dp[j] *= 1 - v*v
		}
	}
	if u.relu {
		// d = 0 where the unit's output is 0, without a branch (the
		// sign is unpredictable; the branch mispredicts often).
		for j, v := range yp {
			keep := ^uint32(0)
			if v <= 0 {
				keep = 0
			}
			dp[j] = math.Float32frombits(math.Float32bits(dp[j]) & keep)
		}
	}
	if b.dres != nil && b.resFresh {
		copy(b.dres[s0*size:s1*size], dp)
	} else if b.dres != nil {
		kernels.Axpy(1, dp, b.dres[s0*size:s1*size])
	}
	if b.z != nil {
		n.bnSums(&t.parts[p], c, b.d[s0*u.cells*c:s1*u.cells*c], b.z[s0*u.cells*c:s1*u.cells*c])
	}
}

// pass2 is, on slice p, batch norm's input gradient, the bias gradient
// and, for 3x3 convolutions, the weight and input gradients, into the
// slice's partial sums.
func (b *backwardUnit) pass2(p int) {
	u, c := b.u, b.c
	ps := &b.n.tr.parts[p]
	s0, s1 := partSamples(b.batch, b.np, p)
	if u.b != nil {
		clear(ps.db[:c])
	}
	if b.conv3 {
		b.n.conv3Backward(u, ps, s0, s1, b.a, b.dz, b.din, b.inFresh, b.winoIn, b.winoW, b.inBF16, b)
	} else {
		b.prep(ps, s0*u.cells, s1*u.cells)
	}
}

// prep computes rows [r0, r1) of dz and adds their bias gradient into
// ps.db; a 3x3 convolution calls it block by block, just before the
// block's GEMMs read those rows.
func (b *backwardUnit) prep(ps *partScratch, r0, r1 int) {
	u, c, dz := b.u, b.c, b.dz
	if u.bn != nil {
		b.n.bnInputGrad(c, b.d[r0*c:r1*c], b.z[r0*c:r1*c], dz[r0*c:r1*c])
	}
	if u.b != nil {
		db := ps.db[:c]
		for r := r0; r < r1; r++ {
			for j, v := range dz[r*c : (r+1)*c] {
				db[j] += v
			}
		}
	}
}

// trainBlockRows is the target number of im2col rows (board cells of whole
// samples) a 3x3 convolution's backward pass expands at a time: the block
// (rows x 9*Cin floats, about 300 KB for Connect Four) stays in L2 while
// the weight-gradient GEMM reads it, instead of streaming a batch-sized
// im2col matrix through DRAM. Reading the im2col matrix transposed for the weight gradient
// with a K dimension of a whole batch measured 4x slower than the forward
// GEMM of the same size.
const trainBlockRows = 128

// conv3Backward writes the weight gradient of 3x3 convolution u over
// samples [s0, s1) into ps.dw and, unless din is nil (u reads the network
// input), adds their input gradient into din, given u's input a and the
// gradient dz of its output (before the activation). The weight gradient
// runs block of samples by block of samples, calling bw.prep(ps, r0, r1) to
// compute rows [r0, r1) of dz before it reads them (im2col + GEMM), or,
// when winoW is set, by Winograd over the whole slice into ps.du, the
// gradient of the transformed weights, which Backward adds up over the
// slices and transforms back into ps.dw of slice 0; the input gradient is
// then one convolution of dz with n.tr.wt, u's weights rotated (see
// Backward), added into din (written over din when fresh), which needs no col2im and runs at the speed of
// the forward convolution (by Winograd with n.tr.wu, wt transformed, when
// wino is set; in bfloat16 with inBF16's weights unless it is nil).
func (n *Net) conv3Backward(u *unit, ps *partScratch, s0, s1 int, a, dz, din []float32, fresh, wino, winoW bool, inBF16 *bf16Weights, bw *backwardUnit) {
	h, w := n.cfg.Height, n.cfg.Width
	per := max(1, trainBlockRows/u.cells) // samples per block
	wt := n.tr.wt[:u.k*u.cout]
	dw := ps.dw[:u.k*u.cout]
	if winoW {
		// By Winograd: dz of the whole slice first (the GEMMs' K is the
		// slice's tiles), then the transformed weights' gradient, which
		// Backward adds up over the slices and transforms back.
		bw.prep(ps, s0*u.cells, s1*u.cells)
		pos, grad := 16, kernels.Conv3x3WinogradWeightGrad
		switch {
		case bw.w34 && n.tr.prec == BF16 && u.cin%16 == 0 && u.cout%16 == 0:
			pos, grad = 30, kernels.Conv3x3Winograd34WeightGradBF16
		case bw.w34:
			pos, grad = 30, kernels.Conv3x3Winograd34WeightGrad
		case n.tr.prec == BF16 && u.cin%16 == 0 && u.cout%16 == 0:
			grad = kernels.Conv3x3WinogradWeightGradBF16
		}
		du := ps.du[:pos*u.cin*u.cout]
		clear(du)
		grad(a[s0*u.cells*u.cin:s1*u.cells*u.cin], s1-s0, u.cin, h, w, dz[s0*u.cells*u.cout:s1*u.cells*u.cout], u.cout, du)
	} else {
		beta := float32(0)
		for b0 := s0; b0 < s1; b0 += per {
			nb := min(per, s1-b0)
			rows := nb * u.cells
			bw.prep(ps, b0*u.cells, b0*u.cells+rows)
			cols := ps.cols[:rows*u.k]
			src := a[b0*u.cells*u.cin : (b0+nb)*u.cells*u.cin]
			d := dz[b0*u.cells*u.cout : (b0+nb)*u.cells*u.cout]
			kernels.Im2Col3x3(src, nb, u.cin, h, w, cols)
			kernels.Gemm(true, false, u.k, u.cout, rows, 1, cols, u.k, d, u.cout, beta, dw, u.cout)
			beta = 1
		}
	}
	if din != nil {
		dp := din[s0*u.cells*u.cin : s1*u.cells*u.cin]
		res := dp
		if fresh {
			res = nil
		}
		dzp := dz[s0*u.cells*u.cout : s1*u.cells*u.cout]
		switch {
		case inBF16 != nil && wino && bw.in34:
			kernels.Conv3x3Winograd34BF16(dzp, s1-s0, u.cout, h, w, inBF16.w34, nil, res, false, dp)
			return
		case inBF16 != nil && wino:
			kernels.Conv3x3WinogradBF16(dzp, s1-s0, u.cout, h, w, inBF16.wu, nil, res, false, dp)
			return
		case inBF16 != nil:
			kernels.Conv3x3BiasActBF16(dzp, s1-s0, u.cout, h, w, inBF16.w, nil, res, false, dp)
			return
		}
		if wino && bw.in34 {
			kernels.Conv3x3Winograd34(dzp, s1-s0, u.cout, h, w, n.tr.wu[:30*u.cout*u.cin], u.cin, nil, res, false, dp)
			return
		}
		if wino {
			kernels.Conv3x3Winograd(dzp, s1-s0, u.cout, h, w, n.tr.wu[:16*u.cout*u.cin], u.cin, nil, res, false, dp)
			return
		}
		kernels.Conv3x3BiasAct(dz[s0*u.cells*u.cout:s1*u.cells*u.cout], s1-s0, u.cout, h, w, wt, u.cin, nil, res, false, dp)
	}
}

// bnSums writes into ps.acc the per-channel sums of d and d*z over the rows
// of one batch slice (c channels per row).
func (n *Net) bnSums(ps *partScratch, c int, d, z []float32) {
	sd, sdz := ps.acc[0][:c], ps.acc[1][:c]
	clear(sd)
	clear(sdz)
	for r := 0; r+c <= len(d); r += c {
		dr, zr := d[r:r+c], z[r:r+c]
		zr = zr[:len(dr)]
		for j, v := range dr {
			sd[j] += float64(v)
			sdz[j] += float64(v) * float64(zr[j])
		}
	}
}

// bnReLUSums is, over the rows of one batch slice, the ReLU derivative
// (d = 0 where y <= 0), the residual gradient (res += d, or res = d
// unless addRes; nothing if res is nil) and bnSums, in one pass
// (kernels.ReLUSums).
func bnReLUSums(ps *partScratch, c int, d, y, z, res []float32, addRes bool) {
	sd, sdz := ps.acc[0][:c], ps.acc[1][:c]
	clear(sd)
	clear(sdz)
	kernels.ReLUSums(d, y, z, res, addRes, c, sd, sdz)
}

// bnCoeffs adds up the slices' sums of bnSums, accumulates the gamma and
// beta gradients, and sets n.tr.f32 to the coefficients of bnInputGrad:
// dz = gamma*istd*(d - mean(d) - xhat*mean(d*xhat)) = d*k1 + z*k2 + k3.
func (n *Net) bnCoeffs(i int, u *unit, m, np int) {
	t := &n.tr
	c := u.cout
	mean, istd := t.mean[i], t.istd[i]
	g := u.bn.gamma.Data
	fm := float64(m)
	k1, k2, k3 := t.f32[0][:c], t.f32[1][:c], t.f32[2][:c]
	for j := 0; j < c; j++ {
		var sd, sdz float64
		for p := range np {
			sd += t.parts[p].acc[0][j]
			sdz += t.parts[p].acc[1][j]
		}
		// sdx = sum d*xhat = istd*(sum d*z - mean*sum d).
		sdx := (sdz - mean[j]*sd) * istd[j]
		u.bn.beta.Grad[j] += float32(sd)
		u.bn.gamma.Grad[j] += float32(sdx)
		gi := float64(g[j]) * istd[j]
		a := gi * istd[j] * sdx / fm
		k1[j] = float32(gi)
		k2[j] = float32(-a)
		k3[j] = float32(a*mean[j] - gi*sd/fm)
	}
}

// bnInputGrad writes dz = d*k1 + z*k2 + k3 per channel (see bnCoeffs) over
// rows of c channels.
func (n *Net) bnInputGrad(c int, d, z, dz []float32) {
	t := &n.tr
	kernels.Affine2(d, z, c, t.f32[0][:c], t.f32[1][:c], t.f32[2][:c], dz)
}
