package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/spec"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/hex"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)

// The formula tests call the very functions the selection loops call
// (select.go: edgeMean, uctKey, uctScore, ucb1TunedScore, puctScore,
// puctTabScore, raveScore, the beta schedules, ProgressiveBias; simsel.go:
// Exp3Policy, RegretMatchingPolicy, MixUniform) and compare them with the
// textbook formulas, written out again below in plain float64 with
// math.Log and exact division. TestSelectionLoops then checks that each
// loop picks the textbook maximum with the documented tie-breaking.

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %.12f, want %.12f", name, got, want)
	}
}

// Textbook formulas. q is the mean value with virtual losses counted as
// losses; ln N and sqrt are computed exactly.
func bookMean(w int64, vl int32, done int32) float64 {
	return (float64(w)/valueScale - float64(vl)) / float64(done+vl)
}

func bookUCB1(q float64, n, parentN int, c float64) float64 {
	return q + c*math.Sqrt(math.Log(float64(parentN))/float64(n))
}

func bookUCB1Tuned(mean, meanSq float64, n, parentN int, c float64) float64 {
	x, x2 := (mean+1)/2, (meanSq+2*mean+1)/4 // E[x], E[x^2] for x = (v+1)/2
	lnN := math.Log(float64(parentN))
	v := x2 - x*x + math.Sqrt(2*lnN/float64(n))
	return 2*(x+c*math.Sqrt(lnN/float64(n)*math.Min(0.25, v))) - 1
}

func bookPUCT(q, prior float64, n, parentN int, c float64) float64 {
	return q + c*prior*math.Sqrt(float64(parentN))/(1+float64(n))
}

// tolerance of the hot loop's score against the textbook one: rounding
// below the tables; above them lnOf keeps 12 bits of N (ln N off by less
// than 5e-4), which moves c*sqrt(ln N / n) by less than c*2.5e-4/sqrt(n).
func tolerance(parentN, n int, c float64) float64 {
	if parentN < tabN {
		return 1e-12
	}
	return 1e-12 + c*2.5e-4/math.Sqrt(float64(max(n, 1)))
}

// Counts on both sides of the table boundary (tabN) and far beyond it, up
// to the largest count selectUCT's key supports (2*done+vl must fit an
// int32, see uctKey).
var boundaryCounts = []int{1, 2, 3, 7, 100, tabN - 2, tabN - 1, tabN, tabN + 1, 5000, 1 << 20, 1<<30 - 3}

func TestTables(t *testing.T) {
	for _, n := range boundaryCounts {
		ln := math.Log(float64(n))
		if d := math.Abs(lnOf(n) - ln); (n < tabN && d != 0) || d >= 5e-4 {
			t.Errorf("lnOf(%d) = %v, ln = %v", n, lnOf(n), ln)
		}
		if math.Abs(invOf(n)*float64(n)-1) > 1e-15 {
			t.Errorf("invOf(%d) = %v", n, invOf(n))
		}
		if math.Abs(invSqrtOf(n)*math.Sqrt(float64(n))-1) > 1e-15 {
			t.Errorf("invSqrtOf(%d) = %v", n, invSqrtOf(n))
		}
	}
	// orderKey orders like the floats, signs and infinities included.
	xs := []float64{math.Inf(-1), -1e300, -2, -1, -1e-300, 0, 1e-300, 0.5, 1, 2, 1e9, math.Inf(1)}
	for i := 1; i < len(xs); i++ {
		if orderKey(xs[i-1]) >= orderKey(xs[i]) {
			t.Errorf("orderKey(%v) >= orderKey(%v)", xs[i-1], xs[i])
		}
	}
	if orderKey(math.Copysign(0, -1)) > orderKey(0) {
		t.Errorf("orderKey(-0) > orderKey(0)")
	}
}

