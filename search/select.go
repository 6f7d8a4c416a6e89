package search

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync/atomic"
)

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
	// PoolK moves with the best AMAF value at the last tree node; or,
	// under Options.PoolAt = PoolInTree, RAVE whose selection steps take a
	// pool edge with probability PoolP (study 001; see selectPool).
	PoolRAVE
	// AlphaAMAF uses (1-a)*Q + a*Q_amaf with a = max(0, (k-n)/k) (or the
	// constant Options.Alpha when AlphaK is 0), plus the UCT term.
	AlphaAMAF
)

// ruleInfo describes a selection rule. The rules table is the one place a
// rule's names, default constant, default expansion and the statistics it
// keeps are written: the `sel` choices, the `c` help, Rule.String,
// ParseRule, the defaults Options.normalize fills and the per-edge
// extension a tree allocates all derive from it. Adding a rule is a
// constant above, a row here and its score in edgeScore (and, for speed,
// a case in the selection loops).
type ruleInfo struct {
	name    string   // the sel= name
	aliases []string // other accepted names
	c       float64  // default exploration constant (c=-1)
	expand  int      // default ExpandVisits: 1 classic, 0 at evaluation with priors
	amaf    bool     // keeps AMAF statistics per edge (the RAVE family)
	squares bool     // keeps the squared-value sum per edge (variance bound)
}

// rules is indexed by Rule.
var rules = [...]ruleInfo{
	UCT:       {name: "uct", aliases: []string{"ucb1"}, c: 1.4, expand: 1},
	UCB1Tuned: {name: "ucb1tuned", c: 1, expand: 1, squares: true},
	PUCT:      {name: "puct", c: 1.5, expand: 0},
	RAVE:      {name: "rave", c: 0.3, expand: 1, amaf: true},
	PoolRAVE:  {name: "poolrave", c: 0.3, expand: 1, amaf: true},
	AlphaAMAF: {name: "alphaamaf", c: 0.3, expand: 1, amaf: true},
}

// ParseRule returns the rule named name (a sel= name or alias).
func ParseRule(name string) (Rule, bool) {
	for r, info := range rules {
		if info.name == name || slices.Contains(info.aliases, name) {
			return Rule(r), true
		}
	}
	return 0, false
}

// ruleChoices lists every accepted sel= name, aliases after their rule.
func ruleChoices() []string {
	var out []string
	for _, info := range rules {
		out = append(out, info.name)
		out = append(out, info.aliases...)
	}
	return out
}

// ruleDefaultsHelp describes each rule's default constant, for the c
// option's help: "uct 1.4, ucb1tuned 1, ...".
func ruleDefaultsHelp() string {
	parts := make([]string, len(rules))
	for i, info := range rules {
		parts[i] = fmt.Sprintf("%s %g", info.name, info.c)
	}
	return strings.Join(parts, ", ")
}

func (r Rule) String() string {
	if int(r) < len(rules) {
		return rules[r].name
	}
	return "unknown"
}

// usesAMAF reports whether the rule needs AMAF statistics.
func (r Rule) usesAMAF() bool { return int(r) < len(rules) && rules[r].amaf }

// keepsSquares reports whether the rule needs squared-value sums.
func (r Rule) keepsSquares() bool { return int(r) < len(rules) && rules[r].squares }

// Scores. Every per-edge score SelectLeaf computes is one of the functions
// below: the selection loops call them and select_test.go checks them
// against the textbook formulas computed independently in float64 (table
// boundaries and counts beyond the tables included), so there is no
// separate reference implementation. They are small enough to be inlined
// into the loops (only the RAVE family's choice of beta schedule stays in
// edgeScore; TestSelectionLoops covers it).
//
// Conventions: an edge has done completed visits with value sum w (fixed
// point, valueScale) for the player who chooses it and vl virtual losses
// (visits in flight, each counted as the value -1); n = done+vl. N >= 1 is
// the parent's visit count. Selection maximises the score; ties keep the
// first edge in arena order, which expansion shuffles uniformly
// (expand.go), so ties are broken uniformly at random.

