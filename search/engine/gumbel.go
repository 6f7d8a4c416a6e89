package engine

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
)

// Gumbel root search with sequential halving (Danihelka, Guez,
// Schrittwieser and Silver, "Policy improvement by planning with Gumbel",
// ICLR 2022; DeepMind's mctx gumbel_muzero_policy). At the root of a
// search:
//
//  1. draw g(a) ~ Gumbel(0, 1) for every legal action and keep the m =
//     min(M, legal) actions with the largest g(a) + logits(a), where
//     logits(a) = log pi(a) is the network's root policy (any constant
//     shift of the logits changes nothing below);
//  2. sequential halving over them with the search's budget n: with
//     k actions remaining, a phase visits each of them
//     max(1, floor(n / (ceil(log2 m) * k))) times (round robin, the root
//     action forced with search.Tree.SelectLeafForced), then keeps the
//     max(2, floor(k/2)) actions with the largest
//     g(a) + logits(a) + sigma(q^(a)); phases repeat on two actions until
//     the budget is spent (mctx's schedule; with m = 1 the one action
//     takes every simulation);
//  3. the move is the remaining action with the largest
//     g(a) + logits(a) + sigma(q^(a)) among those with the most visits
//     (the last phase may be cut short by the budget; mctx restricts the
//     choice the same way), and the improved policy, the training target,
//     is softmax(logits(a) + sigma(q^(a))) over the legal actions.
//
// sigma(q) = (c_visit + max_b N(b)) * c_scale * q (paper eq. 8; c_visit
// = 50, c_scale = 1). q^ is the completed Q (paper Appendix D): q(a) for
// visited actions and, for unvisited ones, the mixed value
//
//	v_mix = (v + N / sum_{b: N(b)>0} pi(b) * sum_{a: N(a)>0} pi(a) q(a)) / (1 + N)
//
// with v the network's value of the root and N = sum_b N(b); the completed
// values are then rescaled to [0, 1] by their minimum and maximum over
// the legal actions (mctx's qtransform_completed_by_mix_value with
// rescale_values; the range is floored at 1e-8).
//
// The halving keeps the paper's explicit set (the top half at the end of
// each phase), where mctx's table-driven implementation picks, visit by
// visit, the best action among those with the phase's visit count; the
// visit counts per phase are the same. Below the root the tree keeps
// PUCT, not mctx's deterministic completed-Q selection. Gumbel noise
// replaces the root's Dirichlet noise (Settings.SearchOptions turns it
// off) and the opening temperature: the Gumbel move is played.
//
// Roots without a player to move (simultaneous roots) are searched with
// the tree's rule as usual; GumbelAction and ImprovedPolicy then report
// false.

// Gumbel root search constants (paper section 4 and Appendix D).
const (
	// GumbelCVisit is c_visit of sigma.
	GumbelCVisit = 50.0
	// GumbelCScale is c_scale of sigma.
	GumbelCScale = 1.0
	// gumbelRangeFloor bounds below the range of the completed Q values
	// before rescaling (mctx's epsilon).
	gumbelRangeFloor = 1e-8
	// gumbelTiny replaces a zero prior in the logits, which keeps every
	// legal action's logit finite (and its improved-policy mass positive).
	gumbelTiny = 1e-30
)

// GumbelOptions configure Gumbel root search; the zero value (M = 0)
// turns it off.
type GumbelOptions struct {
	// M is the number of root actions sampled for sequential halving
	// (capped by the number of legal actions); 0 = off.
	M int
	// CVisit and CScale are sigma's constants; 0 means GumbelCVisit and
	// GumbelCScale.
	CVisit, CScale float64
}

