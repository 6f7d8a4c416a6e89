package nets

import "fmt"

// AdamState is what an Adam optimizer has learned about a list of
// parameters: its step count and, per parameter in the list's order, the
// first and second moment estimates (nil for a parameter it has not
// stepped). Saved with a checkpoint and restored by SetState, it lets a
// resumed training continue exactly where it stopped.
type AdamState struct {
	Step int
	M, V [][]float32
}

// State returns a copy of o's state for params.
func (o *Adam) State(params []*Param) AdamState {
	s := AdamState{Step: o.t, M: make([][]float32, len(params)), V: make([][]float32, len(params))}
	for i, p := range params {
		if m, ok := o.m[p]; ok {
			s.M[i] = append([]float32(nil), m...)
			s.V[i] = append([]float32(nil), o.v[p]...)
		}
	}
	return s
}

// SetState replaces o's state by s, which holds the moments of params in
// order (as State returns them). Beta1, Beta2, Eps and WeightDecay keep
// their values (zero betas and epsilon take Step's defaults): like LR,
// they are settings, saved by whoever configures the optimizer.
func (o *Adam) SetState(params []*Param, s AdamState) error {
	if s.Step < 0 {
		return fmt.Errorf("nets: Adam state at step %d, want >= 0", s.Step)
	}
	if len(s.M) != len(params) || len(s.V) != len(params) {
		return fmt.Errorf("nets: Adam state of %d/%d parameters for %d parameters", len(s.M), len(s.V), len(params))
	}
	for i, p := range params {
		if (s.M[i] == nil) != (s.V[i] == nil) || (s.M[i] != nil && (len(s.M[i]) != len(p.Data) || len(s.V[i]) != len(p.Data))) {
			return fmt.Errorf("nets: Adam state of parameter %s does not match its %d values", p.Name, len(p.Data))
		}
	}
	if o.Beta1 == 0 {
		o.Beta1 = 0.9
	}
	if o.Beta2 == 0 {
		o.Beta2 = 0.999
	}
	if o.Eps == 0 {
		o.Eps = 1e-8
	}
	o.t = s.Step
	o.m, o.v = map[*Param][]float32{}, map[*Param][]float32{}
	for i, p := range params {
		if s.M[i] != nil {
			o.m[p] = append([]float32(nil), s.M[i]...)
			o.v[p] = append([]float32(nil), s.V[i]...)
		}
	}
	return nil
}
