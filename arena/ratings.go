package arena

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games"
)

// This file turns game outcomes into ratings. Every method works on the
// same data: a list of Outcomes (which agent sat where, and what each
// seat's return was). Three estimators are provided:
//
//   - Elo (FitElo, BootstrapElo): maximum-likelihood Bradley-Terry fit to the
//     pairwise results (every pair of agents at a table is one comparison;
//     a draw counts half a win each way), on the Elo scale (logistic, 400
//     points = a factor 10 in odds), anchored so the mean rating is 0. A very
//     weak Gaussian prior (EloPriorSD = 1000 Elo) keeps ratings finite when
//     one agent wins every game; with informative data its effect is a
//     fraction of an Elo point. 95% intervals (BootstrapElo) come from a
//     nonparametric bootstrap that resamples whole games with replacement,
//     widened where needed to the Laplace interval of the penalised fit
//     (LaplaceElo, BayesElo's method): resampling cannot change a record
//     of all wins, so after two games won by one agent the bootstrap alone
//     gives an interval of zero width.
//   - Bayesian Bradley-Terry / Plackett-Luce (FitBradleyTerry): each game's
//     full ranking is modelled with Plackett-Luce (which is Bradley-Terry
//     for two players), with an independent Gaussian prior N(0, sd²) on every
//     agent's log-strength. The MAP estimate is found by Newton's method and
//     the 95% intervals come from the Laplace approximation (the posterior is
//     approximated by a Gaussian with covariance = inverse negative Hessian of
//     the log-posterior at the MAP).
//   - ILSR (FitILSR; Maystre & Grossglauser, "Fast and accurate inference of
//     Plackett-Luce models", NIPS 2015): the stationary distribution of the
//     Markov chain whose transition rates come from the choices, recomputed
//     with the current estimate until it stops changing. Its fixed point is
//     the Plackett-Luce maximum-likelihood estimate.
//
// A fourth, FitPlackettLuce (plackettluce.go), models ties explicitly
// (Davidson-Luce) and reports on the Elo scale with flags; the text below
// describes the first three.
//
// Ties. A ranking with tied players is replaced by every strict ordering
// consistent with it, each with equal weight (so a two-player draw is half
// a win and half a loss, exactly as in Elo). Every estimator sees the same
// weighted choices.
//
// Units. Log-strengths are natural logarithms: agent i beats j with
// probability 1/(1+exp(-(b_i-b_j))). One log-strength unit is
// 400/ln(10) ≈ 173.7 Elo.
//
// Nothing here keeps state; all functions are safe for concurrent use.

// EloPerNat converts a log-strength difference to Elo points.
const EloPerNat = 400 / math.Ln10

// Default priors and regularisation.
const (
	// EloPriorSD is the standard deviation (Elo points) of the weak
	// Gaussian prior used by FitElo's callers in Tournament.
	EloPriorSD = 1000.0
	// BTPriorSD is the default prior standard deviation of a log-strength
	// in the Bayesian Bradley-Terry model (≈ 347 Elo).
	BTPriorSD = 2.0
	// ILSRAlpha is the default ILSR regularisation: a virtual comparison
	// of this weight won by each side of every pair of agents.
	ILSRAlpha = 0.01
	// DefaultBootstrap is the default number of bootstrap resamples.
	DefaultBootstrap = 200
)

// Outcome is the result of one game for rating purposes.
type Outcome struct {
	Agents  []int     // agent index per seat; no agent twice
	Returns []float64 // return per seat; higher is better
}