// Every score function on hand-computed values and, over a grid of counts
// across the table boundaries, against the textbook formula.
func TestFormulas(t *testing.T) {
	// UCB1 through uctKey and uctScore: 0.5 + 1.4*sqrt(ln 100 / 10) =
	// 0.5 + 1.4*0.6786140424415112. Ten visits of mean 0.5, no virtual loss.
	k := uctExplore(lnOf(100), 1.4)
	near(t, "uctScore", uctScore(0.5, 10, k), 0.5+1.4*0.6786140424415112)
	near(t, "uctKey", math.Float64frombits(uctKey(5*valueScale+20*valueScale, 10, k))-2, 0.5+1.4*0.6786140424415112)
	if uctKey(0, 0, k) != 0 {
		t.Errorf("uctKey of an unvisited edge = %#x, want 0", uctKey(0, 0, k))
	}
	// UCB1-Tuned: values {+1 x 3, -1 x 1}: mean 0.5, mean square 1.
	// x in [0,1]: E[x] = 0.75, E[x^2] = 0.75, var = 0.1875,
	// n = 4, N = 20: sqrt(2 ln 20 / 4) = sqrt(1.497866137) = 1.223873417,
	// V = 1.411373417 -> min(1/4, V) = 1/4; bound = sqrt(ln 20 / 4 * 1/4) =
	// sqrt(0.187233)=0.4327046; score in [0,1]: 1.1827046;
	// back to [-1, 1]: 2*1.1827046 - 1 = 1.3654092.
	if got := ucb1TunedScore(0.5, 1, invOf(4), lnOf(20), 1); math.Abs(got-1.3654092) > 1e-6 {
		t.Errorf("UCB1Tuned = %v, want 1.3654092 (hand)", got)
	}
	// A low-variance case where V < 1/4: all values 0 (x = 0.5, var 0), n = 1000, N = 2000:
	// V = sqrt(2 ln 2000 / 1000) = sqrt(0.015201804) = 0.123295596;
	// bound = sqrt(ln 2000/1000 * V) = sqrt(0.007600902*0.123295596) = 0.030612921...
	if got := ucb1TunedScore(0, 0, invOf(1000), lnOf(2000), 1); math.Abs(got-0.0612258) > 1e-6 {
		t.Errorf("UCB1Tuned low var = %v, want 0.0612258 (hand)", got)
	}
	// PUCT: 0.125 + 1.5*0.25*sqrt(16)/(1+3) = 0.125 + 1.5*0.25*4/4 = 0.5,
	// in both forms (mean 0.125 over 3 visits: w = 0.375).
	near(t, "puctScore", puctScore(0.125, 0.25, 3, 1.5, 4), 0.5)
	near(t, "puctTabScore", puctTabScore(0.375*valueScale, 0, 3, 0.25, 1.5*4, 0), 0.5)
	// An unvisited edge scores FPU + c*P*sqrt(N): -0.2 + 1.5*0.25*4 = 1.3.
	near(t, "puctTabScore FPU", puctTabScore(0, 0, 0, 0.25, 1.5*4, -0.2), 1.3)
	// RAVE sqrt schedule: k = 1000, n = 1000: sqrt(1000/4000) = 0.5.
	near(t, "beta sqrt", RaveBetaSqrt(1000, 1000), 0.5)
	near(t, "beta sqrt n=0", RaveBetaSqrt(0, 1000), 1)
	// Silver: n = 10, na = 30, b = 0.5: 30/(10+30+4*0.25*10*30) = 30/340.
	near(t, "beta silver", RaveBetaSilver(10, 30, 0.5), 30.0/340)
	// alpha-AMAF: k = 100, n = 25 -> 0.75; n >= k -> 0.
	near(t, "alpha", AlphaAMAFWeight(25, 100), 0.75)
	near(t, "alpha past k", AlphaAMAFWeight(150, 100), 0)
	// RAVE score: beta 0.5 between q 0.2 and qa 0.6, plus UCB1 at n = 10,
	// N = 100: 0.4 + 1.4*0.6786140424415112.
	near(t, "raveScore", raveScore(0.2, 0.6, 0.5, 10, k), 0.4+1.4*0.6786140424415112)
	// With no visit (AMAF only) the exploration term uses n = 1.
	near(t, "raveScore n=0", raveScore(0, 0.6, 1, 0, k), 0.6+1.4*math.Sqrt(math.Log(100)))
	// progressive bias: 2 * 0.6 / (1+4) = 0.24.
	near(t, "bias", ProgressiveBias(0.6, 4, 2), 0.24)

	// The grid: every (N, n) pair with n <= N, means of several signs,
	// virtual losses 0..2.
	const c = 1.3
	for _, parentN := range boundaryCounts {
		k := uctExplore(lnOf(parentN), c)
		lnN := lnOf(parentN)
		sqrtN := math.Sqrt(float64(parentN))
		for _, n := range boundaryCounts {
			if n > parentN {
				continue
			}
			for _, vl := range []int32{0, 1, 2} {
				done := int32(n) - vl
				if done < 0 {
					continue
				}
				for _, mean := range []float64{-1, -0.37, 0, 0.25, 1} {
					w := int64(math.Round(mean * float64(done) * valueScale))
					w2 := int64(math.Round(math.Abs(mean) * float64(done) * valueScale)) // E[v^2] >= E[v]^2
					name := fmt.Sprintf("N=%d n=%d vl=%d mean=%v", parentN, n, vl, mean)
					q, sq := bookMean(w, vl, done), (float64(w2)/valueScale+float64(vl))/float64(n)
					tol := tolerance(parentN, n, c)
					check := func(rule string, got, want float64) {
						t.Helper()
						if d := math.Abs(got - want); d > tol*max(1, math.Abs(want)) {
							t.Errorf("%s %s: %.15g, textbook %.15g (diff %.3g)", rule, name, got, want, d)
						}
					}
					check("edgeMean", edgeMean(w, vl, n), q)
					check("edgeMeanSq", edgeMeanSq(w2, vl, n), sq)
					check("uctScore", uctScore(edgeMean(w, vl, n), n, k), bookUCB1(q, n, parentN, c))
					num := w + int64(2*done+vl)*valueScale
					check("uctKey", math.Float64frombits(uctKey(num, uint32(n), k))-2, bookUCB1(q, n, parentN, c))
					check("ucb1TunedScore", ucb1TunedScore(edgeMean(w, vl, n), edgeMeanSq(w2, vl, n), invOf(n), lnN, c),
						bookUCB1Tuned(q, sq, n, parentN, c))
					const prior = 0.37
					check("puctScore", puctScore(edgeMean(w, vl, n), prior, n, c, sqrtN), bookPUCT(q, float64(float32(prior)), n, parentN, c))
					check("puctTabScore", puctTabScore(w, vl, uint32(n), prior, c*sqrtN, 0), bookPUCT(q, float64(float32(prior)), n, parentN, c))
					for _, an := range []int{0, 1, n, 3 * n} {
						qa := 0.0
						if an > 0 {
							amafW := int64(math.Round(-mean / 2 * float64(an) * valueScale))
							qa = float64(amafW) / valueScale / float64(an)
							check("amafMean", amafMean(amafW, an), qa)
						}
						for _, beta := range []float64{RaveBetaSqrt(n, 1000), RaveBetaSilver(n, an, 0.1), AlphaAMAFWeight(n, 1000), 0.3} {
							check("raveScore", raveScore(edgeMean(w, vl, n), qa, beta, n, k),
								(1-beta)*q+beta*qa+c*math.Sqrt(math.Log(float64(parentN))/float64(n)))
						}
					}
				}
			}
		}
		// PUCT's unvisited edge: FPU + c*P*sqrt(N).
		if got, want := puctTabScore(0, 0, 0, 0.5, c*sqrtN, -0.25), bookPUCT(-0.25, 0.5, 0, parentN, c); math.Abs(got-want) > 1e-12*max(1, want) {
			t.Errorf("puctTabScore FPU N=%d: %v, textbook %v", parentN, got, want)
		}
	}
}

