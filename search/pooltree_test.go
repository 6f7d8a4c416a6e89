package search

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// PoolRAVE's pool in tree selection (pool=tree), as study 001 describes
// it (section 4.1.4): "At the beginning of the selection step with a fixed
// probability p, one of the k best moves according to the RAVE value is
// chosen for further exploitation instead of using the normal tree
// policy." The root below has a tree-policy favourite (edge 8: the best
// mean, the worst AMAF mean) outside the AMAF top k, so the share of
// selections that go to it and to the pool measures p, and the pool's
// members and their frequencies are checked against a sort of the AMAF
// means done here.

// poolRoot builds a tic-tac-toe PoolRAVE tree (k = 3, p, pool=at) whose
// root edges carry fixed statistics: edge i has 100 visits with mean
// q[i] and AMAF mean qa[i] over 200 AMAF visits, except edge 7, which has
// no AMAF visit. It returns the tree, the setups and the textbook tree
// policy's choice (bookSelect).
func poolRoot(t *testing.T, p float64, at string) (*Tree, []edgeSetup, int) {
	t.Helper()
	g := games.MustNew("tictactoe")
	o := DefaultOptions()
	o.Rule, o.PoolK, o.PoolP = PoolRAVE, 3, p
	o.PoolAt, _ = ParsePoolAt(at)
	o.RaveK = 1 // beta = sqrt(1/(3n+1)), about 0.06: the mean decides the tree policy
	o.Sims = 20000
	tr, err := New(g, o, 7)
	if err != nil {
		t.Fatal(err)
	}
	tr.Prepare(g.NewInitialState())
	q := []float64{-0.2, 0.1, -0.4, 0.3, 0.0, -0.1, 0.2, 0.25, 0.9}
	qa := []float64{0.5, -0.3, 0.7, 0.1, 0.6, -0.2, 0.05, 0, -0.9}
	es := make([]edgeSetup, 9)
	nd := &tr.a.nodes[tr.root]
	nd.n = 901
	for i := range es {
		e := &es[i]
		e.done, e.w = 100, int64(q[i]*100*valueScale)
		if i != 7 {
			e.an, e.amafW = 200, int64(qa[i]*200*valueScale)
		}
		h, ed := &tr.a.hot[nd.firstEdge+int32(i)], &tr.a.ext[nd.firstEdge+int32(i)]
		h.n, h.w = e.done, e.w
		ed.amafN, ed.amafW = e.an, e.amafW
	}
	want, _ := bookSelect(&tr.opt, int(nd.n), es)
	if want != 8 {
		t.Fatalf("setup: the tree policy picks edge %d, want 8", want)
	}
	return tr, es, want
}

// topByAMAF returns the k edges with the highest AMAF mean among those
// with AMAF visits (and, when ok is not nil, ok(i)).
func topByAMAF(es []edgeSetup, k int, ok func(int) bool) []int {
	var idx []int
	for i, e := range es {
		if e.an > 0 && (ok == nil || ok(i)) {
			idx = append(idx, i)
		}
	}
	mean := func(i int) float64 { return float64(es[i].amafW) / float64(es[i].an) }
	sort.SliceStable(idx, func(a, b int) bool { return mean(idx[a]) > mean(idx[b]) })
	return idx[:min(k, len(idx))]
}

// poolPicks runs n descents from the root and counts the root edge taken
// by each (virtual losses removed after each descent, so every descent
// sees the same statistics).
func poolPicks(tr *Tree, n int) []int {
	w := tr.NewWalker(99)
	counts := make([]int, tr.a.nodes[tr.root].numEdges)
	for range n {
		tr.SelectLeaf(w)
		counts[w.path[0].edge-tr.a.nodes[tr.root].firstEdge]++
		for _, st := range w.path {
			tr.addVloss(st.edge, -1)
		}
	}
	return counts
}

