package hex

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	agent.Register(agent.Registration{
		Name:    "hexdist",
		Summary: "Hex two-distance (Queenbee) one-ply heuristic: maximise opponent potential minus own potential",
		Games:   []string{"hex"},
		New: func(g games.Game, _ *spec.Spec, env agent.Env) (agent.Agent, error) {
			seed := env.Seed
			hg, ok := g.(*Game)
			if !ok {
				return nil, fmt.Errorf("hexdist: game %s is not hex", g.Spec())
			}
			return NewHexDist(hg, seed), nil
		},
	})
}

// Far is the two-distance of a cell that cannot reach an edge (no two
// disjoint-enough routes) and the cap of a potential.
const Far = 1000

// winScore is the score of a move that wins at once.
const winScore = 1 << 20

// evaluator computes two-distances with reusable scratch space. It does
// not allocate and is not safe for concurrent use.
type evaluator struct {
	g *Game
	// adj[c] is the neighbourhood of empty cell c in the player's reduced
	// graph: adjacent empty cells plus the empty cells adjacent to any own
	// group touching c (c itself excluded). Opponent stones are removed.
	adj [maxCells]board
	// groups[:ngroups] are the player's groups of stones, as reduce found
	// them.
	groups  [maxGroups]group
	ngroups int
}

// maxGroups bounds the groups of one player: at most one per stone, and a
// player has at most half the cells (rounded up).
const maxGroups = (maxCells + 1) / 2

// group is one player's group of connected stones, seen from the empty
// cells.
type group struct {
	libs  board // the empty cells adjacent to the group
	touch uint8 // bit 0: it touches the player's first edge, bit 1: the second
}

// reduce builds adj for player p and returns the empty cells adjacent
// (directly or through an own group) to p's first and second edge.
func (e *evaluator) reduce(stones *[2]board, p int) (nearA, nearB board) {
	g := e.g
	own := stones[p]
	empty := g.full.andNot(stones[0].or(stones[1]))
	edgeA, edgeB := g.row0, g.rowLast
	if p == 1 {
		edgeA, edgeB = g.col0, g.colLast
	}
	nearA, nearB = empty.and(edgeA), empty.and(edgeB)
	for i, w := range empty {
		for w != 0 {
			c := i<<6 + bits.TrailingZeros64(w)
			w &= w - 1
			e.adj[c] = g.nbrSet[c].and(empty)
		}
	}
	// Contract each own group: its empty neighbours become mutually adjacent.
	e.ngroups = 0
	left := own
	for !left.empty() {
		var grp board
		grp.set(left.first())
		for {
			next := g.grow(grp).and(own)
			if next == grp {
				break
			}
			grp = next
		}
		left = left.andNot(grp)
		libs := g.grow(grp).and(empty)
		var touch uint8
		if !grp.and(edgeA).empty() {
			nearA = nearA.or(libs)
			touch |= 1
		}
		if !grp.and(edgeB).empty() {
			nearB = nearB.or(libs)
			touch |= 2
		}
		e.groups[e.ngroups] = group{libs: libs, touch: touch}
		e.ngroups++
		for i, w := range libs {
			for w != 0 {
				c := i<<6 + bits.TrailingZeros64(w)
				w &= w - 1
				e.adj[c] = e.adj[c].or(libs)
			}
		}
	}
	for i, w := range empty {
		for w != 0 {
			c := i<<6 + bits.TrailingZeros64(w)
			w &= w - 1
			e.adj[c].unset(c)
		}
	}
	return nearA, nearB
}

// potential returns player p's potential in stones: the minimum over empty
// cells of the sum of the two-distances to both of p's edges (0 when p has
// already connected, capped at Far). lvA and lvB are scratch.
func (e *evaluator) potential(stones *[2]board, p int, lvA, lvB *levelSets) int {
	g := e.g
	edgeA, edgeB := g.row0, g.rowLast
	if p == 1 {
		edgeA, edgeB = g.col0, g.colLast
	}
	if g.connects(stones[p], edgeA, edgeB) {
		return 0
	}
	empty := g.full.andNot(stones[0].or(stones[1]))
	nearA, nearB := e.reduce(stones, p)
	return potentialIn(&e.adj, empty, nearA, nearB, lvA, lvB)
}

// levelSets holds the cells of each two-distance: entry k the cells at
// distance k+1 (walk64, walk3). Each level settles at least one cell, so
// maxCells entries suffice.
type levelSets [maxCells]board