// edgeSetup is one edge's statistics for TestSelectionLoops.
type edgeSetup struct {
	done, vl, an int32
	w, w2, amafW int64
	prior        float32
}

// bookSelect is the textbook choice among edges under o with parent count
// N: the first edge with the highest score, where an unvisited edge
// (no visit, and for the RAVE family no AMAF visit either) is taken at
// once without progressive bias and scores unvisitedScore plus the bias
// term with it. It returns the index and every edge's score.
func bookSelect(o *Options, parentN int, es []edgeSetup) (int, []float64) {
	scores := make([]float64, len(es))
	best := -1
	tuned := o.AmafExplore == AmafUCB1Tuned
	study001 := (o.RaveSchedule == RaveAdditive || o.RaveSchedule == RaveAdditiveClamped) && (o.Rule == RAVE || o.Rule == PoolRAVE)
	lnN := math.Log(float64(parentN))
	if o.PBForm == PBUCTLn1 {
		lnN = math.Log(float64(parentN) + 1) // study 003, eq. 5: ln(N(s)+1)
	}
	r01 := func(v float64) float64 { // rewards=01: [-1, 1] -> [0, 1]
		if o.Rewards01 {
			return (v + 1) / 2
		}
		return v
	}
	for i, e := range es {
		n := int(e.done + e.vl)
		unvisited := n == 0 && o.Rule != PUCT && (!o.Rule.usesAMAF() || e.an == 0 || tuned || study001)
		if unvisited && o.Bias == 0 {
			scores[i] = math.Inf(1)
			return i, scores
		}
		var q float64
		if n > 0 {
			q = bookMean(e.w, e.vl, e.done)
		}
		fn := float64(n)
		var s float64
		switch {
		case unvisited:
			s = unvisitedScore
		case o.Rule == UCT:
			s = r01(q) + o.C*math.Sqrt(lnN/fn)
		case o.Rule == UCB1Tuned:
			s = r01(bookUCB1Tuned(q, (float64(e.w2)/valueScale+float64(e.vl))/fn, n, parentN, o.C))
		case o.Rule == PUCT:
			if n == 0 {
				q = o.FPU
			}
			s = bookPUCT(r01(q), float64(e.prior), n, parentN, o.C)
		default:
			var qa, beta float64
			if e.an > 0 {
				qa = float64(e.amafW) / valueScale / float64(e.an)
			}
			na := float64(e.an)
			if study001 {
				// Study 001, section 4.1.4: x + alpha*x_RAVE + sqrt(2 ln n_s / n_j),
				// alpha = (beta - n_RAVE)/beta, win rates in [0, 1].
				x, xr := (q+1)/2, 0.0
				if e.an > 0 {
					xr = (qa + 1) / 2
				}
				alpha := (o.RaveK - na) / o.RaveK
				if o.RaveSchedule == RaveAdditiveClamped && alpha < 0 {
					alpha = 0
				}
				s = x + alpha*xr + o.C*math.Sqrt(2*lnN/fn)
				break
			}
			switch {
			case e.an == 0:
				beta = 0
			case n == 0:
				beta = 1
			case o.Rule == AlphaAMAF && o.RaveK > 0:
				beta = math.Max(0, (o.RaveK-fn)/o.RaveK)
			case o.Rule == AlphaAMAF:
				beta = o.Alpha
			case o.RaveSchedule == RaveSilver:
				beta = na / (fn + na + 4*o.RaveB*o.RaveB*fn*na)
			default:
				beta = math.Sqrt(o.RaveK / (3*fn + o.RaveK))
			}
			m := (1-beta)*q + beta*qa
			if tuned {
				// Study 003, eqs. 1-4: the blended mean plus UCB1-Tuned's
				// bound from the edge's own mean and variance, on [0, 1].
				x, x2 := (q+1)/2, ((float64(e.w2)/valueScale+float64(e.vl))/fn+2*q+1)/4
				v := x2 - x*x + math.Sqrt(2*lnN/fn)
				s = r01(2*((m+1)/2+o.C*math.Sqrt(lnN/fn*math.Min(0.25, v))) - 1)
				break
			}
			s = (1-beta)*r01(q) + beta*r01(qa) + o.C*math.Sqrt(lnN/math.Max(fn, 1))
		}
		if o.Bias != 0 {
			s += o.Bias * float64(e.prior) / (1 + float64(n))
		}
		scores[i] = s
		if best < 0 || s > scores[best] {
			best = i
		}
	}
	return best, scores
}

