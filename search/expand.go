package search

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"

	"github.com/canopy-go/canopy/games"
)

// Expansion: a node's legal actions become edges, in uniformly random
// order at decision nodes, with uniform, evaluator or heuristic priors.

// legalOf fills w.legal (or w.simLegal) with s's legal actions, and the
// heuristic priors when progressive bias is on: w.hprior for the mover at
// a decision node, w.simHP[q] for every player q at a simultaneous node
// (games.Heuristic scores each choosing player's own actions there).
func (t *Tree) legalOf(w *Walker, s games.State) {
	switch p := s.CurrentPlayer(); p {
	case games.SimultaneousPlayer:
		ss := s.(games.SimultaneousState)
		for q := range t.players {
			ss.LegalFor(q, w.simLegal[q])
			if t.opt.Bias != 0 {
				heuristicPriors(w.simHP[q], w.hraw, w.simLegal[q], s, q, t.opt.Heuristic)
			}
		}
	default:
		s.Legal(w.legal)
		if t.opt.Bias != 0 && p >= 0 {
			heuristicPriors(w.hprior, w.hraw, w.legal, s, p, t.opt.Heuristic)
		}
	}
}

// heuristicPriors writes into dst[a], for every action a of legal, player's
// heuristic value h(a) in s min-max scaled over legal to [0, 1]:
//
//	(h(a) - min h) / (max h - min h)
//
// so the best action gets 1 and the worst 0 whatever the game's units
// (points, feature sums), and progressive bias's weight b means the same
// in every game (study 003 applies its b = 0.2 to a heuristic in [0, 1]).
// When every action scores the same (or the values are not finite), each
// gets 1: no action is preferred and b/(1+n) is study 003's eq. 5 as
// printed. raw is scratch indexed by action.
func heuristicPriors(dst []float32, raw []float64, legal games.Mask, s games.State, player int, h Heuristic) {
	scoreAll(h, s, player, legal, raw)
	lo, hi := math.Inf(1), math.Inf(-1)
	for a := range legal.All() {
		lo, hi = min(lo, raw[a]), max(hi, raw[a])
	}
	span := hi - lo
	for a := range legal.All() {
		if !(span > 0) || math.IsInf(span, 0) {
			dst[a] = 1
			continue
		}
		dst[a] = float32((raw[a] - lo) / span)
	}
}

// defers reports whether trees with options o defer the edges of their
// evaluated leaves (Tree.deferEdges): PUCT expanding at evaluation, without
// SO-ISMCTS or transpositions.
func defers(o *Options) bool {
	return o.Rule == PUCT && o.ExpandVisits == 0 && !o.ISMCTS && !o.TT
}

// deferEdges is expand's first half for a leaf of a deferring tree (not
// the root) evaluated with priors, called with the node claimed
// (expanding): it stores the leaf's clamped priors, in the order of its
// legal actions, and marks it deferred; the edges are made by expand at
// the node's next visit, from these priors, exactly as they would have
// been now (the same normalisation; the random edge order is drawn then).
//
// Most leaves of a search are never visited again (72% of the nodes of a
// 200-simulation Connect Four search with uniform priors), and their
// edges were most of a search's memory traffic: for Connect Four 4 bytes
// per legal action stored here instead of 24 per edge, and none of the
// node's edge records touched until it is selected through. It reports
// false, leaving the node claimed, when the prior arena is full.
func (t *Tree) deferEdges(w *Walker, nd *node, priors []float32) bool {
	k := w.legal.Count()
	first := t.a.newPri(k)
	if first == NilEdge {
		return false
	}
	pri := t.a.pri[first : first+int32(k)]
	i := 0
	for a := range w.legal.All() {
		pri[i] = max(priors[a], 0)
		i++
	}
	nd.firstEdge, nd.numEdges = first, int32(k)
	atomic.StoreUint32(&nd.state, deferred)
	return true
}