// potentialIn is the potential in the reduced graph adj over the empty
// cells, with nearA and nearB the cells next to the player's two edges:
// the minimum over empty cells of the sum of their two-distances, capped at
// Far. lvA and lvB are scratch.
//
// It grows the two sides' distance levels (walk64, walk3) alternately,
// the shallower side first, and checks each new level against the other
// side's levels so far: a cell in level i from the first edge and level j
// from the second has the sum i+j+2. Once both sides' next levels would
// give sums of at least the best found, no unexplored pair can do better,
// and the deeper levels are never computed (most of them, on a board in
// play).
func potentialIn(adj *[maxCells]board, empty, nearA, nearB board, lvA, lvB *levelSets) int {
	if empty[1]|empty[2] == 0 {
		return meet64(adj, empty[0], nearA[0], nearB[0], lvA, lvB)
	}
	return meet3(adj, words(empty), words(nearA), words(nearB), lvA, lvB)
}

// meet3 is potentialIn's search on boards of any size: it steps the side
// whose next level is shallower (walk3.step), stores each new level in
// that side's scratch and checks it against the other side's levels so
// far, until neither side's next level could improve the best sum.
func meet3(adj *[maxCells]board, empty, nearA, nearB words3, lvA, lvB *levelSets) int {
	var w [2]walk3
	w[0].start(empty, nearA)
	w[1].start(empty, nearB)
	lv := [2]*levelSets{lvA, lvB}
	best := Far
	var n [2]int
	var done [2]bool
	for {
		canA := !done[0] && n[0]+2 < best
		canB := !done[1] && n[1]+2 < best
		if !canA && !canB {
			return best
		}
		side := 1
		if canA && (!canB || n[0] <= n[1]) {
			side = 0
		}
		l, ok := w[side].step(adj)
		if !ok {
			if n[side] == 0 {
				return Far // no cell next to that edge
			}
			done[side] = true
			continue
		}
		i := n[side]
		lv[side][i] = board{l.a, l.b, l.c}
		n[side]++
		for j := 0; j < n[1-side] && i+j+2 < best; j++ {
			if o := &lv[1-side][j]; l.a&o[0]|l.b&o[1]|l.c&o[2] != 0 {
				best = i + j + 2
				break
			}
		}
	}
}

// meet64 is meet3 on one word, for boards of at most 64 cells.
func meet64(adj *[maxCells]board, empty, nearA, nearB uint64, lvA, lvB *levelSets) int {
	var w [2]walk64
	w[0].start(empty, nearA)
	w[1].start(empty, nearB)
	lv := [2]*levelSets{lvA, lvB}
	best := Far
	var n [2]int
	var done [2]bool
	for {
		canA := !done[0] && n[0]+2 < best
		canB := !done[1] && n[1]+2 < best
		if !canA && !canB {
			return best
		}
		side := 1
		if canA && (!canB || n[0] <= n[1]) {
			side = 0
		}
		l, ok := w[side].step(adj)
		if !ok {
			if n[side] == 0 {
				return Far
			}
			done[side] = true
			continue
		}
		i := n[side]
		lv[side][i][0] = l
		n[side]++
		for j := 0; j < n[1-side] && i+j+2 < best; j++ {
			if l&lv[1-side][j][0] != 0 {
				best = i + j + 2
				break
			}
		}
	}
}

// walk64 computes the same two-distances as distances, as sets, one level
// per step (boards of at most 64 cells): the first step returns near
// (distance 1), and step k+1 the still unsettled empty cells with at least
// two neighbours in the levels returned so far (distance k+2). Instead of
// counting each open cell's settled neighbours at every level, it pushes
// each cell's neighbourhood once, when the cell settles, into two sets:
// one (cells with a settled neighbour) and two (with two or more). This
// relies on adj being symmetric on the empty cells, which the reduced
// graph is (adjacency and group cliques are both symmetric); a cell
// listed as its own neighbour is harmless, as it is settled by then. The
// sets are kept in words, not boards: Go keeps a [3]uint64 in memory, not
// in registers, which made this loop 3x slower.
type walk64 struct{ one, two, open, next uint64 }

func (w *walk64) start(empty, near uint64) { *w = walk64{open: empty &^ near, next: near} }

func (w *walk64) step(adj *[maxCells]board) (uint64, bool) {
	l := w.next
	if l == 0 {
		return 0, false
	}
	one, two := w.one, w.two
	for x := l; x != 0; x &= x - 1 {
		nb := adj[bits.TrailingZeros64(x)][0]
		two |= one & nb
		one |= nb
	}
	w.one, w.two = one, two
	w.next = two & w.open
	w.open &^= w.next
	return l, true
}

// walk3 is walk64 for boards of any size.
type walk3 struct{ one, two, open, next words3 }

