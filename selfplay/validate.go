package selfplay

import (
	"fmt"
	"math"
)

// CheckPositions reports the first position of a shard's arrays that
// training cannot use, or nil: obs holds n rows of obsN finite values,
// policy and legal (nil: every action legal) n rows of actions entries,
// value n outcomes and rootQ (nil when absent) n root values. A policy is
// a probability distribution (entries >= 0 and finite, summing to 1
// within 1e-3) on legal actions only, legal entries are 0 or 1 with at
// least one 1, and values and root values lie in [-1, 1].
//
// It is the one definition of a valid position: self-play's resume
// checks the shards it keeps with it, and train the shards it loads.
func CheckPositions(n, obsN, actions int, obs, policy []float32, legal []uint8, value, rootQ []float32) error {
	for i := range n {
		for j, v := range obs[i*obsN : (i+1)*obsN] {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("position %d: observation value %d is %v", i, j, v)
			}
		}
		if v := value[i]; !(v >= -1 && v <= 1) {
			return fmt.Errorf("position %d: value %v is outside [-1, 1]", i, v)
		}
		if rootQ != nil {
			if q := rootQ[i]; !(q >= -1 && q <= 1) {
				return fmt.Errorf("position %d: root_q %v is outside [-1, 1]", i, q)
			}
		}
		p := policy[i*actions : (i+1)*actions]
		var lg []uint8
		if legal != nil {
			lg = legal[i*actions : (i+1)*actions]
		}
		sum, nlegal := 0.0, 0
		for a, x := range p {
			if !(x >= 0) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("position %d: policy[%d] = %v, want a probability", i, a, x)
			}
			sum += float64(x)
			if lg == nil {
				continue
			}
			switch lg[a] {
			case 0:
				if x != 0 {
					return fmt.Errorf("position %d: policy puts %v on action %d, which its legal mask marks illegal", i, x, a)
				}
			case 1:
				nlegal++
			default:
				return fmt.Errorf("position %d: legal[%d] = %d, want 0 or 1", i, a, lg[a])
			}
		}
		if math.Abs(sum-1) > 1e-3 {
			return fmt.Errorf("position %d: policy sums to %.6g, want 1", i, sum)
		}
		if lg != nil && nlegal == 0 {
			return fmt.Errorf("position %d: no legal action", i)
		}
	}
	return nil
}

// CheckValues reports the first position whose per-player value targets
// (a shard's values array: n rows of players values, seat-rotated so that
// row i starts with the mover's return) training cannot use, or nil:
// every entry lies in [-1, 1] and each row's first entry is the
// position's value (the mover's outcome), as self-play writes them.
func CheckValues(n, players int, value, values []float32) error {
	if players < 2 || len(values) != n*players {
		return fmt.Errorf("values holds %d entries, want %d positions x %d players", len(values), n, players)
	}
	for i := range n {
		row := values[i*players : (i+1)*players]
		for k, v := range row {
			if !(v >= -1 && v <= 1) {
				return fmt.Errorf("position %d: values[%d] = %v is outside [-1, 1]", i, k, v)
			}
		}
		if row[0] != value[i] {
			return fmt.Errorf("position %d: values starts with %v, but the mover's value is %v (values must be seat-rotated, mover first)", i, row[0], value[i])
		}
	}
	return nil
}
