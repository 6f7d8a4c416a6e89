package cudabackend

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/kernels"
	"github.com/canopy-go/canopy/nets"
)

// runPlanCPU executes the plan with package kernels, buffer by buffer, the
// way the GPU backend does (including slot sharing), so that the plan can
// be checked against nets' own Forward without a GPU.
func runPlanCPU(p *plan, batch int, input, policy, value []float32) {
	cfg := p.cfg
	slot, per := p.slots()
	store := make([][]float32, len(per))
	for i, n := range per {
		store[i] = make([]float32, batch*n)
	}
	buf := func(b int) []float32 { return store[slot[b]][:batch*p.bufs[b].size()] }
	cols := make([]float32, batch*p.maxCols())
	planes, cells := cfg.InputPlanes, cfg.Height*cfg.Width
	in0 := buf(0)
	for n := 0; n < batch; n++ { // planar -> NHWC, as the nchw_to_nhwc kernel
		for c := 0; c < planes; c++ {
			for s := 0; s < cells; s++ {
				in0[(n*cells+s)*planes+c] = input[(n*planes+c)*cells+s]
			}
		}
	}
	for _, l := range p.layers {
		a := buf(l.in)
		m := batch * l.cells
		if l.kind == kindConv3 {
			kernels.Im2Col3x3(a, batch, l.cin, cfg.Height, cfg.Width, cols[:m*l.k])
			a = cols[:m*l.k]
		}
		var res []float32
		if l.res >= 0 {
			res = buf(l.res)
		}
		out := buf(l.out)
		kernels.GemmBiasAct(m, l.cout, l.k, a, l.k, l.w, l.cout, l.b, res, l.relu, out, l.cout)
		if l.tanh {
			for i, v := range out {
				out[i] = float32(math.Tanh(float64(v)))
			}
		}
	}
	copy(policy, buf(p.policy))
	copy(value, buf(p.value))
}

// randomBN gives every batch norm non-trivial statistics so that folding
// is exercised (New leaves them at identity).
func randomBN(net *nets.Net, seed uint64) {
	r := games.NewRand(seed)
	for _, q := range net.Params() {
		switch {
		case len(q.Name) > 12 && q.Name[len(q.Name)-12:] == "running_mean":
			for i := range q.Data {
				q.Data[i] = float32(r.NormFloat64() * 0.1)
			}
		case len(q.Name) > 11 && q.Name[len(q.Name)-11:] == "running_var":
			for i := range q.Data {
				q.Data[i] = float32(0.5 + r.Float64())
			}
		case q.Grad != nil && !q.Decay: // gamma, beta, biases
			for i := range q.Data {
				q.Data[i] = float32(0.9 + 0.2*r.Float64())
			}
		}
	}
	net.Invalidate()
}

// testNet builds preset's net with random weights; a name ending in
// "+vp3" is the preset with a per-player value head of three players.
func testNet(t testing.TB, preset string) *nets.Net {
	preset, vp3 := strings.CutSuffix(preset, "+vp3")
	cfg, err := nets.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	if vp3 {
		cfg.ValuePlayers = 3
	}
	if preset == "megazero" {
		cfg.InputPlanes, cfg.Height, cfg.Width, cfg.PolicySize = 8, 6, 7, 14
	}
	net, err := nets.New(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	randomBN(net, 11)
	return net
}

func randInput(n int, seed uint64) []float32 {
	r := games.NewRand(seed)
	x := make([]float32, n)
	for i := range x {
		if r.Float64() < 0.3 {
			x[i] = 1
		}
	}
	return x
}

// TestPlanMatchesNetForward pins the layer-list mirror: the plan run on
// the CPU must give nets' Forward result for every preset.
func TestPlanMatchesNetForward(t *testing.T) {
	for _, preset := range []string{"connect4", "connect4-ppo", "sequence", "megazero"} {
		net := testNet(t, preset)
		p, err := buildPlan(net)
		if err != nil {
			t.Fatalf("%s: %v", preset, err)
		}
		batch := 3
		if testing.Short() && preset == "sequence" {
			batch = 1
		}
		in := randInput(batch*net.InputSize(), 5)
		wantP := make([]float32, batch*net.PolicySize())
		wantV := make([]float32, batch)
		cpu, err := nets.NewCPUBackend(net.Clone(), nets.BackendOptions{MaxBatch: batch})
		if err != nil {
			t.Fatal(err)
		}
		if err := cpu.Evaluate(context.Background(), batch, in, wantP, wantV); err != nil {
			t.Fatal(err)
		}
		gotP := make([]float32, len(wantP))
		gotV := make([]float32, len(wantV))
		runPlanCPU(p, batch, in, gotP, gotV)
		if d := maxDiff(gotP, wantP); d > 1e-4 {
			t.Errorf("%s: policy differs by %g", preset, d)
		}
		if d := maxDiff(gotV, wantV); d > 1e-5 {
			t.Errorf("%s: value differs by %g", preset, d)
		}
		nonzero := 0
		for _, v := range wantP {
			if v != 0 {
				nonzero++
			}
		}
		if nonzero == 0 {
			t.Errorf("%s: all-zero policy: the comparison would prove nothing", preset)
		}
	}
}

func TestPlanSlotsNeverAlias(t *testing.T) {
	p, err := buildPlan(testNet(t, "connect4"))
	if err != nil {
		t.Fatal(err)
	}
	slot, per := p.slots()
	for i, l := range p.layers {
		if slot[l.out] == slot[l.in] || (l.res >= 0 && slot[l.out] == slot[l.res]) {
			t.Errorf("layer %d (%s) writes the slot it reads", i, l.name)
		}
		if per[slot[l.out]] < p.bufs[l.out].size() {
			t.Errorf("layer %d output slot too small", i)
		}
	}
	// connect4: input, two tower buffers in flight plus the residual, and
	// the two heads' intermediates; far fewer slots than buffers.
	if len(per) >= len(p.bufs) {
		t.Errorf("%d slots for %d buffers: no reuse", len(per), len(p.bufs))
	}
}

func maxDiff(a, b []float32) float64 {
	m := 0.0
	for i := range a {
		d := math.Abs(float64(a[i]) - float64(b[i]))
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		m = max(m, d)
	}
	return m
}