// Rating is an estimate with a 95% interval. Units depend on the method
// (Elo points or natural-log strength).
type Rating struct {
	Agent string  `json:"agent"`
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// choice is one weighted observation: winner was preferred over every
// other member of set (which contains winner).
type choice struct {
	winner int
	set    []int
	w      float64
}

// choiceSet accumulates weighted choices, merging identical ones so the
// fitters' cost depends on the number of distinct (winner, set) pairs, not
// on the number of games.
type choiceSet struct {
	idx  map[string]int
	list []choice
}

func (cs *choiceSet) add(winner int, set []int, w float64) {
	if cs.idx == nil {
		cs.idx = map[string]int{}
	}
	s := slices.Clone(set)
	slices.Sort(s)
	var b strings.Builder
	b.WriteString(strconv.Itoa(winner))
	for _, x := range s {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(x))
	}
	key := b.String()
	if i, ok := cs.idx[key]; ok {
		cs.list[i].w += w
		return
	}
	cs.idx[key] = len(cs.list)
	cs.list = append(cs.list, choice{winner: winner, set: s, w: w})
}

// validate checks one outcome against k agents.
func (o Outcome) validate(k int) error {
	if len(o.Agents) < 2 || len(o.Agents) != len(o.Returns) {
		return fmt.Errorf("outcome needs at least 2 seats and one return per seat (got %d agents, %d returns)", len(o.Agents), len(o.Returns))
	}
	for i, a := range o.Agents {
		if a < 0 || a >= k {
			return fmt.Errorf("outcome: agent index %d out of range [0,%d)", a, k)
		}
		if slices.Contains(o.Agents[:i], a) {
			return fmt.Errorf("outcome: agent %d sits twice at one table", a)
		}
		if math.IsNaN(o.Returns[i]) {
			return fmt.Errorf("outcome: return of seat %d is NaN", i)
		}
	}
	return nil
}

// addRanking adds the Plackett-Luce choices of one outcome with total
// weight w: the ranking is split into stages (the best of the remaining
// players is chosen from all remaining ones); tied players are expanded
// into every consistent strict order with equal weight.
func addRanking(cs *choiceSet, o Outcome, w float64) {
	n := len(o.Agents)
	order := make([]int, n) // seats, best first
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case o.Returns[a] > o.Returns[b]:
			return -1
		case o.Returns[a] < o.Returns[b]:
			return 1
		}
		return 0
	})
	// Tie groups as [start, end) ranges of order.
	var groups [][2]int
	for i := 0; i < n; {
		j := i + 1
		for j < n && o.Returns[order[j]] == o.Returns[order[i]] {
			j++
		}
		groups = append(groups, [2]int{i, j})
		i = j
	}
	count := 1.0
	for _, g := range groups {
		for m := 2; m <= g[1]-g[0]; m++ {
			count *= float64(m)
		}
	}
	wEach := w / count
	set := make([]int, 0, n)
	var expand func(gi int)
	expand = func(gi int) {
		if gi < len(groups) {
			g := groups[gi]
			permute(order[g[0]:g[1]], 0, func() { expand(gi + 1) })
			return
		}
		for r := 0; r < n-1; r++ {
			set = set[:0]
			for _, s := range order[r:] {
				set = append(set, o.Agents[s])
			}
			cs.add(o.Agents[order[r]], set, wEach)
		}
	}
	expand(0)
}

// permute calls f for every permutation of a (in place; a is restored).
func permute(a []int, k int, f func()) {
	if k >= len(a)-1 {
		f()
		return
	}
	for i := k; i < len(a); i++ {
		a[k], a[i] = a[i], a[k]
		permute(a, k+1, f)
		a[k], a[i] = a[i], a[k]
	}
}

// pairWeights returns the pairwise decomposition of an outcome as
// w[i][j] increments (i beat j): every pair at the table is compared by
// return, a tie giving half to each side.
func pairWeights(o Outcome, f func(winner, loser int, w float64)) {
	for a := range o.Agents {
		for b := a + 1; b < len(o.Agents); b++ {
			ra, rb := o.Returns[a], o.Returns[b]
			switch {
			case ra > rb:
				f(o.Agents[a], o.Agents[b], 1)
			case ra < rb:
				f(o.Agents[b], o.Agents[a], 1)
			default:
				f(o.Agents[a], o.Agents[b], 0.5)
				f(o.Agents[b], o.Agents[a], 0.5)
			}
		}
	}
}

