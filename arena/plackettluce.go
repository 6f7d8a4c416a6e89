package arena

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// This file rates agents from full finishing orders with the Davidson-Luce
// model: Plackett-Luce with ties (D. Firth, I. Kosmidis and H. Turner,
// "Davidson-Luce model for multi-item choice with ties", arXiv:1909.07123,
// 2019; the model of H. Turner et al., "Modelling rankings in R: the
// PlackettLuce package", Computational Statistics 35, 2020).
//
// A game's finishing order is read as a sequence of stages: from the
// players not yet placed (R), the next place goes to a set S ⊆ R (one
// player, or several tied ones). Agent i has strength α_i = exp(β_i); a
// tie of d players has prevalence δ_d (δ_1 = 1). Stage S is chosen with
// probability
//
//	δ_|S| · (∏_{i∈S} α_i)^(1/|S|)  /  Σ_{T ⊆ R, |T| ∈ orders} δ_|T| · (∏_{i∈T} α_i)^(1/|T|),
//
// the geometric mean of the tied players' strengths standing for the set.
// Without ties this is Plackett-Luce, and for two players it is
// Bradley-Terry with Davidson's (1970) draws: P(i beats j) = α_i/(α_i + α_j
// + δ_2 √(α_i α_j)), whose maximum-likelihood estimate from w wins, l
// losses and t draws is α_i/α_j = w/l, δ_2 = t/√(wl). Unlike FitElo and
// FitBradleyTerry, which count a draw as half a win each way (ties as
// averaged orderings), draws here inform δ and leave the strength
// difference to the decisive results.
//
// Tie orders. δ_d is estimated for every tie size d seen in the data;
// sizes never seen get δ_d = 0 (their maximum-likelihood value, on the
// boundary) and are left out of the sums, so data without ties are fitted
// by plain Plackett-Luce.
//
// Fitting. With θ = (β, log δ) the log-probability of a stage is
// x_S·θ - log Σ_T exp(x_T·θ), x_T holding 1/|T| for T's members and 1 for
// log δ_|T|: a conditional logit, concave in θ. A weak Gaussian prior
// N(0, sd²) on every component (PLOptions.PriorSD, by default EloPriorSD)
// makes it strictly concave, so the maximum is unique and finite even
// when one agent wins every game. It is found by Newton's method with a
// backtracking line search (each accepted step does not decrease the
// objective; converged when no component moves by more than 1e-10, or
// when no step improves the objective any longer and the step is below
// 1e-6). Without ties Hunter's MM algorithm for Plackett-Luce (Ann.
// Statist. 32, 2004) reaches the same strengths, but linearly; Newton
// takes a few iterations and estimates δ jointly.
//
// Intervals are the Laplace approximation: the posterior of θ is taken as
// Gaussian with covariance the inverse negative Hessian (observed
// information plus the prior's) at the maximum; a rating's interval is
// that of β_i - reference (the mean β, or the anchor agent's β).
//
// Existence. Without the prior the maximum-likelihood estimate exists
// only when the comparison graph is strongly connected (Hunter 2004,
// Assumption 1): for every split of the agents into two groups, someone
// in each group finished ahead of (or tied with) someone in the other.
// Where it is not, the prior alone bounds the ratings of some agents from
// one side, and PLRating.Flag says which side. Agents that never met,
// even through others, cannot be compared at all: FitPlackettLuce then
// fails with ErrDisconnected.

// ErrDisconnected reports agents that cannot be compared: the graph
// linking agents that sat at a table together is not connected.
var ErrDisconnected = errors.New("the agents fall into groups that never met, directly or through others; their ratings cannot be compared")

// PLOptions configures FitPlackettLuce.
type PLOptions struct {
	// PriorSD is the standard deviation, in Elo points, of the Gaussian
	// prior on every log-strength and log tie prevalence (0: EloPriorSD;
	// +Inf: none, the maximum-likelihood estimate, which fails where it
	// does not exist).
	PriorSD float64
	// Anchor names the agent rated 0 (with an interval of zero width);
	// "" rates the agents so that their mean is 0.
	Anchor string
}

// Flags of PLRating: the side from which only the prior bounds a rating.
const (
	// PLFlagTop: no agent outside the rated agent's group (the agents it
	// is strongly connected to, often just itself) ever finished ahead of
	// or tied with a member: the data push its rating up without bound.
	PLFlagTop = "top"
	// PLFlagBottom: no member ever finished ahead of or tied with an
	// agent outside the group: the data push the rating down.
	PLFlagBottom = "bottom"
	// PLFlagMiddle: the group is between others that are separated from
	// it one way (it always beat some and always lost to others).
	PLFlagMiddle = "middle"
)

