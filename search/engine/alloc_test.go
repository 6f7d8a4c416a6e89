package engine

import (
	"context"
	"math"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
)

// One lock-step of a warmed tree (select 8 leaves, encode, submit, wait,
// back up) allocates nothing.
func TestStepAllocs(t *testing.T) {
	g, e := newEngine(t, "connect4", 3, Options{Workers: 1, Leaves: 8, Batch: 8, Wait: -1})
	o := search.DefaultOptions()
	o.Rule, o.Sims, o.MaxNodes = search.PUCT, 1<<20, 200000
	o.Eval = search.Uniform{}
	tr, err := search.New(g, o, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := e.NewWorker()
	j := w.NewJob(8, nil)
	j.SetTree(tr, 0)
	tr.Prepare(j.root)
	j.prepared = true
	j.budget.Store(1 << 40)
	round := func() {
		w.queue(j)
		w.ready = w.ready[:0]
		w.step(j)
		for w.client.InFlight() > 0 {
			n, err := w.client.Wait(context.Background(), w.comps)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range w.comps[:n] {
				w.complete(c)
			}
		}
		w.ready = w.ready[:0]
	}
	for range 200 {
		round()
	}
	if n := testing.AllocsPerRun(200, round); n != 0 {
		t.Errorf("%v allocations per lock-step of 8 leaves, want 0", n)
	}
	if c := e.Counters(); c.Nodes < 400*8 || c.Evals == 0 {
		t.Errorf("counters %+v: the rounds did not run", c)
	}
}

// TestMaskedSoftmaxFastPath: the equal-logits fast path gives exactly
// nets.MaskedSoftmax's output (bit for bit), and other inputs take the
// general path: equal, unequal, infinite and NaN logits, actions beyond
// the logits.
func TestMaskedSoftmaxFastPath(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	cases := [][]float32{
		{0, 0, 0, 0, 0, 0, 0},
		{0.5, 0.5, 0.5, 0.5, 0.5},
		{0, 1, 0, 0},
		{inf, inf, inf},
		{-inf, -inf, -inf},
		{nan, nan},
		{3, 3, -2, 3},
	}
	for _, logits := range cases {
		for _, legal := range [][]int{{0, 1, 2}, {1}, {0, 2, 5, 8}, {}} {
			m := games.NewMask(10)
			for _, a := range legal {
				m.Set(games.Action(a))
			}
			want := make([]float32, len(logits))
			got := make([]float32, len(logits))
			for i := range got {
				got[i], want[i] = 9, 9
			}
			okW := nets.MaskedSoftmax(logits, m, want)
			okG := maskedSoftmax(logits, m, got)
			if okW != okG {
				t.Errorf("logits %v legal %v: ok %v, want %v", logits, legal, okG, okW)
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
					t.Errorf("logits %v legal %v: probs %v, want %v", logits, legal, got, want)
					break
				}
			}
		}
	}
}
