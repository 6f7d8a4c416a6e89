package search

import (
	"math"
	"sync/atomic"
)

// SimRule is the selection rule at simultaneous (joint) nodes, where every
// player runs its own bandit over its own edge segment.
type SimRule uint8

const (
	// SimUCB (simsel=ucb) is decoupled selection by the tree's Rule: each
	// player picks its edge deterministically by the rule's score (UCT by
	// default). Known not to converge to an equilibrium in general
	// (Lisý et al. 2013): the players' statistics can co-adapt.
	SimUCB SimRule = iota
	// SimExp3 (simsel=exp3) samples each player's edge from Exp3's
	// distribution sigma = (1-g)*rho + g/K, rho proportional to
	// exp(eta*X_a) with eta = g/K and X_a the cumulative importance-weighted
	// reward of edge a (Auer et al. 2002; SM-MCTS of Lanctot et al. 2013).
	SimExp3
	// SimRM (simsel=rm) samples from regret matching: rho proportional
	// to the positive parts of the cumulative regrets (uniform when none is
	// positive), mixed with g/K exploration (SM-MCTS-RM, Lisý et al. 2013).
	SimRM
)

var simRuleNames = []string{"ucb", "exp3", "rm"}

func (r SimRule) String() string {
	if int(r) < len(simRuleNames) {
		return simRuleNames[r]
	}
	return "unknown"
}

// Exp3Policy writes into dst the exponential-weights distribution
// rho_a = exp(eta*cum_a) / sum_b exp(eta*cum_b) (without exploration).
// The maximum of cum is subtracted before exponentiation, so large sums
// neither overflow nor lose the distribution. len(dst) must be len(cum).
func Exp3Policy(dst, cum []float64, eta float64) {
	m := math.Inf(-1)
	for _, x := range cum {
		m = max(m, x)
	}
	var sum float64
	for i, x := range cum {
		dst[i] = math.Exp(eta * (x - m))
		sum += dst[i]
	}
	for i := range dst {
		dst[i] /= sum
	}
}

// RegretMatchingPolicy writes into dst the regret-matching distribution:
// rho_a = max(R_a, 0) / sum_b max(R_b, 0), or uniform when no regret is
// positive. len(dst) must be len(regrets).
func RegretMatchingPolicy(dst, regrets []float64) {
	var sum float64
	for i, r := range regrets {
		dst[i] = max(r, 0)
		sum += dst[i]
	}
	if sum <= 0 {
		for i := range dst {
			dst[i] = 1 / float64(len(dst))
		}
		return
	}
	for i := range dst {
		dst[i] /= sum
	}
}

// MixUniform returns (1-gamma)*rho + gamma/k, the exploration mixture of
// a probability rho among k actions.
func MixUniform(rho, gamma float64, k int) float64 {
	return (1-gamma)*rho + gamma/float64(k)
}

// Exp3 and regret matching at simultaneous nodes (Options.SimSel).
//
// Storage: a bandit edge (one action of one player's segment at a joint
// node) keeps, besides the usual value sum and visit count in edgeStats,
//
//   - edgeExt.w2: the bandit sum, fixed point (valueScale): Exp3's cumulative
//     importance-weighted reward X_a, or regret matching's cumulative
//     regret R_a;
//   - edgeExt.amafW: the cumulative strategy, fixed point: the sum over the
//     node's visits of rho_a, the player's strategy before the exploration
//     mixture (the average strategy is amafW / sum of the segment's amafW).
//
// Those two fields are otherwise used by UCB1-Tuned (w2) and the RAVE
// family (amafW), whose statistics are therefore not kept at joint nodes
// under simsel=exp3/rm (backupAtomic and backupAMAF skip bandit steps);
// edgeExt.amafN stays 0 there. Nothing is added to the 48 bytes per edge
// (edge, edgeStats and edgeExt).
//
// Rewards are the player's value halved, x = v/2 in [-1/2, 1/2]: the
// [0, 1] reward (v+1)/2 of the bandit literature centred on 1/2. With the
// sampling probability sigma_c of the chosen edge c, the importance-
// weighted estimate is x/sigma_c for c and 0 for the other edges:
//
//	Exp3: X_c += x/sigma_c
//	RM:   R_c += x/sigma_c - x;  R_b -= x for every b != c
//
// Shifting every reward by the same constant moves every X_a (and no
// regret) by the same amount in expectation, so neither strategy changes
// in expectation; what changes is the noise. With [0, 1] rewards a lost
// simulation (x = 0) updated nothing: only wins moved the sums, each by
// up to K/simgamma on the edge that happened to be sampled, so at the few
// hundred visits of a node in a game move the strategies followed the
// first lucky wins. Centred, a loss lowers the chosen edge as much as a
// win raises it. Measured on Sushi Go (RESULTS §3b, 100 games at 1,000 simulations
// a move against standard MCTS): Exp3 22% -> 41%, regret matching 1% ->
// 11%. |eta * x/sigma| <= 1/2 still holds for Exp3 (eta = g/K, sigma >=
// g/K).
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
	ext := t.a.ext[first : first+cnt]
	for i := range ext {
		x[i] = float64(atomic.LoadInt64(&ext[i].w2)) * (1.0 / valueScale)
	}
	g := t.opt.SimGamma
	if t.opt.SimSel == SimExp3 {
		Exp3Policy(rho, x, g/float64(k))
	} else {
		RegretMatchingPolicy(rho, x)
	}
	r := w.Ctx.Rng.Float64()
	chosen, prob := -1, 0.0
	for i := range ext {
		t.add64(&ext[i].amafW, int64(rho[i]*valueScale))
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
		x := value[st.player] / 2 // centred: see the file comment
		iw := x / float64(st.prob)
		if t.opt.SimSel == SimExp3 {
			t.add64(&t.a.ext[st.edge].w2, int64(iw*valueScale))
			continue
		}
		first, cnt := simSegment(t.a, &t.a.nodes[st.node], int(st.player), t.players)
		for j := first; j < first+cnt; j++ {
			d := -x
			if j == st.edge {
				d += iw
			}
			t.add64(&t.a.ext[j].w2, int64(d*valueScale))
		}
	}
}
