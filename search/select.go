package search

import "math"

// Rule is a selection rule (tree policy).
type Rule uint8

const (
	// UCT is UCB1 applied to trees: Q + c*sqrt(ln N / n).
	UCT Rule = iota
	// UCB1Tuned replaces UCB1's constant by a variance bound (Auer et al.
	// 2002): Q + c*sqrt(ln N / n * min(1/4, V)), V = var + sqrt(2 ln N / n),
	// computed on values rescaled to [0, 1].
	UCB1Tuned
	// PUCT is AlphaZero's rule: Q + c*P*sqrt(N)/(1+n).
	PUCT
	// RAVE blends Q with the AMAF value by the beta schedule of
	// Options.RaveSchedule, plus the UCT term.
	RAVE
	// PoolRAVE is RAVE in the tree plus pool-guided rollouts (Rimmel et
	// al. 2010): with probability PoolP a rollout move is drawn from the
	// PoolK moves with the best AMAF value at the last tree node.
	PoolRAVE
	// AlphaAMAF uses (1-a)*Q + a*Q_amaf with a = max(0, (k-n)/k) (or the
	// constant Options.Alpha when AlphaK is 0), plus the UCT term.
	AlphaAMAF
)

var ruleNames = map[string]Rule{
	"uct": UCT, "ucb1": UCT, "ucb1tuned": UCB1Tuned, "puct": PUCT,
	"rave": RAVE, "poolrave": PoolRAVE, "alphaamaf": AlphaAMAF,
}

func (r Rule) String() string {
	for _, k := range []string{"uct", "ucb1tuned", "puct", "rave", "poolrave", "alphaamaf"} {
		if ruleNames[k] == r {
			return k
		}
	}
	return "unknown"
}

// usesAMAF reports whether the rule needs AMAF statistics.
func (r Rule) usesAMAF() bool { return r == RAVE || r == PoolRAVE || r == AlphaAMAF }

// UCB1 returns q + c*sqrt(ln(parentN)/n) for n >= 1.
func UCB1(q float64, n, parentN int, c float64) float64 {
	return q + c*math.Sqrt(math.Log(float64(parentN))/float64(n))
}

// UCB1TunedScore returns the UCB1-Tuned score of an arm whose values lie in
// [-1, 1]. mean and meanSq are the mean value and the mean squared value;
// the bound is computed on x = (v+1)/2 in [0, 1], where the variance of a
// Bernoulli arm is at most 1/4, and the result is mapped back to [-1, 1]:
//
//	V = E[x^2] - E[x]^2 + sqrt(2 ln N / n)
//	score = 2*(E[x] + c*sqrt(ln N / n * min(1/4, V))) - 1
func UCB1TunedScore(mean, meanSq float64, n, parentN int, c float64) float64 {
	x := (mean + 1) / 2
	x2 := (meanSq + 2*mean + 1) / 4
	lnN := math.Log(float64(parentN))
	v := x2 - x*x + math.Sqrt(2*lnN/float64(n))
	return 2*(x+c*math.Sqrt(lnN/float64(n)*min(0.25, v))) - 1
}

// PUCTScore returns q + c*prior*sqrt(parentN)/(1+n).
func PUCTScore(q, prior float64, n, parentN int, c float64) float64 {
	return q + c*prior*math.Sqrt(float64(parentN))/(1+float64(n))
}

// RaveBetaSqrt is Gelly & Silver's (2007) hand-tuned schedule
// beta = sqrt(k / (3n + k)): beta is 1/2 when n = k.
func RaveBetaSqrt(n int, k float64) float64 {
	return math.Sqrt(k / (3*float64(n) + k))
}

// RaveBetaSilver is the minimum-MSE schedule of Gelly & Silver (2011),
// beta = ña / (n + ña + 4 b^2 n ña), with ña the AMAF count and b the RAVE
// bias constant.
func RaveBetaSilver(n, amafN int, b float64) float64 {
	na, fn := float64(amafN), float64(n)
	d := fn + na + 4*b*b*fn*na
	if d == 0 {
		return 0
	}
	return na / d
}

// AlphaAMAFWeight returns a = max(0, (k-n)/k); k <= 0 gives 0.
func AlphaAMAFWeight(n int, k float64) float64 {
	if k <= 0 {
		return 0
	}
	return max(0, (k-float64(n))/k)
}

// ProgressiveBias returns b*h/(1+n), the term added for heuristic h.
func ProgressiveBias(h float64, n int, b float64) float64 {
	return b * h / (1 + float64(n))
}

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