// PairStats is agent A's record against agent B.
type PairStats struct {
	Games  int `json:"games"`
	Wins   int `json:"wins"`
	Draws  int `json:"draws"`
	Losses int `json:"losses"`
	// Score is (wins + draws/2)/games with its 95% Wilson interval; nil
	// when the two never met.
	Score *Interval `json:"score,omitempty"`
}

// PairwiseTable returns t[a][b], agent a's record against agent b over
// all games where both played (in a multi-player game, a beats b when a's
// return is higher).
func PairwiseTable(k int, outcomes []Outcome) ([][]PairStats, error) {
	t := make([][]PairStats, k)
	for i := range t {
		t[i] = make([]PairStats, k)
	}
	for _, o := range outcomes {
		if err := o.validate(k); err != nil {
			return nil, err
		}
		for a := range o.Agents {
			for b := range o.Agents {
				if a == b {
					continue
				}
				p := &t[o.Agents[a]][o.Agents[b]]
				p.Games++
				switch ra, rb := o.Returns[a], o.Returns[b]; {
				case ra > rb:
					p.Wins++
				case ra < rb:
					p.Losses++
				default:
					p.Draws++
				}
			}
		}
	}
	for a := range t {
		for b := range t[a] {
			if p := &t[a][b]; p.Games > 0 {
				iv := Wilson(float64(p.Wins)+float64(p.Draws)/2, p.Games)
				p.Score = &iv
			}
		}
	}
	return t, nil
}

// pairChoices turns a k×k matrix of pairwise win weights into choices.
func pairChoices(k int, w []float64) []choice {
	var out []choice
	for i := range k {
		for j := range k {
			if i != j && w[i*k+j] > 0 {
				out = append(out, choice{winner: i, set: []int{min(i, j), max(i, j)}, w: w[i*k+j]})
			}
		}
	}
	return out
}

// FitElo returns maximum-likelihood Elo ratings (mean 0) from the pairwise
// decomposition of outcomes, with a Gaussian prior of priorSD Elo points on
// each rating; priorSD = +Inf gives the plain maximum-likelihood estimate,
// which exists only when every agent has both won and lost (or drawn)
// against the others along a connected comparison graph. The returned
// slice holds the ratings only; see BootstrapElo for intervals.
func FitElo(k int, outcomes []Outcome, priorSD float64) ([]float64, error) {
	w := make([]float64, k*k)
	for _, o := range outcomes {
		if err := o.validate(k); err != nil {
			return nil, err
		}
		pairWeights(o, func(a, b int, x float64) { w[a*k+b] += x })
	}
	return fitEloMatrix(k, w, priorSD)
}

func fitEloMatrix(k int, w []float64, priorSD float64) ([]float64, error) {
	beta, _, err := fitPL(k, pairChoices(k, w), priorSD/EloPerNat, false)
	if err != nil {
		return nil, err
	}
	for i := range beta {
		beta[i] *= EloPerNat
	}
	return beta, nil
}

// LaplaceElo returns Elo ratings (as FitElo) with 95% intervals from the
// Laplace approximation of the penalised likelihood: the ratings, centred
// to mean 0, are taken as Gaussian with the inverse of the negative
// Hessian of the log-posterior at its maximum as covariance. With a finite
// prior the intervals always have positive width; with a record of all
// wins they are wide, as they should be (the data bound the rating from
// one side only, and the prior from the other).
func LaplaceElo(names []string, outcomes []Outcome, priorSD float64) ([]Rating, error) {
	k := len(names)
	w := make([]float64, k*k)
	for _, o := range outcomes {
		if err := o.validate(k); err != nil {
			return nil, err
		}
		pairWeights(o, func(a, b int, x float64) { w[a*k+b] += x })
	}
	beta, cov, err := fitPL(k, pairChoices(k, w), priorSD/EloPerNat, true)
	if err != nil {
		return nil, err
	}
	const z = 1.959963984540054
	out := make([]Rating, k)
	for i := range out {
		v := beta[i] * EloPerNat
		h := z * math.Sqrt(math.Max(cov[i*k+i], 0)) * EloPerNat
		out[i] = Rating{Agent: names[i], Value: v, Lo: v - h, Hi: v + h}
	}
	return out, nil
}

