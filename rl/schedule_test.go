package rl

import (
	"math"
	"testing"
)

// Study 000's entropy schedule: 0.01 to 0.001, linearly, over the first
// 40% of the updates (here 40 of 100), then constant.
func TestEntropySchedule(t *testing.T) {
	o := DefaultOptions()
	o.Loss.EntropyCoef, o.EntropyFinal, o.EntropyDecayUpdates = 0.01, 0.001, 40
	for _, c := range []struct {
		u    int
		want float64
	}{{0, 0.01}, {10, 0.00775}, {20, 0.0055}, {40, 0.001}, {99, 0.001}} {
		if got := o.EntropyCoef(c.u); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("update %d: entropy coefficient %g, want %g", c.u, got, c.want)
		}
	}
	o.EntropyDecayUpdates = 0
	if got := o.EntropyCoef(50); got != 0.01 {
		t.Errorf("no schedule: %g", got)
	}
	o.LR, o.AnnealUpdates = 1e-3, 10
	for _, c := range []struct {
		u    int
		want float64
	}{{0, 1e-3}, {5, 5e-4}, {10, 0}, {12, 0}} {
		if got := o.LearningRate(c.u); math.Abs(got-c.want) > 1e-18 {
			t.Errorf("update %d: learning rate %g, want %g", c.u, got, c.want)
		}
	}
	o.EntropyDecayUpdates, o.EntropyFinal = 3, -1
	if o.Validate() == nil {
		t.Error("negative final entropy coefficient accepted")
	}
}

// The update uses, and reports, the scheduled coefficient: a decay to 0
// in one update gives entropy coefficient 0.01 at update 0 and 0 after.
func TestEntropyScheduleInUpdate(t *testing.T) {
	p := tictactoePPO(t, 4)
	p.Opt.Steps = 4
	p.Opt.EntropyDecayUpdates, p.Opt.EntropyFinal = 1, 0
	for u, want := range []float64{0.01, 0} {
		st, err := p.Iterate()
		if err != nil {
			t.Fatal(err)
		}
		if st.EntropyCoef != want {
			t.Errorf("update %d: entropy coefficient %g, want %g", u, st.EntropyCoef, want)
		}
	}
}