// storedPriors writes the deferred node's priors into w.Priors by action
// (w.legal must hold the node's legal actions) and returns w.Priors.
func (t *Tree) storedPriors(w *Walker, nd *node) []float32 {
	pri := t.a.pri[nd.firstEdge : nd.firstEdge+nd.numEdges]
	i := 0
	for a := range w.legal.All() {
		w.Priors[a] = pri[i]
		i++
	}
	return w.Priors
}

// expand creates the edges of node ni from the walker's legal masks (see
// legalOf). priors, when non-nil, are the evaluator's weights by action
// (at a simultaneous node one block of NumActions per player, see
// Walker.Priors);
// a deferred node's stored priors replace them. It returns false when
// another goroutine is expanding the node or the edge arena is full.
//
// Protocol: CAS state unexpanded->expanding (or deferred->expanding)
// gives one goroutine the right to write firstEdge/numEdges and the
// edges; it then stores expanded (atomic store, which orders the plain
// writes before it for any reader that loads expanded). Readers never
// touch edges of a node they have not seen expanded.
func (t *Tree) expand(w *Walker, ni int32, priors []float32) bool {
	nd := &t.a.nodes[ni]
	if t.deferring && atomic.LoadUint32(&nd.state) == deferred {
		if !atomic.CompareAndSwapUint32(&nd.state, deferred, expanding) {
			return false
		}
		priors = t.storedPriors(w, nd)
	} else if !atomic.CompareAndSwapUint32(&nd.state, unexpanded, expanding) {
		return false
	} else if priors != nil && t.deferring && ni != t.root && nd.player >= 0 && t.deferEdges(w, nd, priors) {
		return true
	}
	rng := w.Ctx.Rng
	if nd.player == games.SimultaneousPlayer {
		k := t.players
		for q := range t.players {
			k += w.simLegal[q].Count()
		}
		first := t.a.newEdges(k)
		if first == NilEdge {
			t.full.Store(true)
			atomic.StoreUint32(&nd.state, unexpanded)
			return false
		}
		i := first + int32(t.players)
		for q := range t.players {
			c := w.simLegal[q].Count()
			t.a.edges[first+int32(q)] = edge{action: games.Action(c), child: NilEdge} // header 0: no children yet
			perm := w.perm[:c]
			drawSwaps(perm, rng)
			seg := i
			// Player q's priors: its own block of the evaluator's
			// policy (decoupled PUCT), normalised over its actions,
			// else uniform or progressive bias's heuristic.
			var pq []float32
			var sum float32
			if priors != nil {
				pq = priors[q*t.game.NumActions() : (q+1)*t.game.NumActions()]
				for a := range w.simLegal[q].All() {
					sum += max(pq[a], 0)
				}
			}
			for a := range w.simLegal[q].All() {
				p := 1 / float32(c)
				switch {
				case pq != nil && sum > 0:
					p = max(pq[a], 0) / sum
				case t.opt.Bias != 0:
					p = w.simHP[q][a]
				}
				placeEdge(t.a, seg, i-seg, perm, a, p)
				i++
			}
		}
		nd.firstEdge, nd.numEdges = first, int32(k)
		atomic.StoreUint32(&nd.state, expanded)
		return true
	}
	k := w.legal.Count()
	first := t.a.newEdges(k)
	if first == NilEdge {
		t.full.Store(true)
		atomic.StoreUint32(&nd.state, unexpanded)
		return false
	}
	if priors == nil && t.opt.Bias == 0 && nd.player >= 0 {
		// Uniform priors at a decision node: the general loop below
		// without its prior cases (same edges, same random draws).
		// The inside-out shuffle runs on the walker's action scratch and
		// each edge is written once.
		perm, acts := w.perm[:k], w.acts[:k]
		drawSwaps(perm, rng)
		i := 0
		for wi, word := range w.legal {
			for ; word != 0; word &= word - 1 {
				j := perm[i]
				acts[i] = acts[j]
				acts[j] = games.Action(wi<<6 + bits.TrailingZeros64(word))
				i++
			}
		}
		uniform := 1 / float32(k)
		edges, hot := t.a.edges[first:first+int32(k)], t.a.hot[first:first+int32(k)]
		for i, a := range acts {
			edges[i] = edge{action: a, child: NilNode}
			hot[i].prior = uniform
		}
		nd.firstEdge, nd.numEdges = first, int32(k)
		atomic.StoreUint32(&nd.state, expanded)
		return true
	}
	var sum float32
	if priors != nil {
		for a := range w.legal.All() {
			sum += max(priors[a], 0)
		}
	}
	// Edges of a decision node are written in uniformly random order
	// (inside-out Fisher-Yates, perm from drawSwaps), so that "first
	// unvisited edge" and first-maximum tie-breaks are uniform choices.
	// Chance nodes keep action order.
	perm := w.perm[:k]
	if nd.player >= 0 {
		drawSwaps(perm, rng)
	} else {
		for i := range perm {
			perm[i] = int32(i)
		}
	}
	uniform := 1 / float32(k)
	i := int32(0)
	for a := range w.legal.All() {
		p := uniform
		switch {
		case priors != nil && sum > 0:
			p = max(priors[a], 0) / sum
		case t.opt.Bias != 0:
			p = w.hprior[a]
		}
		placeEdge(t.a, first, i, perm, a, p)
		i++
	}
	nd.firstEdge, nd.numEdges = first, int32(k)
	atomic.StoreUint32(&nd.state, expanded)
	return true
}