// selectionRules lists every rule configuration SelectLeaf distinguishes.
func selectionRules() []Options {
	var out []Options
	for _, bias := range []float64{0, 0.7} {
		add := func(r Rule, f func(*Options)) {
			o := DefaultOptions()
			o.Rule, o.Bias, o.Sims = r, bias, 1
			if bias != 0 {
				o.Heuristic = HeuristicFunc(func(games.State, int, games.Action) float64 { return 0 })
			}
			if f != nil {
				f(&o)
			}
			o.C = -1
			if err := o.normalize(); err != nil {
				panic(err)
			}
			out = append(out, o)
		}
		add(UCT, nil)
		add(UCB1Tuned, nil)
		add(PUCT, func(o *Options) { o.Eval = Uniform{} })
		add(PUCT, func(o *Options) { o.Eval, o.FPU = Uniform{}, -0.3 })
		add(RAVE, nil)
		add(RAVE, func(o *Options) { o.RaveSchedule = RaveSilver })
		add(PoolRAVE, nil)
		add(AlphaAMAF, func(o *Options) { o.RaveK = 40 })
		add(AlphaAMAF, func(o *Options) { o.RaveK, o.Alpha = 0, 0.35 })
		// The studies' variants (issue 21).
		add(UCT, func(o *Options) { o.Rewards01 = true })
		add(PUCT, func(o *Options) { o.Eval, o.FPU, o.Rewards01 = Uniform{}, -0.3, true })
		add(UCB1Tuned, func(o *Options) { o.Rewards01 = true })
		add(RAVE, func(o *Options) { o.Rewards01 = true })
		add(AlphaAMAF, func(o *Options) { o.RaveK, o.AmafExplore = 40, AmafUCB1Tuned })
		add(AlphaAMAF, func(o *Options) { o.RaveK, o.AmafExplore, o.Rewards01 = 1000, AmafUCB1Tuned, true })
		add(RAVE, func(o *Options) { o.AmafExplore = AmafUCB1Tuned })
		add(RAVE, func(o *Options) { o.RaveSchedule, o.RaveK = RaveAdditive, 20000 })
		add(PoolRAVE, func(o *Options) { o.RaveSchedule, o.RaveK = RaveAdditive, 20000 })
		add(RAVE, func(o *Options) { o.RaveSchedule, o.RaveK = RaveAdditiveClamped, 40 })
		add(PoolRAVE, func(o *Options) { o.RaveSchedule, o.RaveK = RaveAdditiveClamped, 40 })
		if bias != 0 {
			add(UCT, func(o *Options) { o.PBForm = PBUCTLn1 })
		}
	}
	return out
}

