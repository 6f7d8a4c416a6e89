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