// BootstrapElo fits Elo (as FitElo) and adds 95% intervals: the
// percentile interval of b bootstrap resamples of the games (drawn with
// replacement, seeded by seed), widened to LaplaceElo's interval wherever
// that reaches further. The bootstrap alone is degenerate when resampling
// cannot change a record (an agent that won, or lost, every game keeps
// that record in every resample: its interval would have zero width);
// the Laplace interval is not. Names label the ratings. With b <= 0 the
// ratings have no intervals (Lo = Hi = Value).
func BootstrapElo(names []string, outcomes []Outcome, priorSD float64, b int, seed uint64) ([]Rating, error) {
	k := len(names)
	elo, err := FitElo(k, outcomes, priorSD)
	if err != nil {
		return nil, err
	}
	out := make([]Rating, k)
	for i := range out {
		out[i] = Rating{Agent: names[i], Value: elo[i], Lo: elo[i], Hi: elo[i]}
	}
	if b <= 0 || len(outcomes) == 0 {
		return out, nil
	}
	// Per-game pairwise contributions, flattened.
	type pw struct {
		a, b int
		w    float64
	}
	per := make([][]pw, len(outcomes))
	for g, o := range outcomes {
		pairWeights(o, func(a, b int, x float64) { per[g] = append(per[g], pw{a, b, x}) })
	}
	rng := games.NewRand(seed)
	samples := make([][]float64, k)
	w := make([]float64, k*k)
	for range b {
		clear(w)
		for range outcomes {
			for _, c := range per[rng.IntN(len(outcomes))] {
				w[c.a*k+c.b] += c.w
			}
		}
		r, err := fitEloMatrix(k, w, priorSD)
		if err != nil {
			return nil, fmt.Errorf("bootstrap: %w", err)
		}
		for i := range k {
			samples[i] = append(samples[i], r[i])
		}
	}
	lap, err := LaplaceElo(names, outcomes, priorSD)
	if err != nil {
		return nil, err
	}
	for i := range out {
		slices.Sort(samples[i])
		out[i].Lo = min(quantile(samples[i], 0.025), lap[i].Lo)
		out[i].Hi = max(quantile(samples[i], 0.975), lap[i].Hi)
	}
	return out, nil
}

