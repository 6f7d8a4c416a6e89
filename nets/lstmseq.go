package nets

import "fmt"

// LSTM runs an LSTMCell over T steps of B sequences (time-major: row
// t*B+b) and back-propagates through those T steps only: truncated
// backpropagation through time with the segment as the truncation window.
// The state entering step 0 (h0, c0) is an input without a gradient, and a
// sequence whose reset flag is set at step t starts that step from zero
// state (an episode began), so no gradient flows across the reset either.
//
// An LSTM records every step of its last Forward for Backward; it is not
// safe for concurrent use.
type LSTM struct {
	Cell  *LSTMCell
	steps []*LSTMStep
	t, b  int       // of the last Forward
	capB  int       // sequences the scratch holds
	hin   []float32 // B x H: the state entering a step (reset rows zeroed)
	cin   []float32
	dh    []float32 // B x H: gradient w.r.t. the state leaving a step
	dc    []float32
	dhIn  []float32 // B x H: gradient w.r.t. the state entering a step
	dcIn  []float32
	dhOut []float32 // B x H: dhOut[t] + dh from step t+1
	valid bool
}

// NewLSTM wraps cell for segments of up to maxT steps of maxB sequences.
func NewLSTM(cell *LSTMCell, maxT, maxB int) *LSTM {
	l := &LSTM{Cell: cell}
	l.reserve(maxT, maxB)
	return l
}

func (l *LSTM) reserve(T, B int) {
	if B > l.capB {
		l.capB = B
		l.steps = l.steps[:0]
		for _, p := range []*[]float32{&l.hin, &l.cin, &l.dh, &l.dc, &l.dhIn, &l.dcIn, &l.dhOut} {
			*p = make([]float32, B*l.Cell.Hidden)
		}
	}
	for len(l.steps) < T {
		l.steps = append(l.steps, l.Cell.NewStep(l.capB))
	}
}

// Forward runs T steps over B sequences. x is T*B rows of In values; h0
// and c0 (B x Hidden) are the state before step 0; reset (T*B flags, or
// nil for none) marks rows whose state is zeroed before their step; h and
// c receive the T*B states after each step. The final state of sequence b
// is row (T-1)*B+b of h and c. It records the steps for Backward and
// allocates nothing once it has run at the largest T and B.
func (l *LSTM) Forward(T, B int, x, h0, c0 []float32, reset []bool, h, c []float32) error {
	H, In := l.Cell.Hidden, l.Cell.In
	if T < 1 || B < 1 || len(x) < T*B*In || len(h0) < B*H || len(c0) < B*H || len(h) < T*B*H || len(c) < T*B*H ||
		(reset != nil && len(reset) < T*B) {
		return fmt.Errorf("nets: LSTM.Forward(T=%d, B=%d): slices too short for In=%d Hidden=%d", T, B, In, H)
	}
	l.reserve(T, B)
	l.t, l.b = T, B
	hin, cin := l.hin[:B*H], l.cin[:B*H]
	copy(hin, h0[:B*H])
	copy(cin, c0[:B*H])
	for t := range T {
		if t > 0 {
			copy(hin, h[(t-1)*B*H:t*B*H])
			copy(cin, c[(t-1)*B*H:t*B*H])
		}
		if reset != nil {
			for b, r := range reset[t*B : (t+1)*B] {
				if r {
					clear(hin[b*H : (b+1)*H])
					clear(cin[b*H : (b+1)*H])
				}
			}
		}
		if err := l.Cell.Forward(B, x[t*B*In:(t+1)*B*In], hin, cin, h[t*B*H:(t+1)*B*H], c[t*B*H:(t+1)*B*H], l.steps[t], nil); err != nil {
			return err
		}
	}
	l.valid = true
	return nil
}

// Backward takes the gradient of the loss w.r.t. the T*B hidden states h
// of the last Forward (the cell states feed only the recurrence), ADDS the
// cell's parameter gradients into its Params' Grad and writes the gradient
// w.r.t. x into dx (T*B x In; nil when not needed). The gradient stops at
// the segment's start and at every reset. It consumes the recorded steps.
func (l *LSTM) Backward(reset []bool, dhAll, dx []float32) error {
	if !l.valid {
		return fmt.Errorf("nets: LSTM.Backward without a preceding Forward")
	}
	T, B, H, In := l.t, l.b, l.Cell.Hidden, l.Cell.In
	if len(dhAll) < T*B*H || (dx != nil && len(dx) < T*B*In) || (reset != nil && len(reset) < T*B) {
		return fmt.Errorf("nets: LSTM.Backward(T=%d, B=%d): slices too short", T, B)
	}
	l.valid = false
	dh, dc := l.dh[:B*H], l.dc[:B*H]
	clear(dh)
	clear(dc)
	dhOut := l.dhOut[:B*H]
	for t := T - 1; t >= 0; t-- {
		copy(dhOut, dhAll[t*B*H:(t+1)*B*H])
		for i, v := range dh {
			dhOut[i] += v
		}
		var dxt []float32
		if dx != nil {
			dxt = dx[t*B*In : (t+1)*B*In]
		}
		if err := l.Cell.Backward(l.steps[t], dhOut, dc, dxt, l.dhIn[:B*H], l.dcIn[:B*H]); err != nil {
			return err
		}
		copy(dh, l.dhIn[:B*H])
		copy(dc, l.dcIn[:B*H])
		if reset != nil {
			for b, r := range reset[t*B : (t+1)*B] {
				if r {
					clear(dh[b*H : (b+1)*H])
					clear(dc[b*H : (b+1)*H])
				}
			}
		}
	}
	return nil
}
