package search

import "math/rand/v2"

// Reset makes t a new tree with seed seed: after it, t searches exactly
// as New(game, options, seed) would (same random streams, an empty arena,
// no previous root to reuse), but it keeps its arenas, walkers and
// scratch space, so that a driver playing game after game (self-play)
// allocates its trees once. Reset allocates only on its first call (the
// tree's own random sources). It must not run concurrently with any other
// method of t.
func (t *Tree) Reset(seed uint64) {
	t.seed = seed
	t.a.reset()
	if t.tt != nil {
		t.tt.clear()
	}
	t.root = NilNode // no previous root: the next Prepare cannot reuse
	t.full.Store(false)
	t.claimed.Store(0)
	t.sims = 0
	// The streams New and Walkers would create for seed: the tree's own,
	// then walker 0 (Prepare's and the single-threaded Search's) and
	// walkers i > 0 (Search's goroutines, a batched job's leaves).
	if len(t.srcs) == 0 {
		t.srcs = append(t.srcs, newSource(&t.rng))
	}
	for len(t.srcs) < 1+len(t.walkers) {
		t.srcs = append(t.srcs, newSource(&t.walkers[len(t.srcs)-1].Ctx.Rng))
	}
	seedSource(t.srcs[0], seed)
	for i := range t.walkers {
		ws := seed ^ 0x9e3779b97f4a7c15
		if i > 0 {
			ws = seed + uint64(i)*0x9e3779b97f4a7c15
		}
		seedSource(t.srcs[1+i], ws)
	}
}

// newSource replaces *r with a generator over a new PCG source that Reset
// can reseed, and returns the source.
func newSource(r **rand.Rand) *rand.PCG {
	src := rand.NewPCG(0, 0)
	*r = rand.New(src)
	return src
}

// seedSource puts src in the state games.NewRand(seed)'s source starts
// in (TestResetIsNew checks the two streams against each other).
func seedSource(src *rand.PCG, seed uint64) {
	src.Seed(seed, seed^0xda3e39cb94b95bdb)
}