// quantile of sorted xs by linear interpolation (type 7).
func quantile(xs []float64, q float64) float64 {
	h := q * float64(len(xs)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}

// FitBradleyTerry returns the MAP log-strengths of the Plackett-Luce model
// (Bradley-Terry for two-player games) with an independent N(0, priorSD²)
// prior on each agent, and 95% Laplace intervals for the centred
// log-strengths b_i - mean(b) (the data identify only differences; the
// prior's uncertainty about the common level is left out). With a finite
// prior the MAP log-strengths have mean 0 automatically (every choice's
// gradient sums to zero over agents). priorSD = +Inf gives the maximum-likelihood
// estimate, centred to mean 0, with intervals from the pseudo-inverse of
// the observed information.
func FitBradleyTerry(names []string, outcomes []Outcome, priorSD float64) ([]Rating, error) {
	k := len(names)
	var cs choiceSet
	for _, o := range outcomes {
		if err := o.validate(k); err != nil {
			return nil, err
		}
		addRanking(&cs, o, 1)
	}
	beta, cov, err := fitPL(k, cs.list, priorSD, true)
	if err != nil {
		return nil, err
	}
	const z = 1.959963984540054
	out := make([]Rating, k)
	for i := range out {
		h := z * math.Sqrt(math.Max(cov[i*k+i], 0))
		out[i] = Rating{Agent: names[i], Value: beta[i], Lo: beta[i] - h, Hi: beta[i] + h}
	}
	return out, nil
}

// plObjective is the log-posterior (up to a constant).
func plObjective(beta []float64, cs []choice, invVar float64) float64 {
	f := 0.0
	for _, c := range cs {
		f += c.w * (beta[c.winner] - logSumExp(beta, c.set))
	}
	for _, b := range beta {
		f -= 0.5 * invVar * b * b
	}
	return f
}

func logSumExp(beta []float64, set []int) float64 {
	m := math.Inf(-1)
	for _, j := range set {
		m = math.Max(m, beta[j])
	}
	s := 0.0
	for _, j := range set {
		s += math.Exp(beta[j] - m)
	}
	return m + math.Log(s)
}

var errNoMLE = errors.New("the maximum-likelihood estimate does not exist (some agent won or lost every comparison, or the agents fall into groups that never met); use a finite prior")

// newtonMaximise maximises a concave objective over x (updated in place)
// by Newton steps: derivs fills the gradient g and the negative Hessian h
// (row-major, len(x)² values) at x, and each step is halved until the
// objective does not decrease. It stops when a step is negligible
// (1e-10), or when no damped step improves the objective any more and the
// step is small (1e-6): with tens of thousands of games the objective's
// rounding error exceeds what a 1e-10 step changes, and Newton then
// stalls at the optimum rather than reaching it to the last bit. It
// returns the iterations used, or errNoMLE when a step cannot be solved,
// 200 iterations pass, or, unbounded (no prior), a coordinate runs past
// 50 (a maximum at infinity).
func newtonMaximise(x []float64, unbounded bool, objective func([]float64) float64, derivs func(x, g, h []float64), g, h []float64) (int, error) {
	n := len(x)
	trial := make([]float64, n)
	f := objective(x)
	for iter := 1; iter <= 200; iter++ {
		derivs(x, g, h)
		step, ok := cholSolve(n, h, g)
		if !ok {
			return iter, errNoMLE
		}
		t := 1.0
		var ft float64
		for range 60 {
			for i := range x {
				trial[i] = x[i] + t*step[i]
			}
			ft = objective(trial)
			if ft >= f-1e-12*math.Abs(f) {
				break
			}
			t /= 2
		}
		copy(x, trial)
		maxStep := 0.0
		for _, s := range step {
			maxStep = math.Max(maxStep, math.Abs(t*s))
		}
		stalled := ft <= f
		f = ft
		if maxStep < 1e-10 || (stalled && maxStep < 1e-6) {
			return iter, nil
		}
		if unbounded && slices.ContainsFunc(x, func(b float64) bool { return math.Abs(b) > 50 }) {
			return iter, errNoMLE
		}
	}
	return 200, errNoMLE
}

// fitPL maximises the Plackett-Luce log-likelihood of the weighted choices
// plus a N(0, sd²) log-prior per agent by damped Newton iterations. With
// sd = +Inf the gauge is fixed by centring (mean 0). When wantCov is set it
// also returns the k×k posterior covariance of the Laplace approximation.
func fitPL(k int, cs []choice, sd float64, wantCov bool) (beta, cov []float64, err error) {
	if k < 1 {
		return nil, nil, errors.New("no agents to rate")
	}
	if !(sd > 0) {
		return nil, nil, fmt.Errorf("prior standard deviation must be positive, got %v", sd)
	}
	invVar := 1 / (sd * sd) // 0 for sd = +Inf
	beta = make([]float64, k)
	grad := make([]float64, k)
	hess := make([]float64, k*k) // negative Hessian (+ gauge term without prior)
	q := make([]float64, 0, 8)
	if _, err := newtonMaximise(beta, invVar == 0,
		func(x []float64) float64 { return plObjective(x, cs, invVar) },
		func(x, g, h []float64) { negHessian(x, cs, invVar, g, h, q) }, grad, hess); err != nil {
		return nil, nil, err
	}
	if invVar == 0 {
		m := 0.0
		for _, b := range beta {
			m += b / float64(k)
		}
		for i := range beta {
			beta[i] -= m
		}
	}
	if wantCov {
		negHessian(beta, cs, invVar, grad, hess, q)
		cov = make([]float64, k*k)
		e := make([]float64, k)
		for j := range k {
			clear(e)
			e[j] = 1
			col, ok := cholSolve(k, hess, e)
			if !ok {
				return nil, nil, errNoMLE
			}
			for i := range k {
				cov[i*k+j] = col[i]
			}
		}
		if invVar == 0 {
			// (H + 11ᵀ/k)⁻¹ = H⁺ + 11ᵀ/k: remove the gauge direction.
			for i := range cov {
				cov[i] -= 1 / float64(k)
			}
		} else {
			// Only differences are identified by the data; the prior alone
			// fixes the common level (posterior sd ≈ sd/sqrt(k)). Report the
			// covariance of the centred log-strengths P·cov·P, P = I-11ᵀ/k.
			centreCov(k, cov)
		}
	}
	return beta, cov, nil
}

// centreCov replaces the k×k covariance c by P c P with P = I - 11ᵀ/k.
func centreCov(k int, c []float64) {
	row := make([]float64, k)
	col := make([]float64, k)
	all := 0.0
	for i := range k {
		for j := range k {
			row[i] += c[i*k+j] / float64(k)
			col[j] += c[i*k+j] / float64(k)
			all += c[i*k+j] / float64(k*k)
		}
	}
	for i := range k {
		for j := range k {
			c[i*k+j] += all - row[i] - col[j]
		}
	}
}

// negHessian fills grad with the gradient of the log-posterior and hess
// with its negative Hessian. Without a prior the negative Hessian is
// singular along the all-ones direction, so 11ᵀ/k is added: the Newton
// step then has mean zero and solves the original equations because the
// gradient sums to zero.
func negHessian(beta []float64, cs []choice, invVar float64, grad, hess, q []float64) {
	k := len(beta)
	for i := range beta {
		grad[i] = -invVar * beta[i]
	}
	clear(hess)
	for i := range k {
		if invVar == 0 {
			for j := range k {
				hess[i*k+j] = 1 / float64(k)
			}
		}
		hess[i*k+i] += invVar
	}
	for _, c := range cs {
		lse := logSumExp(beta, c.set)
		q = q[:0]
		for _, j := range c.set {
			q = append(q, math.Exp(beta[j]-lse))
		}
		grad[c.winner] += c.w
		for a, i := range c.set {
			grad[i] -= c.w * q[a]
			hess[i*k+i] += c.w * q[a]
			for b, j := range c.set {
				hess[i*k+j] -= c.w * q[a] * q[b]
			}
		}
	}
}

// cholesky returns the lower-triangular factor L of a = L Lᵀ for a
// symmetric positive-definite n×n a (row-major). ok is false when a is
// not numerically positive definite.
func cholesky(n int, a []float64) (l []float64, ok bool) {
	l = make([]float64, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			s := a[i*n+j]
			for p := range j {
				s -= l[i*n+p] * l[j*n+p]
			}
			if i == j {
				if !(s > 1e-12*math.Max(1, math.Abs(a[i*n+i]))) {
					return nil, false
				}
				l[i*n+i] = math.Sqrt(s)
			} else {
				l[i*n+j] = s / l[j*n+j]
			}
		}
	}
	return l, true
}

