package nets

import (
	"math"
	"testing"
)

// An Adam given another's state by SetState continues exactly as the
// other does; a fresh one (zero moments, step 0) does not.
func TestAdamStateRoundTrip(t *testing.T) {
	mk := func() []*Param {
		return []*Param{{Name: "a", Data: []float32{1, -2, 3}, Grad: make([]float32, 3)}, {Name: "b", Data: []float32{0.5}, Grad: make([]float32, 1)}}
	}
	grad := func(ps []*Param, k int) {
		for i, p := range ps {
			for j := range p.Grad {
				p.Grad[j] = float32(math.Sin(float64(k*7 + i*3 + j)))
			}
		}
	}
	a, pa := &Adam{LR: 0.01}, mk()
	for k := range 3 {
		grad(pa, k)
		a.Step(pa)
	}
	st := a.State(pa)
	if st.Step != 3 {
		t.Fatalf("step %d, want 3", st.Step)
	}
	b, pb := &Adam{LR: 0.01}, mk()
	fresh, pf := &Adam{LR: 0.01}, mk()
	for i := range pa {
		copy(pb[i].Data, pa[i].Data)
		copy(pf[i].Data, pa[i].Data)
	}
	if err := b.SetState(pb, st); err != nil {
		t.Fatal(err)
	}
	st.M[0][0] = 99 // the state is a copy
	for k := 3; k < 6; k++ {
		for _, ps := range [][]*Param{pa, pb, pf} {
			grad(ps, k)
		}
		a.Step(pa)
		b.Step(pb)
		fresh.Step(pf)
	}
	differs := false
	for i := range pa {
		for j := range pa[i].Data {
			if math.Float32bits(pa[i].Data[j]) != math.Float32bits(pb[i].Data[j]) {
				t.Errorf("param %d[%d]: %g restored, %g uninterrupted", i, j, pb[i].Data[j], pa[i].Data[j])
			}
			differs = differs || pf[i].Data[j] != pa[i].Data[j]
		}
	}
	if !differs {
		t.Error("a fresh Adam matches too: the test cannot tell")
	}
	if err := b.SetState(pb[:1], st); err == nil {
		t.Error("state of 2 parameters accepted for 1")
	}
}
