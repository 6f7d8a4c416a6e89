package nets

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/canopy-go/canopy/games"
)

// Grow returns a copy of src with a wider residual tower (channels) and
// more residual blocks (blocks) that computes the same function: the same
// policy logits and values, in inference and in training mode, up to
// float32 rounding. Training can then continue in the larger network from
// where src stood instead of from random weights (Chen, Goodfellow and
// Shlens 2016, "Net2Net: Accelerating Learning via Knowledge Transfer").
// src must have AlphaZero heads; channels and blocks may not be below
// src's (0 keeps src's).
//
// Wider: every new tower channel j copies an existing channel g(j) (chosen
// with seed): the convolutions writing the tower give j the weights and
// batch-norm parameters and statistics of g(j), so j carries g(j)'s
// activations everywhere, the residual stream included. Every weight
// reading channel k is then split among k and its copies in proportions
// that sum to one, so that the reader's sum over channels is unchanged.
// The proportions are unequal (1 +- up to 10%, normalised), because copies
// split equally would receive equal gradients and stay copies for ever.
//
// Deeper: new blocks go after src's, with He-normal convolutions (as New)
// and the second batch norm's scale and shift at zero, so the block adds
// zero to the stream and its ReLU passes the stream (already non-negative)
// through; the scale's gradient is not zero, so training grows the block.
//
// Weights that neither read nor write a copied channel keep their values
// exactly, so growing only in depth gives the same outputs bit for bit.
func Grow(src *Net, channels, blocks int, seed uint64) (*Net, error) {
	old := src.Config()
	if old.Head != HeadAlphaZero {
		return nil, fmt.Errorf("nets: grow: network with %s heads; only AlphaZero-head networks (a residual tower) can grow", old.Head)
	}
	if channels == 0 {
		channels = old.Channels
	}
	if blocks == 0 {
		blocks = old.Blocks
	}
	if channels < old.Channels || blocks < old.Blocks {
		return nil, fmt.Errorf("nets: grow: %d channels x %d blocks is smaller than the network's %d x %d (grow only adds channels and blocks)",
			channels, blocks, old.Channels, old.Blocks)
	}
	cfg := old
	cfg.Channels, cfg.Blocks = channels, blocks
	if channels != old.Channels || blocks != old.Blocks {
		cfg.Preset = resizedPreset(old.Preset, channels, blocks)
	}
	dst, err := New(cfg, seed)
	if err != nil {
		return nil, fmt.Errorf("nets: grow: %v", err)
	}

	// g maps each tower channel of dst to the channel of src it copies;
	// share[j] is j's part of the weights that read g(j).
	rng := games.NewRand(seed ^ 0x9e3779b97f4a7c15)
	c0 := old.Channels
	g := make([]int, channels)
	for j := range g {
		g[j] = j
		if j >= c0 {
			g[j] = rng.IntN(c0)
		}
	}
	copies := make([]int, c0)
	for _, k := range g {
		copies[k]++
	}
	share := make([]float64, channels)
	total := make([]float64, c0)
	for j, k := range g {
		share[j] = 1
		if copies[k] > 1 {
			share[j] = 1 + 0.1*(2*rng.Float64()-1)
		}
		total[k] += share[j]
	}
	for j, k := range g {
		share[j] /= total[k]
	}

	from := map[string]*Param{}
	for _, p := range src.params {
		from[p.Name] = p
	}
	for _, p := range dst.params {
		q, ok := from[p.Name]
		if !ok {
			// A new block's tensor: keep New's values, except that the
			// block's second batch norm outputs zero.
			if strings.HasSuffix(p.Name, ".bn2.weight") {
				clear(p.Data)
			}
			continue
		}
		if err := growTensor(p, q, c0, g, share); err != nil {
			return nil, fmt.Errorf("nets: grow: %v", err)
		}
	}
	dst.Invalidate()
	return dst, nil
}

// growTensor fills dst's tensor from src's, in file order (PyTorch's
// [cout][cin][kh][kw] for convolutions, [cout] for their vectors): every
// axis whose size differs is a tower axis, of src's size c0, indexed
// through g; weights read through a convolution's input axis (axis 1 of a
// 4-D tensor) are scaled by share.
func growTensor(dst, src *Param, c0 int, g []int, share []float64) error {
	if len(dst.Shape) != len(src.Shape) {
		return fmt.Errorf("tensor %s: shape %v against %v", dst.Name, dst.Shape, src.Shape)
	}
	tower := make([]bool, len(dst.Shape))
	for a := range dst.Shape {
		switch {
		case dst.Shape[a] == src.Shape[a]:
		case src.Shape[a] == c0 && dst.Shape[a] == len(g):
			tower[a] = true
		default:
			return fmt.Errorf("tensor %s: axis %d has %d entries, want %d or a tower of %d", dst.Name, a, dst.Shape[a], src.Shape[a], c0)
		}
	}
	in := make([]float32, len(src.Data))
	src.ToFile(in)
	out := make([]float32, len(dst.Data))
	idx := make([]int, len(dst.Shape))
	for i := range out {
		// idx is i's multi-index in dst's shape; s is the matching index of src.
		s, scale := 0, 1.0
		for a, d := range idx {
			if tower[a] {
				if a == 1 && len(idx) == 4 {
					scale *= share[d]
				}
				d = g[d]
			}
			s = s*src.Shape[a] + d
		}
		out[i] = float32(float64(in[s]) * scale)
		for a := len(idx) - 1; a >= 0; a-- {
			if idx[a]++; idx[a] < dst.Shape[a] {
				break
			}
			idx[a] = 0
		}
	}
	return dst.FromFile(out)
}

// resizedPreset names a grown network's architecture as `canopy net init
// --channels --blocks` does: the preset, without an earlier size suffix,
// then -CxB.
func resizedPreset(preset string, channels, blocks int) string {
	return sizeSuffix.ReplaceAllString(preset, "") + fmt.Sprintf("-%dx%d", channels, blocks)
}

var sizeSuffix = regexp.MustCompile(`-\d+x\d+$`)