// PLRating is one agent's Plackett-Luce rating on the Elo scale (400
// points = a factor 10 in strength) with its 95% Laplace interval.
type PLRating struct {
	Rating
	// Flag is "" when the data bound the rating from both sides, else
	// PLFlagTop, PLFlagBottom or PLFlagMiddle: the estimate then rests on
	// the prior and its interval is correspondingly wide.
	Flag string `json:"flag,omitempty"`
}

// PLTie is the estimated prevalence δ_d of d-player ties with its 95%
// Laplace interval (on log δ, mapped back). δ_2 is, for two equally
// strong agents, the odds of a draw against either one's win.
type PLTie struct {
	Players int     `json:"players"`
	Delta   float64 `json:"delta"`
	Lo      float64 `json:"lo"`
	Hi      float64 `json:"hi"`
	// Bounded by the prior only: every stage where a tie of this size
	// could have happened ended in one.
	Flag bool `json:"prior_bounded,omitempty"`
}

// PLFit is the result of FitPlackettLuce.
type PLFit struct {
	Ratings []PLRating `json:"ratings"`
	// Ties holds δ_d for every tie size seen, smallest first; empty when
	// no game had a tie.
	Ties []PLTie `json:"ties,omitempty"`
	// Anchor is the agent rated 0, or "" for mean 0.
	Anchor string `json:"anchor,omitempty"`
	// PriorSD is the prior's standard deviation in Elo points; 0 for
	// none (the maximum-likelihood estimate).
	PriorSD float64 `json:"prior_sd"`
	// Connected reports a strongly connected comparison graph: the
	// maximum-likelihood estimate exists and no rating is flagged.
	Connected  bool `json:"strongly_connected"`
	Iterations int  `json:"iterations"`
}

// plStage is one distinct stage of the data with its total weight.
type plStage struct {
	vars []int       // parameter indices the stage touches: R's agents, then tie params
	alts [][]float64 // feature vector of each alternative over vars
	obs  int         // the alternative that happened
	w    float64
}

// maxPLAlternatives bounds the alternatives of one stage (subsets of the
// remaining players of a permitted size).
const maxPLAlternatives = 1 << 14