func (w *walk3) start(empty, near words3) { *w = walk3{open: empty.andNot(near), next: near} }

func (w *walk3) step(adj *[maxCells]board) (words3, bool) {
	l := w.next
	if l.zero() {
		return l, false
	}
	o0, o1, o2 := w.one.a, w.one.b, w.one.c
	t0, t1, t2 := w.two.a, w.two.b, w.two.c
	for i, x := range [3]uint64{l.a, l.b, l.c} {
		for ; x != 0; x &= x - 1 {
			nb := &adj[i<<6+bits.TrailingZeros64(x)]
			t0 |= o0 & nb[0]
			t1 |= o1 & nb[1]
			t2 |= o2 & nb[2]
			o0 |= nb[0]
			o1 |= nb[1]
			o2 |= nb[2]
		}
	}
	one, two := words3{o0, o1, o2}, words3{t0, t1, t2}
	w.one, w.two = one, two
	w.next = two.and(w.open)
	w.open = w.open.andNot(w.next)
	return l, true
}

func (b board) first() int {
	for i, w := range b {
		if w != 0 {
			return i<<6 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// HexDist is the shortest-path heuristic agent: it tries every legal move
// and keeps one maximising (opponent's potential - own potential) after
// the move, where a potential is the smallest sum of two-distances to a
// player's two edges (Anshelevich; van Rijswijck's Queenbee). A move that
// wins at once scores above everything. Ties are broken uniformly with the
// agent's seeded generator. Not safe for concurrent use.
type HexDist struct {
	onePly
	bs batchScorer
}

// NewHexDist returns the hexdist agent for g.
func NewHexDist(g *Game, seed uint64) *HexDist {
	return &HexDist{onePly: newOnePly("hexdist", g, false, seed)}
}

// onePly is what the one-ply agents (hexdist, hexpath) share: the check of
// the state they are asked about, the legal moves and their scores, and
// the choice among the best.
type onePly struct {
	name   string
	g      *Game
	rng    *rand.Rand
	first  bool // ties go to the first best move, not to a uniform one
	mask   games.Mask
	scores []float64 // by action
}

func newOnePly(name string, g *Game, first bool, seed uint64) onePly {
	return onePly{name: name, g: g, rng: games.NewRand(seed), first: first,
		mask: games.NewMask(g.NumActions()), scores: make([]float64, g.NumActions())}
}

// state returns s as a Hex state of the agent's board with player to
// move, and fills o.mask with its legal moves.
func (o *onePly) state(ctx context.Context, s games.State, player int) (*State, error) {
	hs, ok := s.(*State)
	if !ok || hs.g.n != o.g.n || hs.g.swap != o.g.swap {
		return nil, fmt.Errorf("%s: state of %s, agent built for %s", o.name, s.Game().Spec(), o.g.Spec())
	}
	if hs.IsTerminal() || player != hs.CurrentPlayer() {
		return nil, fmt.Errorf("%s: player %d cannot move in %q (to move: %d)", o.name, player, hs.String(), hs.CurrentPlayer())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	hs.Legal(o.mask)
	return hs, nil
}

// best returns a legal move of highest score (o.scores), ties broken as
// o.first says.
func (o *onePly) best() games.Action {
	best, bestScore, ties := games.NoAction, 0.0, 0
	for a := range o.mask.All() {
		v := o.scores[a]
		switch {
		case best == games.NoAction || v > bestScore:
			best, bestScore, ties = a, v, 1
		case v == bestScore && !o.first:
			ties++
			if o.rng.IntN(ties) == 0 {
				best = a
			}
		}
	}
	return best
}

// analysis returns every legal move with its score.
func (o *onePly) analysis() []agent.Analysis {
	var out []agent.Analysis
	for a := range o.mask.All() {
		out = append(out, agent.Analysis{Action: a, Score: o.scores[a]})
	}
	return out
}

// Act implements agent.Agent.
func (h *HexDist) Act(ctx context.Context, s games.State, player int) (games.Action, error) {
	hs, err := h.state(ctx, s, player)
	if err != nil {
		return games.NoAction, err
	}
	h.bs.scoreAll(hs, h.mask, h.scores)
	return h.best(), nil
}

// Analyze implements agent.Analyzer: every legal move with its score
// (opponent potential - own potential after the move; 1<<20 for a win).
func (h *HexDist) Analyze(ctx context.Context, s games.State, player int) ([]agent.Analysis, error) {
	hs, err := h.state(ctx, s, player)
	if err != nil {
		return nil, err
	}
	h.bs.scoreAll(hs, h.mask, h.scores)
	return h.analysis(), nil
}