// gumbel is one job's Gumbel root search. It is owned by the job's worker
// goroutine like the job itself.
//
// Invariants while active: acts holds the remaining actions, best first
// at the start of each phase; left is the number of forced simulations
// of the current phase not yet selected; the per-action arrays are
// indexed by action id and meaningful for legal actions only.
type gumbel struct {
	cVisit, cScale float64
	m              int
	rng            *rand.Rand

	active bool           // the current search's root has a player to move
	mover  int            // the root's player
	n      int            // the search's budget
	log2m  int            // ceil(log2 m) (0 when m = 1)
	legal  []games.Action // legal root actions, by id
	acts   []games.Action // remaining actions
	left   int            // forced simulations left in this phase
	rr     int            // round-robin position in acts

	value  float64   // the network's value of the root, mover's view
	g      []float64 // Gumbel noise
	logits []float64 // log of the network's root policy
	prior  []float64 // the network's root policy (pi of v_mix)
	visits []int     // root visits, refreshed by transform
	sigma  []float64 // sigma(q^), refreshed by transform
	stats  []search.ActionStat

	scratch []float32 // MergeGumbel: one tree's improved policy
	votes   []int     // MergeGumbel: trees choosing each action
}

// SetGumbel turns Gumbel root search on for j's next searches (o.M > 0),
// with noise drawn from a stream seeded by seed, or off (o.M = 0). The
// job's tree must select by a rule that does not need the root (PUCT
// below the root) and must not reuse subtrees between searches.
func (j *Job) SetGumbel(o GumbelOptions, seed uint64) {
	if o.M <= 0 {
		j.gumbel = nil
		return
	}
	n := len(j.priors)
	gb := &gumbel{m: o.M, cVisit: o.CVisit, cScale: o.CScale, rng: games.NewRand(seed),
		g: make([]float64, n), logits: make([]float64, n), prior: make([]float64, n),
		visits: make([]int, n), sigma: make([]float64, n), scratch: make([]float32, n), votes: make([]int, n)}
	if gb.cVisit == 0 {
		gb.cVisit = GumbelCVisit
	}
	if gb.cScale == 0 {
		gb.cScale = GumbelCScale
	}
	j.gumbel = gb
}

// begin starts the Gumbel search of j's root, which was just prepared
// with priors (nil: uniform) and valued v by the network: it draws the
// noise, samples the m actions and opens the first phase.
func (gb *gumbel) begin(j *Job, priors []float32, v float32) {
	gb.mover = j.root.CurrentPlayer()
	gb.legal = gb.legal[:0]
	gb.active = gb.mover >= 0
	if !gb.active {
		return
	}
	for a := range j.rootL.mask.All() {
		gb.legal = append(gb.legal, a)
	}
	if len(gb.legal) == 0 {
		gb.active = false
		return
	}
	gb.value = max(-1, min(1, float64(v)))
	for _, a := range gb.legal {
		p := 1 / float64(len(gb.legal))
		if priors != nil {
			p = float64(priors[a])
		}
		gb.prior[a] = p
		gb.logits[a] = math.Log(max(p, gumbelTiny))
		gb.g[a] = gumbelNoise(gb.rng)
	}
	m := min(gb.m, len(gb.legal))
	gb.acts = append(gb.acts[:0], gb.legal...)
	slices.SortStableFunc(gb.acts, func(a, b games.Action) int {
		return cmp.Compare(gb.g[b]+gb.logits[b], gb.g[a]+gb.logits[a])
	})
	gb.acts = gb.acts[:m]
	gb.n = int(j.sims)
	gb.log2m = bits.Len(uint(m - 1)) // ceil(log2 m)
	gb.openPhase()
}

// gumbelNoise draws from Gumbel(0, 1): -log(-log U), U uniform in (0, 1).
func gumbelNoise(rng *rand.Rand) float64 {
	u := rng.Float64()
	for u == 0 {
		u = rng.Float64()
	}
	return -math.Log(-math.Log(u))
}