// TestSelectionLoops sets random statistics on the edges of a root
// (tic-tac-toe, 9 edges) and checks that the loop SelectLeaf runs for the
// rule (selectEdge, which dispatches to selectUCT and selectPUCT without
// bias; selectUCTPlain on unshared plain-UCT trees) picks the textbook
// maximum, and on exact ties the first edge. Parent counts cover the
// tables and beyond; a sub-range stands for one player's segment at a
// simultaneous node (decoupled selection under simsel=ucb).
func TestSelectionLoops(t *testing.T) {
	g := games.MustNew("tictactoe")
	rng := rand.New(rand.NewPCG(1, 2))
	for _, o := range selectionRules() {
		name := fmt.Sprintf("%v/bias=%g/fpu=%g/%s/k=%g/alpha=%g/%s/%s/r01=%v", o.Rule, o.Bias, o.FPU, o.RaveSchedule, o.RaveK, o.Alpha, o.AmafExplore, o.PBForm, o.Rewards01)
		tr, err := New(g, o, 1)
		if err != nil {
			t.Fatal(err)
		}
		tr.keepVirtualLosses() // the edge setups carry virtual losses
		tr.Prepare(g.NewInitialState())
		nd := &tr.a.nodes[tr.root]
		if nd.numEdges != 9 {
			t.Fatalf("%s: root has %d edges", name, nd.numEdges)
		}
		set := func(first int32, es []edgeSetup, parentN int) {
			nd.n = int32(parentN)
			for i, e := range es {
				h := &tr.a.hot[first+int32(i)]
				h.n, h.w, h.prior = e.done, e.w, e.prior
				tr.a.vl[first+int32(i)] = e.vl
				if len(tr.a.ext) > 0 { // UCT and PUCT trees keep no extensions
					x := &tr.a.ext[first+int32(i)]
					x.w2, x.amafN, x.amafW = e.w2, e.an, e.amafW
				}
			}
		}
		pick := func(first, cnt int32) []int32 {
			got := []int32{tr.selectEdge(nd, first, cnt) - first}
			if tr.plainUCT && first == nd.firstEdge && cnt == nd.numEdges {
				got = append(got, tr.selectUCTPlain(nd)-first)
			}
			return got
		}
		for trial := range 3000 {
			scale := []int{10, 3000, 1 << 20}[trial%3] // visits below, across, beyond the tables
			es := make([]edgeSetup, 9)
			total := 1
			for i := range es {
				e := &es[i]
				if rng.IntN(4) > 0 {
					e.done = int32(rng.IntN(scale))
				}
				if rng.IntN(5) == 0 {
					e.vl = int32(rng.IntN(3))
				}
				mean := 2*rng.Float64() - 1
				e.w = int64(mean * float64(e.done) * valueScale)
				e.w2 = int64((math.Abs(mean) + (1-math.Abs(mean))*rng.Float64()) * float64(e.done) * valueScale)
				if rng.IntN(4) > 0 {
					e.an = int32(rng.IntN(3 * scale))
					e.amafW = int64((2*rng.Float64() - 1) * float64(e.an) * valueScale)
				}
				e.prior = float32(rng.Float64())
				total += int(e.done + e.vl)
			}
			parentN := total + rng.IntN(3)
			first, cnt := nd.firstEdge, nd.numEdges
			if trial%4 == 3 { // a segment: the edges from the third on
				first, cnt = first+2, cnt-2
			}
			set(nd.firstEdge, es, parentN)
			seg := es[first-nd.firstEdge:]
			want, scores := bookSelect(&tr.opt, parentN, seg)
			for _, got := range pick(first, cnt) {
				if got == int32(want) {
					continue
				}
				// A near-tie within the tables' rounding is no error.
				tol := 1e-9 + tolerance(parentN, 1, tr.opt.C)
				if math.Abs(scores[got]-scores[want]) > tol*max(1, math.Abs(scores[want])) {
					t.Fatalf("%s N=%d: picked edge %d (textbook score %.12g), textbook best %d (%.12g); stats %+v",
						name, parentN, got, scores[got], want, scores[want], seg)
				}
			}
		}
		// Exact ties: all edges equal, then two equal best edges.
		for _, e := range []edgeSetup{
			{},
			{done: 5, w: 2 * valueScale, w2: 3 * valueScale, an: 7, amafW: 1 * valueScale, prior: 0.25},
			{done: 5000, vl: 1, w: 1234 * valueScale, w2: 3000 * valueScale, an: 9000, amafW: -10 * valueScale, prior: 0.5},
		} {
			es := make([]edgeSetup, 9)
			for i := range es {
				es[i] = e
			}
			parentN := 9*int(e.done+e.vl) + 1
			set(nd.firstEdge, es, parentN)
			for _, got := range pick(nd.firstEdge, 9) {
				if got != 0 {
					t.Errorf("%s: all edges tied (%+v), picked %d, want the first", name, e, got)
				}
			}
			if e.done == 0 {
				continue
			}
			worse := e
			worse.w -= valueScale / 2
			worse.amafW -= valueScale / 2
			worse.prior /= 2
			for i := range es {
				if i != 3 && i != 6 {
					es[i] = worse
				}
			}
			set(nd.firstEdge, es, parentN)
			for _, got := range pick(nd.firstEdge, 9) {
				if got != 3 {
					t.Errorf("%s: edges 3 and 6 tied best (%+v), picked %d, want 3", name, e, got)
				}
			}
		}
	}
}