// edgeMean returns an edge's mean value with virtual losses counted as
// losses, q = (w/valueScale - vl)/n, for n = done+vl >= 1.
func edgeMean(w int64, vl int32, n int) float64 {
	return (float64(w)/valueScale - float64(vl)) * invOf(n)
}

// edgeMeanSq returns an edge's mean squared value for UCB1-Tuned, a virtual
// loss counting as the squared value 1: (w2/valueScale + vl)/n, n >= 1.
func edgeMeanSq(w2 int64, vl int32, n int) float64 {
	return (float64(w2)/valueScale + float64(vl)) * invOf(n)
}

// amafMean returns an edge's AMAF mean amafW/valueScale/an, for an >= 1.
func amafMean(amafW int64, an int) float64 {
	return float64(amafW) / valueScale * invOf(an)
}

// uctExplore returns the per-node factor k = c*sqrt(ln N) of the UCT
// exploration term c*sqrt(ln N / n) = k/sqrt(n), from lnN = lnOf(N).
// (lnN comes first so that callers compute it before loading c, which
// keeps an explicit nil check out of the loops' prologues.)
func uctExplore(lnN, c float64) float64 {
	return c * math.Sqrt(lnN)
}

// uctScore returns the UCT (UCB1) score q + c*sqrt(ln N / n) as
// q + k/sqrt(n), k = uctExplore(lnOf(N), c), for n >= 1. It is
// selectEdge's form (with progressive bias); selectUCT ranks the same
// score by uctKey.
func uctScore(q float64, n int, k float64) float64 {
	return q + k*invSqrtOf(n)
}

// uctKey returns the selection key of an edge under UCT with exploration
// factor k = uctExplore(lnOf(N), c) >= 0, from n = done+vl and
// num = w + (2*done+vl)*valueScale (the callers form 2*done+vl in int32:
// counts stay below 2^30); it is 0 for an unvisited edge (n = 0, w = 0),
// which selection takes at once.
//
// The UCT score is q + k/sqrt(n) with q = (w/valueScale - vl)/n. It lies in
// [-1, 1+k], so score+2 is a positive float whose IEEE bits order like the
// scores, and the running maximum is kept on those bits with integer
// compares, which the compiler turns into conditional moves (no
// mispredicted branch per edge); ties keep the first edge. score+2 =
// num/(n*valueScale) + k/sqrt(n): num is an exact integer (below 2^53), so
// the mean costs one conversion and one multiplication by a table entry.
func uctKey(num int64, n uint32, k float64) uint64 {
	var invScaled, isq float64
	if n < tabN {
		r := &uctTab[n] // uctTab[0] is zero: key 0 for an unvisited edge
		invScaled, isq = r.invScaled, r.invSqrt
	} else {
		invScaled, isq = 1/(float64(n)*valueScale), 1/math.Sqrt(float64(n))
	}
	return math.Float64bits(float64(num)*invScaled + k*isq)
}

// ucb1TunedScore returns the UCB1-Tuned score (Auer et al. 2002) of an edge
// with mean q and mean square sq of values in [-1, 1] and n >= 1 visits,
// invN = invOf(n) = 1/n, under a parent with lnN = ln N. The bound is computed on x = (v+1)/2 in [0, 1],
// where a Bernoulli arm's variance is at most 1/4, and mapped back:
//
//	V = E[x^2] - E[x]^2 + sqrt(2 ln N / n)
//	score = 2*(E[x] + c*sqrt(ln N / n * min(1/4, V))) - 1
func ucb1TunedScore(q, sq, invN, lnN, c float64) float64 {
	return 2*((q+1)/2+c*tunedRadius(q, sq, invN, lnN)) - 1
}

// tunedRadius returns UCB1-Tuned's confidence radius on values mapped to
// [0, 1], sqrt(ln N / n * min(1/4, V)) with V = E[x^2] - E[x]^2 +
// sqrt(2 ln N / n), from an edge's mean q and mean square sq of values in
// [-1, 1] (x = (v+1)/2), invN = 1/n and lnN = ln N (study 003, eqs. 1-2;
// Auer et al. 2002).
func tunedRadius(q, sq, invN, lnN float64) float64 {
	x := (q + 1) / 2
	x2 := (sq + 2*q + 1) / 4
	v := x2 - x*x + math.Sqrt(2*lnN*invN)
	return math.Sqrt(lnN * invN * min(0.25, v))
}