// FitPlackettLuce fits the Davidson-Luce model (see above) to outcomes of
// games between len(names) agents and returns every agent's rating on the
// Elo scale with its 95% interval.
func FitPlackettLuce(names []string, outcomes []Outcome, opt PLOptions) (*PLFit, error) {
	k := len(names)
	if k < 2 {
		return nil, fmt.Errorf("Plackett-Luce: need at least 2 agents, got %d", k)
	}
	sd := opt.PriorSD
	if sd == 0 {
		sd = EloPriorSD
	}
	if !(sd > 0) {
		return nil, fmt.Errorf("Plackett-Luce: prior standard deviation must be positive, got %v", opt.PriorSD)
	}
	anchor := -1
	if opt.Anchor != "" {
		anchor = slices.Index(names, opt.Anchor)
		if anchor < 0 {
			return nil, fmt.Errorf("Plackett-Luce: anchor %q is not one of the agents", opt.Anchor)
		}
	}
	// Pass 1: the distinct stages (S, R), the tie sizes seen and the
	// comparison graphs.
	type raw struct {
		s, r []int
		w    float64
	}
	var stages []raw
	index := map[string]int{}
	ahead := make([]bool, k*k) // ahead[a*k+b]: a finished ahead of or tied with b
	met := make([]bool, k*k)
	var orders []int // tie sizes seen, sorted
	for gi, o := range outcomes {
		if err := o.validate(k); err != nil {
			return nil, fmt.Errorf("game %d: %w", gi+1, err)
		}
		order := make([]int, len(o.Agents)) // seats, best first
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch ra, rb := o.Returns[a], o.Returns[b]; {
			case ra > rb:
				return -1
			case ra < rb:
				return 1
			}
			return 0
		})
		for i, sa := range order {
			for _, sb := range order[i+1:] {
				a, b := o.Agents[sa], o.Agents[sb]
				ahead[a*k+b] = true
				if o.Returns[sa] == o.Returns[sb] {
					ahead[b*k+a] = true
				}
				met[a*k+b], met[b*k+a] = true, true
			}
		}
		for i := 0; i < len(order); {
			j := i + 1
			for j < len(order) && o.Returns[order[j]] == o.Returns[order[i]] {
				j++
			}
			if len(order)-i >= 2 {
				s := agentsOf(o.Agents, order[i:j])
				r := agentsOf(o.Agents, order[i:])
				key := plKey(s, r)
				if x, ok := index[key]; ok {
					stages[x].w++
				} else {
					index[key] = len(stages)
					stages = append(stages, raw{s, r, 1})
				}
				if d := j - i; d >= 2 {
					if p, found := slices.BinarySearch(orders, d); !found {
						orders = slices.Insert(orders, p, d)
					}
				}
			}
			i = j
		}
	}
	if !connected(k, met) {
		return nil, fmt.Errorf("Plackett-Luce: %w", ErrDisconnected)
	}
	// Pass 2: every stage's alternatives as feature vectors.
	nPar := k + len(orders)
	tieParam := func(d int) int {
		p, _ := slices.BinarySearch(orders, d)
		return k + p
	}
	possible := make([]float64, len(orders)) // stage weight where a d-tie could happen
	happened := make([]float64, len(orders))
	fit := make([]plStage, len(stages))
	for si, st := range stages {
		ps := plStage{w: st.w, obs: -1, vars: slices.Clone(st.r)}
		for _, d := range orders {
			if d <= len(st.r) {
				ps.vars = append(ps.vars, tieParam(d))
				possible[tieParam(d)-k] += st.w
			}
		}
		if len(st.s) >= 2 {
			happened[tieParam(len(st.s))-k] += st.w
		}
		var err error
		ps.alts, ps.obs, err = plAlternatives(st.r, st.s, orders, len(ps.vars))
		if err != nil {
			return nil, fmt.Errorf("Plackett-Luce: %w", err)
		}
		fit[si] = ps
	}
	theta, cov, iters, err := fitConditionalLogit(nPar, k, fit, sd/EloPerNat)
	if err != nil {
		return nil, fmt.Errorf("Plackett-Luce: %w", err)
	}
	res := &PLFit{Anchor: opt.Anchor, Iterations: iters, Ratings: make([]PLRating, k)}
	if !math.IsInf(sd, 1) {
		res.PriorSD = sd // JSON has no +Inf
	}
	const z = 1.959963984540054
	ref := 0.0
	if anchor >= 0 {
		ref = theta[anchor]
	} else {
		for i := range k {
			ref += theta[i] / float64(k)
		}
	}
	for i := range k {
		var v float64 // variance of β_i - reference
		if anchor >= 0 {
			v = cov[i*nPar+i] + cov[anchor*nPar+anchor] - 2*cov[i*nPar+anchor]
		} else {
			// Var(β_i - mean β) = c_ii - 2 mean_j c_ij + mean_jl c_jl.
			row, all := 0.0, 0.0
			for j := range k {
				row += cov[i*nPar+j] / float64(k)
				for l := range k {
					all += cov[j*nPar+l] / float64(k*k)
				}
			}
			v = cov[i*nPar+i] - 2*row + all
		}
		val := EloPerNat * (theta[i] - ref)
		h := z * math.Sqrt(math.Max(v, 0)) * EloPerNat
		if i == anchor {
			val, h = 0, 0
		}
		res.Ratings[i] = PLRating{Rating: Rating{Agent: names[i], Value: val, Lo: val - h, Hi: val + h}}
	}
	for p, d := range orders {
		t := theta[k+p]
		h := z * math.Sqrt(math.Max(cov[(k+p)*nPar+k+p], 0))
		res.Ties = append(res.Ties, PLTie{Players: d, Delta: math.Exp(t), Lo: math.Exp(t - h), Hi: math.Exp(t + h),
			Flag: happened[p] >= possible[p]})
	}
	flags := strongFlags(k, ahead)
	res.Connected = true
	for i, f := range flags {
		res.Ratings[i].Flag = f
		if f != "" {
			res.Connected = false
		}
	}
	return res, nil
}

// agentsOf returns the sorted agents in the given seats.
func agentsOf(agents, seats []int) []int {
	out := make([]int, len(seats))
	for i, s := range seats {
		out[i] = agents[s]
	}
	slices.Sort(out)
	return out
}

func plKey(s, r []int) string {
	var b strings.Builder
	for _, x := range s {
		b.WriteString(strconv.Itoa(x))
		b.WriteByte(',')
	}
	b.WriteByte('|')
	for _, x := range r {
		b.WriteString(strconv.Itoa(x))
		b.WriteByte(',')
	}
	return b.String()
}