// selectSim (simsel=exp3/rm) samples with the textbook mixture: the
// returned probability is (1-gamma)*rho + gamma/K for the textbook rho of
// the chosen edge, and rho is added to the cumulative strategy.
func TestSelectSimProbabilities(t *testing.T) {
	g := mpGame
	for _, sel := range []SimRule{SimExp3, SimRM} {
		o := DefaultOptions()
		o.SimSel, o.Sims, o.SimGamma = sel, 1, 0.2
		tr, err := New(g, o, 5)
		if err != nil {
			t.Fatal(err)
		}
		tr.Prepare(g.NewInitialState())
		nd := &tr.a.nodes[tr.root]
		first, cnt := simSegment(tr.a, nd, 0, 2)
		sums := []float64{3, -1}
		for i := range cnt {
			tr.a.ext[first+i].w2 = int64(sums[i] * valueScale)
			tr.a.ext[first+i].amafW = 0
		}
		var rho [2]float64
		if sel == SimExp3 {
			eta := 0.2 / 2
			z := math.Exp(eta*3) + math.Exp(eta*-1)
			rho = [2]float64{math.Exp(eta*3) / z, math.Exp(eta*-1) / z}
		} else {
			rho = [2]float64{1, 0} // positive parts 3 and 0
		}
		ei, prob := tr.selectSim(tr.walkers[0], first, cnt)
		i := ei - first
		if want := (1-0.2)*rho[i] + 0.2/2; math.Abs(float64(prob)-want) > 1e-6 {
			t.Errorf("%v: chose %d with probability %v, textbook %v", sel, i, prob, want)
		}
		for j := range cnt {
			if got := float64(tr.a.ext[first+j].amafW) / valueScale; math.Abs(got-rho[j]) > 1e-6 {
				t.Errorf("%v: cumulative strategy of %d = %v, want rho %v", sel, j, got, rho[j])
			}
		}
	}
}

