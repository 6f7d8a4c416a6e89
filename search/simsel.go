package search

import (
	"sync/atomic"
)

// Exp3 and regret matching at simultaneous nodes (Options.SimSel).
//
// Storage: a bandit edge (one action of one player's segment at a joint
// node) keeps, besides the usual value sum and visit count in edgeStats,
//
//   - edge.w2: the bandit sum, fixed point (valueScale): Exp3's cumulative
//     importance-weighted reward X_a, or regret matching's cumulative
//     regret R_a;
//   - edge.amafW: the cumulative strategy, fixed point: the sum over the
//     node's visits of rho_a, the player's strategy before the exploration
//     mixture (the average strategy is amafW / sum of the segment's amafW).
//
// Those two fields are otherwise used by UCB1-Tuned (w2) and the RAVE
// family (amafW), whose statistics are therefore not kept at joint nodes
// under simsel=exp3/rm (backupAtomic and backupAMAF skip bandit steps);
// edge.amafN stays 0 there. Nothing is added to the 56 bytes per edge.
//
// Rewards are the player's value mapped to [0, 1], x = (v+1)/2. With the
// sampling probability sigma_c of the chosen edge c, the importance-
// weighted estimate is x/sigma_c for c and 0 for the other edges:
//
//	Exp3: X_c += x/sigma_c
//	RM:   R_c += x/sigma_c - x;  R_b -= x for every b != c
//
// Concurrency: every read is an atomic load and every update an add (atomic
// when the tree is shared), so threads > 1 is race-free; a simulation's
// strategy is then computed from a snapshot that may miss the updates of
// simulations in flight (as UCT sees virtual losses instead of results),
// and its importance weight is the probability it actually sampled with.

// minBanditProb bounds importance weights (1/sigma) so that the fixed-
// point sums cannot overflow; sigma >= simgamma/K anyway unless simgamma is
// 0, and an action of probability below 1e-9 is practically never sampled.
const minBanditProb = 1e-9

// selectSim samples one of the cnt edges from first (one player's segment
// at a joint node) by Exp3 or regret matching, adds the strategy to the
// cumulative strategy, and returns the edge and its sampling probability.
func (t *Tree) selectSim(w *Walker, first, cnt int32) (int32, float32) {
	k := int(cnt)
	x, rho := w.simX[:k], w.simRho[:k]
	edges := t.a.edges[first : first+cnt]
	for i := range edges {
		x[i] = float64(atomic.LoadInt64(&edges[i].w2)) * (1.0 / valueScale)
	}
	g := t.opt.SimGamma
	if t.opt.SimSel == SimExp3 {
		Exp3Policy(rho, x, g/float64(k))
	} else {
		RegretMatchingPolicy(rho, x)
	}
	r := w.Ctx.Rng.Float64()
	chosen, prob := -1, 0.0
	for i := range edges {
		t.add64(&edges[i].amafW, int64(rho[i]*valueScale))
		s := MixUniform(rho[i], g, k)
		if s > 0 {
			if r >= 0 { // not passed yet; the last positive one absorbs rounding
				chosen, prob = i, s
			}
			r -= s
		}
	}
	return first + int32(chosen), float32(max(prob, minBanditProb))
}

// backupSim adds the bandit updates of one simulation (see the file
// comment) for every bandit step of the walker's path.
func (t *Tree) backupSim(w *Walker, value []float64) {
	for i := range w.path {
		st := &w.path[i]
		if !st.bandit {
			continue
		}
		x := (value[st.player] + 1) / 2
		iw := x / float64(st.prob)
		if t.opt.SimSel == SimExp3 {
			t.add64(&t.a.edges[st.edge].w2, int64(iw*valueScale))
			continue
		}
		first, cnt := simSegment(t.a, &t.a.nodes[st.node], int(st.player), t.players)
		for j := first; j < first+cnt; j++ {
			d := -x
			if j == st.edge {
				d += iw
			}
			t.add64(&t.a.edges[j].w2, int64(d*valueScale))
		}
	}
}