// plAlternatives returns the feature vectors (over the stage's vars: r's
// agents in order, then one log δ per tie order no larger than r) of
// every subset of r whose size is 1 or a tie order, and the index of s
// among them.
func plAlternatives(r, s []int, orders []int, nv int) (alts [][]float64, obs int, err error) {
	n := len(r)
	sizes := []int{1}
	for _, d := range orders {
		if d <= n {
			sizes = append(sizes, d)
		}
	}
	count := 0
	for _, d := range sizes {
		count += binomial(n, d)
		if count > maxPLAlternatives {
			return nil, 0, fmt.Errorf("a table of %d seats with ties of up to %d players has too many possible stages (over %d)", n, sizes[len(sizes)-1], maxPLAlternatives)
		}
	}
	obs = -1
	members := make([]int, 0, n)
	for ti, d := range sizes {
		// Every d-subset of positions 0..n-1, in lexicographic order.
		members = members[:0]
		for i := range d {
			members = append(members, i)
		}
		for {
			x := make([]float64, nv)
			for _, m := range members {
				x[m] = 1 / float64(d)
			}
			if d >= 2 {
				x[n+ti-1] = 1
			}
			if obs < 0 && len(s) == d {
				match := true
				for i, m := range members {
					if r[m] != s[i] {
						match = false
						break
					}
				}
				if match {
					obs = len(alts)
				}
			}
			alts = append(alts, x)
			// Next combination.
			i := d - 1
			for i >= 0 && members[i] == n-d+i {
				i--
			}
			if i < 0 {
				break
			}
			members[i]++
			for j := i + 1; j < d; j++ {
				members[j] = members[j-1] + 1
			}
		}
	}
	if obs < 0 {
		return nil, 0, errors.New("internal error: a stage's outcome is not among its alternatives")
	}
	return alts, obs, nil
}

// binomial returns C(n, d), or maxPLAlternatives+1 where it is larger
// (so that it cannot overflow).
func binomial(n, d int) int {
	if d < 0 || d > n {
		return 0
	}
	d = min(d, n-d) // C(n, i) then grows with i up to d
	c := 1
	for i := range d {
		c = c * (n - i) / (i + 1)
		if c > maxPLAlternatives {
			return maxPLAlternatives + 1
		}
	}
	return c
}

// connected reports whether the undirected graph met (k×k) is connected.
func connected(k int, met []bool) bool {
	seen := make([]bool, k)
	stack := []int{0}
	seen[0] = true
	n := 1
	for len(stack) > 0 {
		a := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for b := range k {
			if met[a*k+b] && !seen[b] {
				seen[b] = true
				n++
				stack = append(stack, b)
			}
		}
	}
	return n == k
}

// strongFlags returns per agent "" when the digraph ahead (k×k) is
// strongly connected, and otherwise the PLFlag of the agent's strongly
// connected component: top when no edge enters it from outside, bottom
// when none leaves it, middle otherwise.
func strongFlags(k int, ahead []bool) []string {
	reach := slices.Clone(ahead) // transitive closure (Warshall)
	for i := range k {
		reach[i*k+i] = true
	}
	for m := range k {
		for i := range k {
			if !reach[i*k+m] {
				continue
			}
			for j := range k {
				if reach[m*k+j] {
					reach[i*k+j] = true
				}
			}
		}
	}
	flags := make([]string, k)
	for i := range k {
		in, out := false, false // an edge from / to an agent outside i's component
		for j := range k {
			if reach[i*k+j] && reach[j*k+i] {
				continue // same component
			}
			in = in || reach[j*k+i]
			out = out || reach[i*k+j]
		}
		strong := true
		for j := range k {
			strong = strong && reach[i*k+j] && reach[j*k+i]
		}
		switch {
		case strong:
		case !in:
			flags[i] = PLFlagTop
		case !out:
			flags[i] = PLFlagBottom
		default:
			flags[i] = PLFlagMiddle
		}
	}
	return flags
}

// fitConditionalLogit maximises Σ_stages w (x_obs·θ - log Σ_alt exp(x·θ))
// - |θ|²/(2 sd²) over θ ∈ R^n by damped Newton iterations and returns θ,
// the n×n inverse negative Hessian at the maximum and the number of
// iterations. The first k components are log-strengths: with sd = +Inf
// their common level is not identified, so it is fixed by centring them
// (and 11ᵀ/k added to their block of the negative Hessian, which leaves
// every contrast's variance unchanged).
func fitConditionalLogit(n, k int, stages []plStage, sd float64) (theta, cov []float64, iters int, err error) {
	invVar := 1 / (sd * sd)
	theta = make([]float64, n)
	grad := make([]float64, n)
	hess := make([]float64, n*n)
	iters, err = newtonMaximise(theta, invVar == 0,
		func(x []float64) float64 { return clogitObjective(x, stages, invVar) },
		func(x, g, h []float64) { clogitDerivatives(x, stages, invVar, k, g, h) }, grad, hess)
	if err != nil {
		return nil, nil, iters, err
	}
	if invVar == 0 {
		m := 0.0
		for _, b := range theta[:k] {
			m += b / float64(k)
		}
		for i := range k {
			theta[i] -= m
		}
	}
	clogitDerivatives(theta, stages, invVar, k, grad, hess)
	cov, ok := cholInverse(n, hess)
	if !ok {
		return nil, nil, iters, errNoMLE
	}
	return theta, cov, iters, nil
}