// The rules table names every rule once: names and aliases parse back to
// their rule, no name is taken twice, and each rule's documented defaults
// are the ones a search with c=-1 and expand=-1 gets.
func TestRulesTable(t *testing.T) {
	seen := map[string]Rule{}
	for i, info := range rules {
		r := Rule(i)
		if info.name == "" {
			t.Fatalf("rule %d has no row in the rules table", i)
		}
		for _, n := range append([]string{info.name}, info.aliases...) {
			if prev, dup := seen[n]; dup {
				t.Errorf("name %q is taken by %v and %v", n, prev, r)
			}
			seen[n] = r
			if got, ok := ParseRule(n); !ok || got != r {
				t.Errorf("ParseRule(%q) = %v, %t; want %v", n, got, ok, r)
			}
		}
		if r.String() != info.name {
			t.Errorf("Rule(%d).String() = %q, want %q", i, r, info.name)
		}
		o := DefaultOptions()
		o.Rule = r
		if err := o.normalize(); err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		if o.C != info.c || o.ExpandVisits != info.expand {
			t.Errorf("%v: normalized c=%g expand=%d, the table says c=%g expand=%d", r, o.C, o.ExpandVisits, info.c, info.expand)
		}
	}
	if _, ok := ParseRule("nosuch"); ok {
		t.Error("ParseRule accepted an unknown name")
	}
	// The hand-written facts the table replaced (search/options.go before
	// the table): UCT 1.4, UCB1-Tuned 1, PUCT 1.5 and expanding at
	// evaluation, the RAVE family 0.3 and AMAF statistics.
	for r, want := range map[Rule]float64{UCT: 1.4, UCB1Tuned: 1, PUCT: 1.5, RAVE: 0.3, PoolRAVE: 0.3, AlphaAMAF: 0.3} {
		if r.defaultC() != want {
			t.Errorf("%v: default c %g, want %g", r, r.defaultC(), want)
		}
	}
	if !RAVE.usesAMAF() || !PoolRAVE.usesAMAF() || !AlphaAMAF.usesAMAF() || UCT.usesAMAF() || PUCT.usesAMAF() || !UCB1Tuned.keepsSquares() || UCT.keepsSquares() {
		t.Error("the rules' statistics differ from the RAVE family's AMAF and UCB1-Tuned's squares")
	}
}