// factTab[k] holds k! and 2^64 mod k! (Lemire's rejection threshold) for
// the permutations drawn in one batch by drawSwaps (20! < 2^64).
var factTab = func() (t [21]struct{ fact, thresh uint64 }) {
	f := uint64(1)
	for k := range t {
		if k > 1 {
			f *= uint64(k)
		}
		t[k].fact, t[k].thresh = f, -f%f
	}
	return t
}()

// placeEdge is one step of an inside-out Fisher-Yates shuffle of the k
// edges from first: edge i (action a, prior p) goes to slot perm[i] <= i,
// and the edge that held that slot moves to slot i. After the last step
// the edges are in uniformly random order when perm comes from drawSwaps
// (the identity perm keeps them in order).
func placeEdge(ar *arena, first, i int32, perm []int32, a games.Action, p float32) {
	j := perm[i]
	if j != i {
		ar.edges[first+i] = ar.edges[first+j]
		ar.hot[first+i].prior = ar.hot[first+j].prior
	}
	ar.edges[first+j] = edge{action: a, child: NilNode}
	ar.hot[first+j].prior = p
}

// drawSwaps sets perm[i] to an independent uniform integer in [0, i] for
// every i (perm[0] = 0): the swap targets of a Fisher-Yates shuffle.
//
// It draws one 64-bit number for as many consecutive indices as fit
// (bounds whose product B is at most 2^64: 19 indices from the start, 7
// in a 7-action game) and splits it by chained multiplications (the
// high words of x*b are the mixed-radix digits of floor(x*B/2^64)); the
// final low word is Lemire's rejection test for B, so the digits are
// exactly uniform (Brackett-Rozinsky and Lemire 2024, batched ranged
// random integers). One Uint64 per expansion instead of k-1 IntN calls.
func drawSwaps(perm []int32, rng *rand.Rand) {
	if len(perm) == 0 {
		return
	}
	perm[0] = 0
	if k := len(perm); k < len(factTab) {
		// One batch: B = k!, rejection threshold 2^64 mod k! from tables.
		for {
			x := rng.Uint64()
			for b := 1; b < k; b++ {
				hi, lo := bits.Mul64(x, uint64(b+1))
				perm[b], x = int32(hi), lo
			}
			if x >= factTab[k].thresh {
				return
			}
		}
	}
	for i := 1; i < len(perm); {
		prod, e := uint64(i+1), i+1
		for e < len(perm) {
			hi, lo := bits.Mul64(prod, uint64(e+1))
			if hi != 0 {
				break
			}
			prod, e = lo, e+1
		}
		for {
			x := rng.Uint64()
			for b := i; b < e; b++ {
				hi, lo := bits.Mul64(x, uint64(b+1))
				perm[b], x = int32(hi), lo
			}
			if x >= prod || x >= -prod%prod {
				break
			}
		}
		i = e
	}
}
