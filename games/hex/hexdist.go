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
		New: func(g games.Game, _ *spec.Spec, seed uint64) (agent.Agent, error) {
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
			var one board
			one.set(c)
			e.adj[c] = g.grow(one).and(empty).andNot(one)
		}
	}
	// Contract each own group: its empty neighbours become mutually adjacent.
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
		if !grp.and(edgeA).empty() {
			nearA = nearA.or(libs)
		}
		if !grp.and(edgeB).empty() {
			nearB = nearB.or(libs)
		}
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

// distances writes into d the two-distance of every empty cell from the
// edge whose adjacent empty cells are near (Far where unreachable; cells
// that are not empty are left alone): 1 next to the edge, else 1 + the
// second-smallest distance among the cell's reduced-graph neighbours.
// Cells are settled level by level: at level k every still unsettled cell
// with at least two neighbours at distance <= k gets k+1.
func (e *evaluator) distances(empty, near board, d *[maxCells]int32) {
	for i, w := range empty {
		for w != 0 {
			c := i<<6 + bits.TrailingZeros64(w)
			w &= w - 1
			d[c] = Far
		}
	}
	settled := near
	for i, w := range near {
		for w != 0 {
			d[i<<6+bits.TrailingZeros64(w)] = 1
			w &= w - 1
		}
	}
	open := empty.andNot(near)
	for k := int32(1); !open.empty(); k++ {
		var newly board
		for i, w := range open {
			for w != 0 {
				c := i<<6 + bits.TrailingZeros64(w)
				w &= w - 1
				if e.adj[c].and(settled).count() >= 2 {
					newly.set(c)
					d[c] = k + 1
				}
			}
		}
		if newly.empty() {
			break
		}
		settled = settled.or(newly)
		open = open.andNot(newly)
	}
}

// potential returns player p's potential in stones: the minimum over empty
// cells of the sum of the two-distances to both of p's edges (0 when p has
// already connected, capped at Far). dA and dB receive the distances.
func (e *evaluator) potential(stones *[2]board, p int, dA, dB *[maxCells]int32) int {
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
	e.distances(empty, nearA, dA)
	e.distances(empty, nearB, dB)
	best := int32(Far)
	for i, w := range empty {
		for w != 0 {
			c := i<<6 + bits.TrailingZeros64(w)
			w &= w - 1
			best = min(best, dA[c]+dB[c])
		}
	}
	return int(best)
}

func (b board) count() int {
	return bits.OnesCount64(b[0]) + bits.OnesCount64(b[1]) + bits.OnesCount64(b[2])
}

func (b board) first() int {
	for i, w := range b {
		if w != 0 {
			return i<<6 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// TwoDistances returns player p's two-distances in s from p's first edge
// (top for player 0, left for player 1) and from the second edge (bottom,
// right), indexed by action id, with -1 for occupied cells and Far for
// cells that cannot reach the edge, and p's potential (see HexDist). It
// allocates; the agent uses internal scratch.
func TwoDistances(s *State, p int) (fromA, fromB []int, potential int) {
	e := &evaluator{g: s.g}
	var dA, dB [maxCells]int32
	potential = e.potential(&s.stones, p, &dA, &dB)
	fromA, fromB = make([]int, s.g.nn), make([]int, s.g.nn)
	for c := range s.g.nn {
		fromA[c], fromB[c] = -1, -1
		if !s.stones[0].has(c) && !s.stones[1].has(c) {
			fromA[c], fromB[c] = int(dA[c]), int(dB[c])
		}
	}
	return fromA, fromB, potential
}

// HexDist is the shortest-path heuristic agent: it tries every legal move
// and keeps one maximising (opponent's potential - own potential) after
// the move, where a potential is the smallest sum of two-distances to a
// player's two edges (Anshelevich; van Rijswijck's Queenbee). A move that
// wins at once scores above everything. Ties are broken uniformly with the
// agent's seeded generator. Not safe for concurrent use.
type HexDist struct {
	g    *Game
	rng  *rand.Rand
	sc   scorer
	mask games.Mask
}

// NewHexDist returns the hexdist agent for g.
func NewHexDist(g *Game, seed uint64) *HexDist {
	return &HexDist{g: g, rng: games.NewRand(seed), mask: games.NewMask(g.NumActions())}
}

func (h *HexDist) state(s games.State, player int) (*State, error) {
	hs, ok := s.(*State)
	if !ok || hs.g.n != h.g.n || hs.g.swap != h.g.swap {
		return nil, fmt.Errorf("hexdist: state of %s, agent built for %s", s.Game().Spec(), h.g.Spec())
	}
	if hs.IsTerminal() || player != hs.CurrentPlayer() {
		return nil, fmt.Errorf("hexdist: player %d cannot move in %q (to move: %d)", player, hs.String(), hs.CurrentPlayer())
	}
	return hs, nil
}

// Act implements agent.Agent.
func (h *HexDist) Act(ctx context.Context, s games.State, player int) (games.Action, error) {
	hs, err := h.state(s, player)
	if err != nil {
		return games.NoAction, err
	}
	hs.Legal(h.mask)
	best, bestScore, ties := games.NoAction, 0, 0
	for a := range h.mask.All() {
		if err := ctx.Err(); err != nil {
			return games.NoAction, err
		}
		v := h.sc.score(hs, a)
		switch {
		case best == games.NoAction || v > bestScore:
			best, bestScore, ties = a, v, 1
		case v == bestScore:
			ties++
			if h.rng.IntN(ties) == 0 {
				best = a
			}
		}
	}
	return best, nil
}

// Analyze implements agent.Analyzer: every legal move with its score
// (opponent potential - own potential after the move; 1<<20 for a win).
func (h *HexDist) Analyze(ctx context.Context, s games.State, player int) ([]agent.Analysis, error) {
	hs, err := h.state(s, player)
	if err != nil {
		return nil, err
	}
	hs.Legal(h.mask)
	var out []agent.Analysis
	for a := range h.mask.All() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, agent.Analysis{Action: a, Score: float64(h.sc.score(hs, a))})
	}
	return out, nil
}