// amafTunedScore is the RAVE family's score under amafexplore=ucb1tuned:
// the blended mean m = (1-beta)*q + beta*qa (study 003, eq. 3, with
// beta = alpha(n) of eq. 4 under sel=alphaamaf) plus UCB1-Tuned's
// exploration (eqs. 1-2) computed from the edge's own visits (mean q,
// mean square sq, n >= 1 visits, invN = 1/n), all on [0, 1] and mapped
// back to [-1, 1]: 2*((m+1)/2 + c*tunedRadius(q, sq, invN, lnN)) - 1.
// Study 003 describes the combination in words only (section IV.A: the
// variance enters the exploration term, the AMAF and UCB values are
// weighted "according to the RAVE method"); this is that reading.
func amafTunedScore(m, q, sq, invN, lnN, c float64) float64 {
	return 2*((m+1)/2+c*tunedRadius(q, sq, invN, lnN)) - 1
}

// raveStudy001Score is study 001's RAVE score (section 4.1.4):
//
//	x + alpha*x_RAVE + c*sqrt(2 ln N / n),  alpha = (beta - n_RAVE)/beta
//
// with x and x_RAVE the edge's mean and AMAF mean as win rates in [0, 1]
// (x = (v+1)/2 of Canopy's values in [-1, 1]; x_RAVE = 0 while an = 0),
// n >= 1 the edge's visits, n_RAVE = an its AMAF visits, beta the
// schedule constant (ravek; the study's 1000) and c the printed
// coefficient 1 by default. As printed, the AMAF term is added to x (not
// blended with it) and alpha is not clamped: it turns negative once
// n_RAVE exceeds beta, so that the search then prefers the moves whose
// AMAF win rate is lowest. With clamp (ravesched=study001clamp) alpha
// stops at 0, the reading of the study's words ("already visited nodes
// are more likely exploited until they have been visited beta times.
// After that exploration of new nodes takes precedence"). Unvisited edges
// (n = 0, an infinite exploration term) are tried first.
func raveStudy001Score(x, xr float64, an int, beta float64, clamp bool, n int, lnN, c float64) float64 {
	alpha := (beta - float64(an)) / beta
	if clamp {
		alpha = max(alpha, 0)
	}
	return x + alpha*xr + c*math.Sqrt(2*lnN*invOf(n))
}

// to01 maps a value v in [-1, 1] to the 0/1 reward scale, (v+1)/2
// (rewards=01).
func to01(v float64) float64 { return (v + 1) / 2 }

// puctScore returns AlphaZero's PUCT score q + c*P*sqrt(N)/(1+n) with
// sqrtN = sqrt(N) computed once per node; the caller passes q = FPU for an
// unvisited edge. It is selectEdge's form (with progressive bias).
func puctScore(q float64, prior float32, n int, c, sqrtN float64) float64 {
	return q + c*float64(prior)*sqrtN/(1+float64(n))
}