// Variants are named by what they compute; the study-numbered names stay
// accepted as aliases (RESULTS' commands use them) and give the same
// options.
func TestVariantAliases(t *testing.T) {
	g := games.MustNew("hex:size=5") // a game with a heuristic, for pbform's bias
	for alias, name := range map[string]string{
		"ravesched=study001":      "ravesched=additive",
		"ravesched=study001clamp": "ravesched=additive-clamped",
		"pbform=study003":         "pbform=uct-ln1",
		"pbform=canopy":           "pbform=added",
	} {
		sel := "sel=rave,"
		if strings.HasPrefix(alias, "pbform") {
			sel = "sel=uct,"
		}
		parse := func(opt string) Options {
			sp, err := spec.Parse("mcts:" + sel + opt)
			if err != nil {
				t.Fatal(err)
			}
			o, err := ParseOptions(g, sp, agent.Env{})
			if err != nil {
				t.Fatalf("%s: %v", opt, err)
			}
			o.Eval = nil
			return o
		}
		a, b := parse(alias), parse(name)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s gives %+v, %s gives %+v", alias, a, name, b)
		}
	}
	for s, want := range map[string]RaveSchedule{"sqrt": RaveSqrt, "silver": RaveSilver, "study001": RaveAdditive, "additive-clamped": RaveAdditiveClamped} {
		if got, ok := ParseRaveSchedule(s); !ok || got != want {
			t.Errorf("ParseRaveSchedule(%q) = %v, %t", s, got, ok)
		}
	}
	if _, ok := ParsePBForm("study001"); ok {
		t.Error("ParsePBForm accepted a ravesched name")
	}
	if RaveAdditive.String() != "additive" || PBUCTLn1.String() != "uct-ln1" {
		t.Errorf("names: %v, %v", RaveAdditive, PBUCTLn1)
	}
}

// TestChoiceEnumsKeepSpellings: amafexplore, pool, final and simfinal are
// typed values parsed from the spellings agent specs have always taken,
// each spelling giving its own value, the default the zero value (so
// that an Options built by hand without them is the default), and
// ParseOptions storing what the spec names.
func TestChoiceEnumsKeepSpellings(t *testing.T) {
	g := games.MustNew("tictactoe")
	for _, c := range []struct {
		spec  string
		check func(Options) bool
	}{
		{"mcts:sel=rave,amafexplore=ucb1tuned", func(o Options) bool { return o.AmafExplore == AmafUCB1Tuned }},
		{"mcts:sel=rave,amafexplore=uct", func(o Options) bool { return o.AmafExplore == AmafUCT }},
		{"mcts:sel=poolrave,pool=tree", func(o Options) bool { return o.PoolAt == PoolInTree }},
		{"mcts:sel=poolrave,pool=rollout", func(o Options) bool { return o.PoolAt == PoolInRollout }},
		{"mcts:final=value", func(o Options) bool { return o.Final == FinalValue }},
		{"mcts:final=visits", func(o Options) bool { return o.Final == FinalVisits }},
		{"mcts:simsel=rm,simfinal=max", func(o Options) bool { return o.SimFinal == SimFinalMax }},
		{"mcts:simsel=rm,simfinal=sample", func(o Options) bool { return o.SimFinal == SimFinalSample }},
	} {
		sp, err := spec.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		o, err := ParseOptions(g, sp, agent.Env{})
		if err != nil || !c.check(o) {
			t.Errorf("%s: %+v, %v", c.spec, o, err)
		}
	}
	d := DefaultOptions()
	if d.AmafExplore != 0 || d.PoolAt != 0 || d.Final != 0 || d.SimFinal != 0 {
		t.Errorf("defaults are not the zero values: %v %v %v %v", d.AmafExplore, d.PoolAt, d.Final, d.SimFinal)
	}
	for _, s := range []string{"mcts:final=most", "mcts:pool=leaf", "mcts:simfinal=argmax", "mcts:amafexplore=ucb"} {
		sp, _ := spec.Parse(s)
		if _, err := ParseOptions(g, sp, agent.Env{}); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
	if FinalValue.String() != "value" || PoolInTree.String() != "tree" || SimFinalMax.String() != "max" || AmafUCB1Tuned.String() != "ucb1tuned" {
		t.Errorf("names: %v %v %v %v", FinalValue, PoolInTree, SimFinalMax, AmafUCB1Tuned)
	}
	o := DefaultOptions()
	o.Final = FinalValue + 1
	if _, err := New(g, o, 1); err == nil {
		t.Error("an unknown final accepted")
	}
}