// phaseVisits is the number of visits each of k remaining actions gets in
// a phase of sequential halving over m actions (log2m = ceil(log2 m))
// with a budget of n simulations: max(1, floor(n / (log2m * k))), and
// all n when m = 1.
func phaseVisits(n, log2m, k int) int {
	if log2m == 0 {
		return n
	}
	return max(1, n/(log2m*k))
}

// openPhase starts a phase over the remaining actions.
func (gb *gumbel) openPhase() {
	gb.left = phaseVisits(gb.n, gb.log2m, len(gb.acts)) * len(gb.acts)
	gb.rr = 0
}

// room reports whether j may select one more leaf in the current step.
// When the phase's simulations are all selected it ends the step, and at
// the start of the next one (every simulation backed up: nsel is 0) it
// halves the remaining actions and opens the next phase.
func (gb *gumbel) room(j *Job) bool {
	if !gb.active || gb.left > 0 {
		return true
	}
	if j.nsel > 0 {
		return false
	}
	gb.halve(j.tree)
	return true
}

// next returns the root action of the next simulation (round robin over
// the remaining actions).
func (gb *gumbel) next() games.Action {
	a := gb.acts[gb.rr]
	gb.rr++
	if gb.rr == len(gb.acts) {
		gb.rr = 0
	}
	gb.left--
	return a
}

// halve keeps the best max(2, k/2) of the k remaining actions by
// g + logits + sigma(q^) and opens the next phase.
func (gb *gumbel) halve(t *search.Tree) {
	gb.transform(t)
	gb.sortActs()
	if k := len(gb.acts); k > 2 {
		gb.acts = gb.acts[:max(2, k/2)]
	}
	gb.openPhase()
}

// score is g(a) + logits(a) + sigma(q^(a)) (after transform).
func (gb *gumbel) score(a games.Action) float64 {
	return gb.g[a] + gb.logits[a] + gb.sigma[a]
}