// cholSolve solves A x = b for a symmetric positive-definite k×k A
// (row-major). ok is false when A is not numerically positive definite.
func cholSolve(k int, a, b []float64) (x []float64, ok bool) {
	l, ok := cholesky(k, a)
	if !ok {
		return nil, false
	}
	x = slices.Clone(b)
	for i := range k {
		for p := range i {
			x[i] -= l[i*k+p] * x[p]
		}
		x[i] /= l[i*k+i]
	}
	for i := k - 1; i >= 0; i-- {
		for p := i + 1; p < k; p++ {
			x[i] -= l[p*k+i] * x[p]
		}
		x[i] /= l[i*k+i]
	}
	return x, true
}

// FitILSR returns Plackett-Luce log-strengths (mean 0) by Iterative Luce
// Spectral Ranking over the same choices as FitBradleyTerry. alpha adds a
// virtual comparison of that weight won by each side of every pair (0
// for none; then the estimate exists only when the comparison graph is
// strongly connected). Each iteration builds the Markov chain with rate
// sum_c w_c/sum_{t in set_c} pi_t from every loser to the winner of each
// choice c, and replaces pi by its stationary distribution; iterations
// stop when no log-strength moves by more than 1e-10.
func FitILSR(k int, outcomes []Outcome, alpha float64) ([]float64, error) {
	var cs choiceSet
	for _, o := range outcomes {
		if err := o.validate(k); err != nil {
			return nil, err
		}
		addRanking(&cs, o, 1)
	}
	if alpha < 0 {
		return nil, fmt.Errorf("ILSR regularisation must be non-negative, got %v", alpha)
	}
	pi := make([]float64, k)
	for i := range pi {
		pi[i] = 1 / float64(k)
	}
	rate := make([]float64, k*k) // rate[j*k+i]: from j to i
	for iter := 0; iter < 100000; iter++ {
		clear(rate)
		for _, c := range cs.list {
			s := 0.0
			for _, t := range c.set {
				s += pi[t]
			}
			for _, j := range c.set {
				if j != c.winner {
					rate[j*k+c.winner] += c.w / s
				}
			}
		}
		if alpha > 0 {
			for i := range k {
				for j := range k {
					if i != j {
						rate[j*k+i] += alpha / (pi[i] + pi[j])
					}
				}
			}
		}
		next, err := stationary(k, rate)
		if err != nil {
			return nil, err
		}
		delta := 0.0
		for i := range pi {
			delta = math.Max(delta, math.Abs(math.Log(next[i])-math.Log(pi[i])))
		}
		pi = next
		if delta < 1e-10 {
			out := make([]float64, k)
			m := 0.0
			for i := range pi {
				out[i] = math.Log(pi[i])
				m += out[i] / float64(k)
			}
			for i := range out {
				out[i] -= m
			}
			return out, nil
		}
	}
	return nil, errors.New("ILSR did not converge in 100000 iterations (the comparison graph is nearly disconnected; use alpha > 0)")
}