// puctTabScore is selectPUCT's form of the PUCT score: q + cs*P/(1+n) with
// cs = c*sqrt(N), q = (w/valueScale - vl)/n or fpu when n = 0, and 1/n and
// 1/(1+n) read from recipTab while n+1 is inside the table.
func puctTabScore(w int64, vl int32, n uint32, prior float32, cs, fpu float64) float64 {
	q, inv1 := fpu, 0.0 // inv1 = 1/(1+n)
	if n < tabN-1 {
		if n > 0 {
			q = (float64(w)*(1.0/valueScale) - float64(vl)) * recipTab[n].inv
		}
		inv1 = recipTab[n+1].inv
	} else {
		q = (float64(w)*(1.0/valueScale) - float64(vl)) / float64(n)
		inv1 = 1 / (1 + float64(n))
	}
	return q + cs*float64(prior)*inv1
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

// raveScore returns the RAVE family's score
// (1-beta)*q + beta*qa + c*sqrt(ln N / max(n, 1)): the UCT score of the
// blended mean, k = uctExplore(lnOf(N), c). q is 0 when n = 0, qa when an = 0.
// beta comes from RaveBetaSqrt, RaveBetaSilver, AlphaAMAFWeight or the
// constant Options.Alpha, chosen in edgeScore (the choice is too
// large for the inliner as a function of its own).
func raveScore(q, qa, beta float64, n int, k float64) float64 {
	return uctScore((1-beta)*q+beta*qa, max(n, 1), k)
}

// ProgressiveBias returns b*h/(1+n), the term added for heuristic h
// (Chaslot et al. 2008; study 003, eq. 5, with h the heuristic value
// scaled to [0, 1] at its node, see heuristicPriors).
func ProgressiveBias(h float64, n int, b float64) float64 {
	return b * h / (1 + float64(n))
}

// unvisitedScore ranks unvisited edges above visited ones when progressive
// bias is on, so that they are tried in decreasing heuristic order (the
// bias term is added to it).
const unvisitedScore = 1e9

// orderKey maps a float64 (not NaN) to an int64 with the same order, so
// that a running maximum can use integer conditional moves.
func orderKey(x float64) int64 {
	b := int64(math.Float64bits(x))
	return b ^ int64(uint64(b>>63)>>1)
}

// selectEdge returns the edge with the best score among cnt edges from
// first, by the tree's rule. Unvisited edges (counting virtual losses as
// visits) come first under UCT/UCB1-Tuned, and under the RAVE family when
// they have no AMAF data (with amafexplore=ucb1tuned or
// ravesched=study001: when they have no visit); edges are in random order,
// so the first one is a uniform choice, except with progressive bias,
// where unvisited edges are tried in decreasing order of the heuristic.
// Without progressive bias, rewards=01 or pbform=study003 (t.fastSel),
// UCT and PUCT take their table-driven loops (selectUCT, selectPUCT).
// The per-edge score of the general loop is edgeScore.
func (t *Tree) selectEdge(nd *node, first, cnt int32) int32 {
	parentN := max(int(atomic.LoadInt32(&nd.n)), 1)
	if t.fastSel {
		switch t.opt.Rule {
		case UCT:
			return t.selectUCT(parentN, first, cnt)
		case PUCT:
			return t.selectPUCT(parentN, first, cnt)
		}
	}
	pn := t.parentOf(parentN)
	hot, vls := t.a.hot[first:first+cnt], t.vlOf(first, cnt)
	var ext []edgeExt // nil for UCT and PUCT, whose scores do not read it
	if len(t.a.ext) > 0 {
		ext = t.a.ext[first : first+cnt]
	}
	best, bestScore := 0, math.Inf(-1)
	for i := range hot {
		var x *edgeExt
		if ext != nil {
			x = &ext[i]
		}
		score, now := t.edgeScore(x, &hot[i], atomic.LoadInt32(&vls[i]), &pn)
		if now {
			return first + int32(i)
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return first + int32(best)
}

// parentTerms holds the per-parent factors of the general selection
// scores: lnN = ln N (ln(N+1) under pbform=study003), k =
// uctExplore(lnN, c) and sqrtN = sqrt(N). selectEdge computes them once per
// node from the node's visits; SO-ISMCTS once per edge from its
// availability count (ismcts.go).
type parentTerms struct{ lnN, k, sqrtN float64 }

// parentOf returns the parent terms for N visits (N >= 1).
func (t *Tree) parentOf(parentN int) parentTerms {
	lnN := lnOf(parentN)
	if t.form.pbStudy003 {
		lnN = lnOf(parentN + 1)
	}
	return parentTerms{lnN: lnN, k: uctExplore(lnN, t.opt.C), sqrtN: math.Sqrt(float64(parentN))}
}

// scoreForm holds the options' string-valued choices that edgeScore
// needs, as flags set once by New (string compares per edge would cost
// more than the score).
type scoreForm struct {
	amafTuned    bool // amafexplore=ucb1tuned
	raveStudy001 bool // ravesched=additive or additive-clamped under sel=rave or poolrave
	raveClamp    bool // ravesched=additive-clamped: alpha >= 0
	raveSilver   bool // ravesched=silver
	pbStudy003   bool // pbform=uct-ln1
}

func formOf(o *Options) scoreForm {
	return scoreForm{
		amafTuned:    o.AmafExplore == AmafUCB1Tuned,
		raveStudy001: o.raveStudy001(),
		raveClamp:    o.RaveSchedule == RaveAdditiveClamped,
		raveSilver:   o.RaveSchedule == RaveSilver,
		pbStudy003:   o.PBForm == PBUCTLn1,
	}
}

// edgeScore returns the score of one edge under the tree's rule with
// parent terms pn, or now = true when the edge is to be taken at once (an
// unvisited edge without progressive bias; see selectEdge).
//
// With rewards=01 values are mapped to [0, 1] (to01) before the score is
// computed (the FPU included); UCB1-Tuned's score, computed on [0, 1]
// already, is mapped the same way, so that the bias term keeps its size
// relative to it. Under pbform=study003 the UCT term uses ln(N+1)
// (study 003, eq. 5; parentOf).
//
// x is the edge's extension: nil only for UCT and PUCT, which do not read
// it; vl its virtual losses.
func (t *Tree) edgeScore(x *edgeExt, h *edgeStats, vl int32, pn *parentTerms) (score float64, now bool) {
	o := &t.opt
	rule, bias, r01 := o.Rule, o.Bias, o.Rewards01
	n := int(atomic.LoadInt32(&h.n)) + int(vl)
	var q float64
	if n > 0 {
		q = edgeMean(atomic.LoadInt64(&h.w), vl, n)
	}
	switch rule {
	case PUCT:
		if n == 0 {
			q = o.FPU
		}
		if r01 {
			q = to01(q)
		}
		score = puctScore(q, h.prior, n, o.C, pn.sqrtN)
	case UCT:
		if n == 0 {
			if bias == 0 {
				return 0, true
			}
			score = unvisitedScore
			break
		}
		if r01 {
			q = to01(q)
		}
		score = uctScore(q, n, pn.k)
	case UCB1Tuned:
		if n == 0 {
			if bias == 0 {
				return 0, true
			}
			score = unvisitedScore
			break
		}
		score = ucb1TunedScore(q, edgeMeanSq(atomic.LoadInt64(&x.w2), vl, n), invOf(n), pn.lnN, o.C)
		if r01 {
			score = to01(score)
		}
	default: // RAVE family
		tuned, study001 := t.form.amafTuned, t.form.raveStudy001
		an := int(atomic.LoadInt32(&x.amafN))
		if n == 0 && (an == 0 || tuned || study001) {
			if bias == 0 {
				return 0, true
			}
			score = unvisitedScore
			break
		}
		var qa float64
		if an > 0 {
			qa = amafMean(atomic.LoadInt64(&x.amafW), an)
		}
		if study001 {
			var xr float64
			if an > 0 {
				xr = to01(qa)
			}
			score = raveStudy001Score(to01(q), xr, an, o.RaveK, t.form.raveClamp, n, pn.lnN, o.C)
			break
		}
		var beta float64
		switch {
		case an == 0:
			beta = 0
		case n == 0:
			beta = 1
		case rule == AlphaAMAF && o.RaveK > 0:
			beta = AlphaAMAFWeight(n, o.RaveK)
		case rule == AlphaAMAF:
			beta = o.Alpha
		case t.form.raveSilver:
			beta = RaveBetaSilver(n, an, o.RaveB)
		default:
			beta = RaveBetaSqrt(n, o.RaveK)
		}
		if tuned {
			m := (1-beta)*q + beta*qa
			score = amafTunedScore(m, q, edgeMeanSq(atomic.LoadInt64(&x.w2), vl, n), invOf(n), pn.lnN, o.C)
			if r01 {
				score = to01(score)
			}
			break
		}
		if r01 {
			q, qa = to01(q), to01(qa)
		}
		score = raveScore(q, qa, beta, n, pn.k)
	}
	if bias != 0 {
		score += ProgressiveBias(float64(h.prior), n, bias)
	}
	return score, false
}

// selectUCT is selectEdge's UCT loop without progressive bias: k =
// c*sqrt(ln N) is computed once per node and the per-edge factors come from
// one table (one cache line per edge); see uctKey for the score.
func (t *Tree) selectUCT(parentN int, first, cnt int32) int32 {
	k := uctExplore(lnOf(parentN), t.opt.C)
	best, bestKey := 0, uint64(0)
	hot, vls := t.a.hot[first:first+cnt], t.vlOf(first, cnt)
	vls = vls[:len(hot)]
	for i := range hot {
		e := &hot[i]
		vl, done := atomic.LoadInt32(&vls[i]), atomic.LoadInt32(&e.n)
		key := uctKey(atomic.LoadInt64(&e.w)+int64(2*done+vl)*valueScale, uint32(done+vl), k)
		if key == 0 {
			return first + int32(i)
		}
		if key > bestKey {
			best, bestKey = i, key
		}
	}
	return first + int32(best)
}

// selectUCTPlain is selectUCT at decision node nd of an unshared tree:
// the same choice with plain loads (the caller checks plainUCT and
// !shared).
func (t *Tree) selectUCTPlain(nd *node) int32 {
	first := nd.firstEdge
	k := uctExplore(lnOf(max(int(nd.n), 1)), t.opt.C)
	best, bestKey := 0, uint64(0)
	hot, vls := t.a.hot[first:first+nd.numEdges], t.vlOf(first, nd.numEdges)
	vls = vls[:len(hot)]
	for i := range hot {
		e := &hot[i]
		vl, done := vls[i], e.n
		key := uctKey(e.w+int64(2*done+vl)*valueScale, uint32(done+vl), k)
		if key == 0 {
			return first + int32(i)
		}
		if key > bestKey {
			best, bestKey = i, key
		}
	}
	return first + int32(best)
}

// selectPUCT is selectEdge's PUCT loop without progressive bias: cs =
// c*sqrt(N) is computed once per node, the score is puctTabScore, and the
// running maximum is kept branch-free on orderKey. Ties keep the first edge.
func (t *Tree) selectPUCT(parentN int, first, cnt int32) int32 {
	cs := t.opt.C * math.Sqrt(float64(parentN))
	fpu := t.opt.FPU
	hot, vls := t.a.hot[first:first+cnt], t.vlOf(first, cnt)
	vls = vls[:len(hot)]
	best, bestKey := 0, int64(math.MinInt64)
	for i := range hot {
		h := &hot[i]
		vl := atomic.LoadInt32(&vls[i])
		n := uint32(atomic.LoadInt32(&h.n) + vl)
		key := orderKey(puctTabScore(atomic.LoadInt64(&h.w), vl, n, h.prior, cs, fpu))
		if key > bestKey {
			best, bestKey = i, key
		}
	}
	return first + int32(best)
}

// Tables of ln n, 1/n and 1/sqrt(n) for small n (32 KiB, 64 KiB, and
// 64 KiB for uctTab).
const tabN = 4096

var lnTab [tabN]float64

// recipTab[n] holds 1/n and 1/sqrt(n) side by side, so that the UCT loop
// reads one cache line per edge.
var recipTab [tabN]struct{ inv, invSqrt float64 }

// uctTab[n] holds 1/(n*valueScale) and 1/sqrt(n) for uctKey; uctTab[0] is zero.
var uctTab [tabN]struct{ invScaled, invSqrt float64 }

func init() {
	for n := 1; n < tabN; n++ {
		lnTab[n] = math.Log(float64(n))
		recipTab[n].inv = 1 / float64(n)
		recipTab[n].invSqrt = 1 / math.Sqrt(float64(n))
		uctTab[n].invScaled = 1 / float64(n) / valueScale
		uctTab[n].invSqrt = recipTab[n].invSqrt
	}
}

// lnOf returns ln n; above the table it keeps n's top 12 bits (absolute
// error < 5e-4, ample for an exploration term) to avoid math.Log.
func lnOf(n int) float64 {
	if n < tabN {
		return lnTab[n]
	}
	e := bits.Len(uint(n)) - 12
	return lnTab[n>>e] + float64(e)*math.Ln2
}

func invOf(n int) float64 {
	if uint(n) < tabN {
		return recipTab[n].inv
	}
	return 1 / float64(n)
}

func invSqrtOf(n int) float64 {
	if uint(n) < tabN {
		return recipTab[n].invSqrt
	}
	return 1 / math.Sqrt(float64(n))
}