// sortActs orders the remaining actions by decreasing score, ties by
// action id.
func (gb *gumbel) sortActs() {
	slices.SortStableFunc(gb.acts, func(a, b games.Action) int {
		if c := cmp.Compare(gb.score(b), gb.score(a)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
}

// transform reads the root statistics of t into visits and computes
// sigma(q^) for every legal action: the completed Q (v_mix for unvisited
// actions), rescaled to [0, 1] over the legal actions, times
// (c_visit + max visits) * c_scale.
func (gb *gumbel) transform(t *search.Tree) {
	gb.stats = t.RootStats(gb.mover, gb.stats[:0])
	for _, a := range gb.legal {
		gb.visits[a] = 0
		gb.sigma[a] = 0
	}
	q := gb.sigma // holds q(a), then q^(a), then sigma
	var total, maxN int
	var piSum, piQ float64
	for _, s := range gb.stats {
		a := s.Action
		gb.visits[a], q[a] = s.Visits, s.Q
		if s.Visits > 0 {
			total += s.Visits
			maxN = max(maxN, s.Visits)
			piSum += gb.prior[a]
			piQ += gb.prior[a] * s.Q
		}
	}
	vmix := gb.value
	if total > 0 && piSum > 0 {
		vmix = (gb.value + float64(total)*piQ/piSum) / float64(1+total)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, a := range gb.legal {
		if gb.visits[a] == 0 {
			q[a] = vmix
		}
		lo, hi = min(lo, q[a]), max(hi, q[a])
	}
	scale := (gb.cVisit + float64(maxN)) * gb.cScale / max(hi-lo, gumbelRangeFloor)
	for _, a := range gb.legal {
		gb.sigma[a] = (q[a] - lo) * scale
	}
}

// action returns the move of the finished search: the remaining action
// with the largest score among those with the most visits.
func (gb *gumbel) action(t *search.Tree) games.Action {
	gb.transform(t)
	gb.sortActs()
	most := 0
	for _, a := range gb.acts {
		most = max(most, gb.visits[a])
	}
	for _, a := range gb.acts {
		if gb.visits[a] == most {
			return a
		}
	}
	return games.NoAction // unreachable: acts is not empty
}

// improved writes softmax(logits + sigma(q^)) over the legal actions into
// dst (by action id; zero elsewhere).
func (gb *gumbel) improved(t *search.Tree, dst []float32) {
	gb.transform(t)
	clear(dst)
	top := math.Inf(-1)
	for _, a := range gb.legal {
		top = max(top, gb.logits[a]+gb.sigma[a])
	}
	var sum float64
	for _, a := range gb.legal {
		sum += math.Exp(gb.logits[a] + gb.sigma[a] - top)
	}
	for _, a := range gb.legal {
		dst[a] = float32(math.Exp(gb.logits[a]+gb.sigma[a]-top) / sum)
	}
}

// GumbelAction returns the move chosen by the Gumbel root search of j's
// last search; false when Gumbel search is off or the root had no player
// to move (then choose from the visits as usual). Call it between the
// done callback and the next Start.
func (j *Job) GumbelAction() (games.Action, bool) {
	if j.gumbel == nil || !j.gumbel.active {
		return games.NoAction, false
	}
	return j.gumbel.action(j.tree), true
}

// ImprovedPolicy writes the improved policy of j's last Gumbel search,
// softmax(logits + sigma(completed Q)) over the root's legal actions, into
// dst (indexed by action id, zero on illegal actions; len(dst) must be the
// game's NumActions). It reports false, leaving dst alone, when Gumbel
// search is off or the root had no player to move.
func (j *Job) ImprovedPolicy(dst []float32) bool {
	if j.gumbel == nil || !j.gumbel.active {
		return false
	}
	j.gumbel.improved(j.tree, dst)
	return true
}

// MergeGumbel combines the Gumbel searches of jobs (K determinizations of
// one move, each with its own noise and sequential halving): policy
// (len NumActions) receives the mean of their improved policies, and the
// move is the one most trees chose, ties broken by the larger merged
// policy, then the lower action id. It reports false, with policy
// untouched, unless every job ran an active Gumbel search.
func MergeGumbel(jobs []*Job, policy []float32) (games.Action, bool) {
	for _, j := range jobs {
		if j.gumbel == nil || !j.gumbel.active {
			return games.NoAction, false
		}
	}
	if len(jobs) == 1 {
		j := jobs[0]
		j.ImprovedPolicy(policy)
		a, _ := j.GumbelAction()
		return a, true
	}
	clear(policy)
	g0 := jobs[0].gumbel
	clear(g0.votes)
	for _, j := range jobs {
		j.gumbel.improved(j.tree, g0.scratch)
		for a, p := range g0.scratch {
			policy[a] += p / float32(len(jobs))
		}
		a := j.gumbel.action(j.tree)
		g0.votes[a]++
	}
	best := games.NoAction
	for a, v := range g0.votes {
		if v > 0 && (best == games.NoAction || v > g0.votes[best] || (v == g0.votes[best] && policy[a] > policy[best])) {
			best = games.Action(a)
		}
	}
	return best, true
}

// claim takes one simulation of j's budget for the step being selected;
// false when the budget is spent or, under Gumbel search, when the phase's
// simulations are all selected (the step ends so that the halving sees
// them backed up).
func (j *Job) claim() bool {
	if j.budget.Add(-1) < 0 {
		j.budget.Add(1)
		return false
	}
	if j.gumbel != nil && !j.gumbel.room(j) {
		j.budget.Add(1)
		return false
	}
	return true
}

// selectLeaf is pipeline step (1) for walker w of j: the tree's SelectLeaf,
// or under an active Gumbel search SelectLeafForced with the root action
// that sequential halving assigns to this simulation.
func (j *Job) selectLeaf(w *search.Walker) bool {
	if gb := j.gumbel; gb != nil && gb.active {
		return j.tree.SelectLeafForced(w, gb.next())
	}
	return j.tree.SelectLeaf(w)
}