// stationary solves pi Q = 0, sum pi = 1 for the continuous-time chain
// with off-diagonal rates rate[j*k+i] (j to i), by Gaussian elimination
// with partial pivoting on the transposed system with the last equation
// replaced by the normalisation.
func stationary(k int, rate []float64) ([]float64, error) {
	a := make([]float64, k*(k+1)) // augmented k×(k+1)
	for i := range k {            // equation i: sum_j pi_j rate[j][i] - pi_i out_i = 0
		for j := range k {
			if j != i {
				a[i*(k+1)+j] = rate[j*k+i]
				a[i*(k+1)+i] -= rate[i*k+j]
			}
		}
	}
	for j := range k + 1 {
		a[(k-1)*(k+1)+j] = 1
	}
	for col := range k {
		p := col
		for r := col + 1; r < k; r++ {
			if math.Abs(a[r*(k+1)+col]) > math.Abs(a[p*(k+1)+col]) {
				p = r
			}
		}
		if math.Abs(a[p*(k+1)+col]) < 1e-300 {
			return nil, errors.New("ILSR: the comparison graph is disconnected; use alpha > 0")
		}
		for j := range k + 1 {
			a[col*(k+1)+j], a[p*(k+1)+j] = a[p*(k+1)+j], a[col*(k+1)+j]
		}
		for r := range k {
			if r == col {
				continue
			}
			f := a[r*(k+1)+col] / a[col*(k+1)+col]
			if f == 0 {
				continue
			}
			for j := col; j <= k; j++ {
				a[r*(k+1)+j] -= f * a[col*(k+1)+j]
			}
		}
	}
	pi := make([]float64, k)
	for i := range k {
		pi[i] = a[i*(k+1)+k] / a[i*(k+1)+i]
		if !(pi[i] > 0) {
			return nil, errors.New("ILSR: the comparison graph is not strongly connected (some agent never won or never lost); use alpha > 0")
		}
	}
	return pi, nil
}
