package search

import (
	"context"
	"fmt"
	"github.com/canopy-go/canopy/agent"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

// SO-ISMCTS scores every rule with availability counts: at a node, each
// edge legal in the determinization has its count raised by one, and its
// score is the rule's with the parent's visit count N replaced by that
// count (Cowling et al. 2012). The textbook choice below is bookSelect's
// score of each legal edge alone with N = its availability count; illegal
// edges are never taken.
func TestISMCTSSelectionRules(t *testing.T) {
	g := games.MustNew("tictactoe")
	rng := rand.New(rand.NewPCG(3, 4))
	// The determinization: two cells taken, so 7 of the root's 9 actions
	// are legal (the same player is to move as at the root).
	s := g.NewInitialState()
	m := games.NewMask(g.NumActions())
	s.Legal(m)
	s.Apply(games.Action(4))
	s.Apply(games.Action(0))
	s.Legal(m)
	for _, o := range selectionRules() {
		name := fmt.Sprintf("%v/bias=%g/fpu=%g/%s/k=%g/alpha=%g/%s/%s/r01=%v", o.Rule, o.Bias, o.FPU, o.RaveSchedule, o.RaveK, o.Alpha, o.AmafExplore, o.PBForm, o.Rewards01)
		o.ISMCTS = true // availability counts: the tree keeps edge extensions
		tr, err := New(g, o, 1)
		if err != nil {
			t.Fatal(err)
		}
		tr.ismcts = true
		tr.Prepare(g.NewInitialState())
		w := tr.NewWalker(1)
		nd := &tr.a.nodes[tr.root]
		for trial := range 1500 {
			scale := []int{10, 3000, 1 << 20}[trial%3]
			es := make([]edgeSetup, nd.numEdges)
			avail := make([]int32, nd.numEdges)
			for i := range es {
				e := &es[i]
				if rng.IntN(4) > 0 {
					e.done = int32(rng.IntN(scale))
				}
				mean := 2*rng.Float64() - 1
				e.w = int64(mean * float64(e.done) * valueScale)
				e.w2 = int64((math.Abs(mean) + (1-math.Abs(mean))*rng.Float64()) * float64(e.done) * valueScale)
				if rng.IntN(4) > 0 {
					e.an = int32(rng.IntN(3 * scale))
					e.amafW = int64((2*rng.Float64() - 1) * float64(e.an) * valueScale)
				}
				e.prior = float32(rng.Float64())
				avail[i] = e.done + int32(rng.IntN(scale+1))
				h, ed := &tr.a.hot[nd.firstEdge+int32(i)], &tr.a.ext[nd.firstEdge+int32(i)]
				h.n, h.w, h.prior = e.done, e.w, e.prior
				ed.w2, ed.amafN, ed.amafW, ed.avail = e.w2, e.an, e.amafW, avail[i]
			}
			got := tr.ismctsStep(w, tr.root, s) - nd.firstEdge
			want, wantScore, scores := -1, math.Inf(-1), make([]float64, len(es))
			for i := range es {
				a := tr.a.edges[nd.firstEdge+int32(i)].action
				ed := &tr.a.ext[nd.firstEdge+int32(i)]
				if !m.Has(a) {
					if ed.avail != avail[i] {
						t.Fatalf("%s: illegal edge %d: availability %d, want %d (unchanged)", name, i, ed.avail, avail[i])
					}
					scores[i] = math.NaN()
					continue
				}
				if ed.avail != avail[i]+1 {
					t.Fatalf("%s: legal edge %d: availability %d, want %d", name, i, ed.avail, avail[i]+1)
				}
				_, sc := bookSelect(&tr.opt, int(avail[i]+1), es[i:i+1])
				scores[i] = sc[0]
				if want < 0 || sc[0] > wantScore {
					want, wantScore = i, sc[0]
				}
			}
			if !m.Has(tr.a.edges[nd.firstEdge+got].action) {
				t.Fatalf("%s: picked edge %d, illegal in the determinization", name, got)
			}
			if int(got) != want {
				tol := 1e-9 + tolerance(int(avail[got]+1), 1, tr.opt.C)
				if math.IsInf(wantScore, 1) || math.Abs(scores[got]-wantScore) > tol*max(1, math.Abs(wantScore)) {
					t.Fatalf("%s: picked edge %d (textbook score %.12g), textbook best %d (%.12g); stats %+v avail %v",
						name, got, scores[got], want, wantScore, es, avail)
				}
			}
		}
	}
}

// Every rule runs under ismcts=true on a hidden-information game: one
// determinization per simulation, visits summing to the budget, legal
// moves; UCB1-Tuned's squared sums are kept apart from the availability
// counts (a squared value is at most 1, so w2 <= n, while the counts
// reach at least the visits).
func TestISMCTSAllRules(t *testing.T) {
	g := games.MustNew("sequence")
	ctx := context.Background()
	for _, extra := range []string{"sel=uct", "sel=puct", "sel=ucb1tuned", "sel=rave", "sel=poolrave", "sel=poolrave,pool=tree",
		"sel=alphaamaf,amafexplore=ucb1tuned", "sel=rave,ravesched=study001", "bias=0.5", "pbform=study003", "sel=uct,rewards=01"} {
		sp, err := spec.Parse("mcts:ismcts=true,sims=300,depth=16," + extra)
		if err != nil {
			t.Fatal(err)
		}
		o, err := ParseOptions(g, sp, agent.Env{})
		if err != nil {
			t.Fatalf("%s: %v", extra, err)
		}
		a := newAgent(t, g, o, 2)
		s := seqPosition(t, g, 5)
		cs := &countingState{State: s}
		st, err := a.Stats(ctx, cs, s.CurrentPlayer())
		if err != nil {
			t.Fatalf("%s: %v", extra, err)
		}
		if cs.calls != 300 {
			t.Errorf("%s: %d determinizations, want one per simulation (300)", extra, cs.calls)
		}
		m := games.NewMask(g.NumActions())
		s.Legal(m)
		total := 0
		for _, x := range st {
			total += x.Visits
			if !m.Has(x.Action) {
				t.Errorf("%s: root action %s is not legal", extra, s.ActionString(x.Action))
			}
		}
		if total != 300 {
			t.Errorf("%s: root visits %d, want 300", extra, total)
		}
		tr := a.Tree()
		nd := &tr.a.nodes[tr.root]
		for i := nd.firstEdge; i < nd.firstEdge+nd.numEdges; i++ {
			e, x, h := &tr.a.edges[i], &tr.a.ext[i], &tr.a.hot[i]
			if x.avail < h.n {
				t.Errorf("%s: root edge %s: availability %d below its visits %d", extra, s.ActionString(e.action), x.avail, h.n)
			}
			if tr.squares && (x.w2 < 0 || float64(x.w2)/valueScale > float64(h.n)+1e-6) {
				t.Errorf("%s: root edge %s: squared sum %g for %d visits (must lie in [0, n])", extra, s.ActionString(e.action), float64(x.w2)/valueScale, h.n)
			}
		}
	}
}
