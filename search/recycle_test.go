package search

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// A Reset tree searches exactly as a new tree with the same seed: same
// root statistics and same sampled move, whatever it searched before.
// UCT draws from the walkers' streams (rollouts), PUCT with root noise and
// a temperature from the tree's own; Reset is called twice so that the
// second call takes the reseeding path.
func TestResetIsNew(t *testing.T) {
	g := games.MustNew("connect4")
	uct := DefaultOptions()
	uct.Sims = 400
	puct := DefaultOptions()
	puct.Rule, puct.Sims, puct.Eval = PUCT, 400, Uniform{}
	puct.DirichletA, puct.DirichletEps, puct.TempPlies, puct.Temp = 0.5, 0.25, 100, 1
	puct.Reuse = true
	for name, o := range map[string]Options{"uct": uct, "puct-noise": puct} {
		t.Run(name, func(t *testing.T) {
			other, _ := g.ParseState("4455")
			pos, _ := g.ParseState("43")
			used, err := New(g, o, 99)
			if err != nil {
				t.Fatal(err)
			}
			used.Search(context.Background(), other)
			for _, seed := range []uint64{7, 8} {
				used.Search(context.Background(), other)
				used.Reset(seed)
				fresh, err := New(g, o, seed)
				if err != nil {
					t.Fatal(err)
				}
				for move := range 3 {
					fresh.Search(context.Background(), pos)
					used.Search(context.Background(), pos)
					want := fresh.RootStats(pos.CurrentPlayer(), nil)
					got := used.RootStats(pos.CurrentPlayer(), nil)
					if !slices.Equal(got, want) {
						t.Fatalf("seed %d move %d: reset tree's root stats\n%v\nwant (new tree)\n%v", seed, move, got, want)
					}
					a, b := used.Choose(got, pos.MoveNumber()), fresh.Choose(want, pos.MoveNumber())
					if a != b {
						t.Fatalf("seed %d move %d: reset tree chose %d, new tree %d", seed, move, a, b)
					}
					pos.Apply(a)
				}
				pos, _ = g.ParseState("43")
			}
		})
	}
}

// Subtree reuse with root noise: the kept root keeps its visits, and its
// priors (uniform from the evaluator) are noised afresh: not uniform any
// more, still a distribution. Without noise they stay exactly uniform.
func TestReuseRenoisesRoot(t *testing.T) {
	g := games.MustNew("connect4")
	for _, alpha := range []float64{0, 0.3} {
		o := DefaultOptions()
		o.Rule, o.Sims, o.Eval, o.Reuse = PUCT, 800, Uniform{}, true
		o.DirichletA, o.DirichletEps = alpha, 0.25
		tr, err := New(g, o, 3)
		if err != nil {
			t.Fatal(err)
		}
		pos := g.NewInitialState()
		tr.Search(context.Background(), pos)
		st := tr.RootStats(pos.CurrentPlayer(), nil)
		best := st[0]
		for _, x := range st {
			if x.Visits > best.Visits {
				best = x
			}
		}
		pos.Apply(best.Action)
		tr.Prepare(pos)
		kept := tr.RootStats(pos.CurrentPlayer(), nil)
		var visits int
		var sum float64
		uniform := true
		for _, x := range kept {
			visits += x.Visits
			sum += float64(x.Prior)
			if x.Prior != float32(1/float64(len(kept))) {
				uniform = false
			}
		}
		if visits == 0 || visits >= best.Visits {
			t.Errorf("alpha %v: kept root's edges have %d visits, want 1..%d (the played child's)", alpha, visits, best.Visits-1)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("alpha %v: kept root's priors sum to %v", alpha, sum)
		}
		if uniform != (alpha == 0) {
			t.Errorf("alpha %v: kept root's priors uniform = %v, want %v: %v", alpha, uniform, alpha == 0, kept)
		}
	}
}

// Preparing a root with noise allocates nothing once the tree is warm
// (the noise has a scratch slice).
func TestNoiseAllocs(t *testing.T) {
	g := games.MustNew("connect4")
	o := DefaultOptions()
	o.Rule, o.Sims, o.Eval, o.DirichletA = PUCT, 10, Uniform{}, 0.3
	tr, err := New(g, o, 1)
	if err != nil {
		t.Fatal(err)
	}
	pos := g.NewInitialState()
	tr.Prepare(pos)
	if n := testing.AllocsPerRun(50, func() { tr.Prepare(pos) }); n != 0 {
		t.Errorf("%v allocations per Prepare with root noise, want 0", n)
	}
}
