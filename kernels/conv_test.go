package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestConv3x3BiasAct checks the fused convolution against the direct
// six-loop convolution of directConv3x3 (float64) plus bias, residual and
// ReLU computed by hand, on every implementation with 1 and 2 threads.
// The shapes cover a single pixel, images narrower than the kernel,
// channel counts that leave column tails, blocks of im2col rows that span
// images, and batches large enough to split over threads.
func TestConv3x3BiasAct(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	shapes := [][5]int{{1, 1, 1, 1, 1}, {2, 3, 6, 7, 5}, {1, 64, 6, 7, 64}, {3, 2, 10, 10, 33},
		{1, 4, 1, 5, 3}, {5, 7, 2, 1, 70}, {24, 64, 6, 7, 64}, {6, 32, 10, 10, 128}}
	for _, sh := range shapes {
		c := newConvCase(r, sh)
		conv := directConv3x3(c.in, c.batch, c.cin, c.h, c.w, c.wt, c.cout)
		eachConvMode(t, conv, c.bias, c.res, func(bias, res []float32, relu bool, out []float32) {
			Conv3x3BiasAct(c.in, c.batch, c.cin, c.h, c.w, c.wt, c.cout, bias, res, relu, out)
		}, func(label string, out, want []float32) {
			closeEnough(t, fmt.Sprintf("%s conv %v", label, sh), out, want, 9*c.cin)
		})
	}
}

// convCase is one convolution test problem: its shape (batch, cin, h,
// w, cout) and random operands in [-1, 1].
type convCase struct {
	batch, cin, h, w, cout int
	in, wt, bias, res      []float32
}

func newConvCase(r *rand.Rand, sh [5]int) convCase {
	c := convCase{batch: sh[0], cin: sh[1], h: sh[2], w: sh[3], cout: sh[4]}
	m := c.batch * c.h * c.w
	c.in = randSlice(r, m*c.cin)
	c.wt = randSlice(r, 9*c.cin*c.cout)
	c.bias = randSlice(r, c.cout)
	c.res = randSlice(r, m*c.cout)
	return c
}

// eachConvMode runs conv (a 3x3 convolution with the epilogue arguments of
// Conv3x3BiasAct) in the four epilogue modes, plain, bias+ReLU, residual
// and in-place residual, on every implementation with 1 and 2 threads,
// and hands check each output with the expected one: the direct
// convolution plus bias, residual and ReLU computed here.
func eachConvMode(t *testing.T, direct, bias, res []float32, conv func(bias, res []float32, relu bool, out []float32), check func(label string, out, want []float32)) {
	t.Helper()
	cout := len(bias)
	for _, mode := range []string{"plain", "bias+relu", "residual", "in-place"} {
		want := make([]float32, len(direct))
		for i, v := range direct {
			switch mode {
			case "bias+relu":
				v = max(v+bias[i%cout], 0)
			case "residual", "in-place":
				v = max(v+bias[i%cout]+res[i], 0)
			}
			want[i] = v
		}
		for _, name := range implNames() {
			use(t, name)
			for _, th := range []int{1, 2} {
				prev := SetThreads(th)
				out := make([]float32, len(direct))
				for i := range out {
					out[i] = 42 // must be overwritten
				}
				switch mode {
				case "plain":
					conv(nil, nil, false, out)
				case "bias+relu":
					conv(bias, nil, true, out)
				case "residual":
					conv(bias, res, true, out)
				case "in-place":
					copy(out, res)
					conv(bias, out, true, out)
				}
				SetThreads(prev)
				check(fmt.Sprintf("%s t%d %s", name, th, mode), out, want)
			}
		}
	}
}

func TestConv3x3BiasActBadArgs(t *testing.T) {
	x := make([]float32, 64)
	cases := []struct {
		name string
		f    func()
	}{
		{"negative batch", func() { Conv3x3BiasAct(x, -1, 1, 2, 2, x, 1, nil, nil, false, x) }},
		{"image too short", func() { Conv3x3BiasAct(x, 2, 1, 6, 6, x, 1, nil, nil, false, x) }},
		{"weights too short", func() { Conv3x3BiasAct(x, 1, 2, 2, 2, x[:17], 1, nil, nil, false, x) }},
		{"output too short", func() { Conv3x3BiasAct(x, 1, 1, 2, 2, x, 4, nil, nil, false, x[:15]) }},
		{"bias too short", func() { Conv3x3BiasAct(x, 1, 1, 2, 2, x, 4, x[:3], nil, false, x) }},
		{"residual too short", func() { Conv3x3BiasAct(x, 1, 1, 2, 2, x, 4, nil, x[:15], false, x) }},
	}
	for _, c := range cases {
		func() {
			defer func() {
				if e := recover(); e == nil {
					t.Errorf("%s: no panic", c.name)
				}
			}()
			c.f()
		}()
	}
}