func TestPoolTreeSelection(t *testing.T) {
	const n = 6000
	sd := func(p float64) float64 { return math.Sqrt(n * p * (1 - p)) } // binomial standard deviation
	for _, c := range []struct {
		p  float64
		at string
	}{{1, "tree"}, {0.5, "tree"}, {0.2, "tree"}, {0, "tree"}, {1, "rollout"}} {
		tr, es, policy := poolRoot(t, c.p, c.at)
		pool := topByAMAF(es, 3, nil)
		// Independently: edges 4, 2 and 0 (AMAF means 0.6, 0.7, 0.5), not
		// edge 7 (no AMAF data) nor the tree policy's edge 8.
		if want := []int{2, 4, 0}; len(pool) != 3 || pool[0] != want[0] || pool[1] != want[1] || pool[2] != want[2] {
			t.Fatalf("setup: AMAF top 3 %v, want %v", pool, want)
		}
		counts := poolPicks(tr, n)
		p := c.p
		if c.at == "rollout" {
			p = 0 // the pool acts in the rollouts only: selection is the tree policy's
		}
		inPool := 0
		for i, k := range counts {
			member := i == pool[0] || i == pool[1] || i == pool[2]
			switch {
			case member:
				inPool += k
				// Each pool member: p/3 of the selections.
				if want := n * p / 3; math.Abs(float64(k)-want) > 5*sd(p/3)+1e-9 {
					t.Errorf("p=%g %s: pool edge %d taken %d times, want about %.0f (uniform over the pool)", c.p, c.at, i, k, want)
				}
			case i == policy:
				if want := n * (1 - p); math.Abs(float64(k)-want) > 5*sd(p)+1e-9 {
					t.Errorf("p=%g %s: tree policy's edge %d taken %d times, want about %.0f (1-p of the selections)", c.p, c.at, i, k, want)
				}
			case k != 0:
				t.Errorf("p=%g %s: edge %d taken %d times; it is neither in the pool %v nor the tree policy's choice %d", c.p, c.at, i, k, pool, policy)
			}
		}
		if c.p == 1 && c.at == "tree" && inPool != n {
			t.Errorf("p=1: %d of %d selections in the pool", inPool, n)
		}
	}
}

// With no AMAF data at a node the pool is empty and the tree policy
// chooses even with p = 1; with a legal mask (SO-ISMCTS) the pool is the
// best AMAF edges among the legal ones.
func TestPoolTreeEmptyAndLegal(t *testing.T) {
	tr, es, policy := poolRoot(t, 1, "tree")
	nd := &tr.a.nodes[tr.root]
	w := tr.NewWalker(3)
	legal := games.NewMask(tr.game.NumActions())
	for i := range es {
		if i != 2 { // the best AMAF edge is illegal in this determinization
			legal.Set(tr.a.edges[nd.firstEdge+int32(i)].action)
		}
	}
	want := topByAMAF(es, 3, func(i int) bool { return i != 2 })
	seen := map[int]int{}
	for range 3000 {
		ei := int(tr.selectPool(w, nd.firstEdge, nd.numEdges, legal) - nd.firstEdge)
		seen[ei]++
	}
	if len(seen) != 3 {
		t.Errorf("legal pool: picks %v, want the three edges %v", seen, want)
	}
	for _, i := range want {
		if seen[i] < 800 { // 1000 expected
			t.Errorf("legal pool: edge %d picked %d of 3000 times, want about 1000 (picks %v)", i, seen[i], seen)
		}
	}
	for i := range es {
		ed := &tr.a.ext[nd.firstEdge+int32(i)]
		ed.amafN, ed.amafW = 0, 0
	}
	if got := tr.selectPool(w, nd.firstEdge, nd.numEdges, nil); got != NilEdge {
		t.Errorf("no AMAF data: selectPool returned edge %d, want NilEdge", got-nd.firstEdge)
	}
	for i, k := range poolPicks(tr, 50) {
		if k != 0 && i != policy {
			t.Errorf("no AMAF data, p=1: edge %d taken %d times, want the tree policy's %d only", i, k, policy)
		}
	}
}

// pool=tree changes a whole search (and plays legal moves); pool=rollout
// is the default and leaves the search as it was.
func TestPoolTreeSearch(t *testing.T) {
	g := games.MustNew("connect4")
	ctx := context.Background()
	stats := func(sp string) []ActionStat {
		a, err := newMCTS(t, g, sp, 5)
		if err != nil {
			t.Fatal(err)
		}
		st, err := a.Stats(ctx, g.NewInitialState(), 0)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	same := func(a, b []ActionStat) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i].Action != b[i].Action || a[i].Visits != b[i].Visits {
				return false
			}
		}
		return true
	}
	def, roll, tree := stats("mcts:sel=poolrave,sims=3000"), stats("mcts:sel=poolrave,pool=rollout,sims=3000"), stats("mcts:sel=poolrave,pool=tree,sims=3000")
	if !same(def, roll) {
		t.Errorf("pool=rollout differs from the default: %v vs %v", roll, def)
	}
	if same(def, tree) {
		t.Errorf("pool=tree gives the same root statistics as pool=rollout: %v", tree)
	}
	total := 0
	for _, x := range tree {
		total += x.Visits
	}
	if total != 3000 {
		t.Errorf("pool=tree: root visits %d, want 3000", total)
	}
}