// cholInverse returns the inverse of the symmetric positive-definite n×n
// matrix a (row-major) from one Cholesky factorisation a = L Lᵀ:
// a⁻¹ = L⁻ᵀ L⁻¹. ok is false when a is not numerically positive definite.
func cholInverse(n int, a []float64) (inv []float64, ok bool) {
	l, ok := cholesky(n, a)
	if !ok {
		return nil, false
	}
	// m = L⁻¹ (lower triangular), by forward substitution per column.
	m := make([]float64, n*n)
	for j := range n {
		m[j*n+j] = 1 / l[j*n+j]
		for i := j + 1; i < n; i++ {
			s := 0.0
			for p := j; p < i; p++ {
				s -= l[i*n+p] * m[p*n+j]
			}
			m[i*n+j] = s / l[i*n+i]
		}
	}
	// inv = mᵀ m.
	inv = make([]float64, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			s := 0.0
			for p := i; p < n; p++ {
				s += m[p*n+i] * m[p*n+j]
			}
			inv[i*n+j], inv[j*n+i] = s, s
		}
	}
	return inv, true
}

// stageProbs fills p with the stage's alternative probabilities at theta
// and returns the log-probability of the observed alternative.
func stageProbs(theta []float64, st *plStage, p []float64) float64 {
	m := math.Inf(-1)
	for a, x := range st.alts {
		s := 0.0
		for v, xv := range x {
			s += xv * theta[st.vars[v]]
		}
		p[a] = s
		m = math.Max(m, s)
	}
	sum := 0.0
	for a := range p {
		sum += math.Exp(p[a] - m)
	}
	lse := m + math.Log(sum)
	obs := p[st.obs] - lse
	for a := range p {
		p[a] = math.Exp(p[a] - lse)
	}
	return obs
}

func clogitObjective(theta []float64, stages []plStage, invVar float64) float64 {
	f := 0.0
	var p []float64
	for i := range stages {
		st := &stages[i]
		p = slices.Grow(p[:0], len(st.alts))[:len(st.alts)]
		f += st.w * stageProbs(theta, st, p)
	}
	for _, t := range theta {
		f -= 0.5 * invVar * t * t
	}
	return f
}

// clogitDerivatives fills grad with the gradient of the objective and hess
// with its negative Hessian (plus 11ᵀ/k on the first k components when
// invVar = 0; see fitConditionalLogit).
func clogitDerivatives(theta []float64, stages []plStage, invVar float64, k int, grad, hess []float64) {
	n := len(theta)
	for i := range theta {
		grad[i] = -invVar * theta[i]
	}
	clear(hess)
	for i := range n {
		hess[i*n+i] += invVar
	}
	if invVar == 0 {
		for i := range k {
			for j := range k {
				hess[i*n+j] += 1 / float64(k)
			}
		}
	}
	var p, mean []float64
	for i := range stages {
		st := &stages[i]
		p = slices.Grow(p[:0], len(st.alts))[:len(st.alts)]
		stageProbs(theta, st, p)
		nv := len(st.vars)
		mean = slices.Grow(mean[:0], nv)[:nv]
		clear(mean)
		for a, x := range st.alts {
			for v, xv := range x {
				mean[v] += p[a] * xv
			}
		}
		for v, xv := range st.alts[st.obs] {
			grad[st.vars[v]] += st.w * (xv - mean[v])
		}
		// Negative Hessian: w · Cov_p(x) = w (Σ_a p_a x_a x_aᵀ - mean meanᵀ).
		for a, x := range st.alts {
			for u, xu := range x {
				if xu == 0 {
					continue
				}
				row := st.vars[u] * n
				for v, xv := range x {
					hess[row+st.vars[v]] += st.w * p[a] * xu * xv
				}
			}
		}
		for u := range nv {
			row := st.vars[u] * n
			for v := range nv {
				hess[row+st.vars[v]] -= st.w * mean[u] * mean[v]
			}
		}
	}
}
