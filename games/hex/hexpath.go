package hex

import (
	"context"
	"fmt"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	agent.Register(agent.Registration{
		Name:    "hexpath",
		Summary: "Hex shortest-path (Dijkstra) one-ply heuristic: maximise opponent's minus own shortest connection, counted in empty cells",
		Games:   []string{"hex"},
		Options: []agent.Option{
			{Key: "ties", Default: "random", Help: "random (uniform among the best moves) or first (the first best cell in a1, b1, ... order: the same move every time)"},
		},
		New: func(g games.Game, sp *spec.Spec, env agent.Env) (agent.Agent, error) {
			seed := env.Seed
			hg, ok := g.(*Game)
			if !ok {
				return nil, fmt.Errorf("hexpath: game %s is not hex", g.Spec())
			}
			first := sp.Choice("ties", "random", "random", "first") == "first"
			return NewHexPath(hg, first, seed), nil
		},
	})
}

// HexPath is the plain shortest-path heuristic agent, study 001's Hex
// opponent as its text describes it ("a simple heuristic based on
// Dijkstra's shortest path algorithm", section 6.9): a player's distance
// is the fewest empty cells that would connect its two edges through its
// own stones (opponent stones block), and the agent plays a move
// maximising the opponent's distance minus its own after the move (a
// winning move first). It is weaker than hexdist's two-distance, which
// also counts how many ways a cell can be reached. Ties are broken
// uniformly with the agent's seeded generator, or by taking the first best
// cell (ties=first: the study's heuristic "always makes the same first
// move"). Not safe for concurrent use.
type HexPath struct{ onePly }

// NewHexPath returns the hexpath agent for g (first: ties=first).
func NewHexPath(g *Game, first bool, seed uint64) *HexPath {
	return &HexPath{newOnePly("hexpath", g, first, seed)}
}

// PathDistance returns player p's shortest connection in stones: the
// fewest empty cells that, added to p's stones, join p's two edges (0 once
// joined, Far when the opponent has cut every route). It is a 0-1 breadth-
// first search over the cells, in bit-parallel layers: layer k holds the
// cells reachable from p's first edge through at most k empty cells and
// any number of p's stones.
func (g *Game) PathDistance(stones *[2]board, p int) int {
	edgeA, edgeB := g.row0, g.rowLast
	if p == 1 {
		edgeA, edgeB = g.col0, g.colLast
	}
	own := stones[p]
	empty := g.full.andNot(stones[0].or(stones[1]))
	if g.nn <= 64 {
		return g.pathDistance64(own[0], empty[0], edgeA[0], edgeB[0])
	}
	return g.pathDistance3(words(own), words(empty), words(edgeA), words(edgeB))
}

// words3 is a board as a struct of three words, which Go keeps in
// registers (a [3]uint64 stays in memory: the board form of
// pathDistance3 ran several times slower).
type words3 struct{ a, b, c uint64 }

func words(x board) words3 { return words3{x[0], x[1], x[2]} }

func (x words3) or(y words3) words3     { return words3{x.a | y.a, x.b | y.b, x.c | y.c} }
func (x words3) and(y words3) words3    { return words3{x.a & y.a, x.b & y.b, x.c & y.c} }
func (x words3) andNot(y words3) words3 { return words3{x.a &^ y.a, x.b &^ y.b, x.c &^ y.c} }
func (x words3) zero() bool             { return x.a|x.b|x.c == 0 }

// shl and shr move every bit k places up or down (1 <= k <= 63).
func (x words3) shl(k uint) words3 {
	return words3{x.a << k, x.b<<k | x.a>>(64-k), x.c<<k | x.b>>(64-k)}
}
func (x words3) shr(k uint) words3 {
	return words3{x.a>>k | x.b<<(64-k), x.b>>k | x.c<<(64-k), x.c >> k}
}

// pathDistance3 is PathDistance on words3 (any size; used above 8x8).
func (g *Game) pathDistance3(own, empty, edgeA, edgeB words3) int {
	n := uint(g.n)
	notCol0, notColLast := words(g.notCol0), words(g.notColLast)
	grow := func(x words3) words3 { // as Game.grow
		y := x.or(x.shl(1).and(notCol0))
		z := x.or(x.shr(1).and(notColLast))
		return y.or(z).or(y.shr(n)).or(z.shl(n))
	}
	flood := func(from words3) words3 {
		for {
			next := from.or(grow(from).and(own))
			if next == from {
				return from
			}
			from = next
		}
	}
	reach := flood(own.and(edgeA)) // cost 0
	for k := 0; ; k++ {
		if !reach.and(edgeB).zero() {
			return k
		}
		// One more empty cell: next to the reached cells, or on the first edge.
		step := grow(reach).or(edgeA).and(empty).andNot(reach)
		if step.zero() {
			return Far
		}
		reach = flood(reach.or(step))
	}
}

// pathDistance64 is PathDistance for boards of at most 64 cells (sizes up
// to 8), on single words: Go keeps a board ([3]uint64) in memory, not in
// registers, and this ran 3x slower on boards.
func (g *Game) pathDistance64(own, empty, edgeA, edgeB uint64) int {
	n := uint(g.n)
	notCol0, notColLast := g.notCol0[0], g.notColLast[0]
	grow := func(x uint64) uint64 {
		y := x | x<<1&notCol0
		z := x | x>>1&notColLast
		return y | z | y>>n | z<<n
	}
	flood := func(from uint64) uint64 {
		for {
			next := from | grow(from)&own
			if next == from {
				return from
			}
			from = next
		}
	}
	reach := flood(own & edgeA)
	for k := 0; ; k++ {
		if reach&edgeB != 0 {
			return k
		}
		step := (grow(reach) | edgeA) & empty &^ reach
		if step == 0 {
			return Far
		}
		reach = flood(reach | step)
	}
}

// pathScore scores action a for the player to move in s (not terminal):
// the opponent's distance minus the mover's after a, or winScore when a
// wins at once. s is not modified.
func pathScore(s *State, a games.Action) int {
	g := s.g
	p := s.CurrentPlayer()
	after := s.stones
	if int(a) == g.nn { // swap: evaluate the position it makes
		t := *s
		t.Apply(a)
		after = t.stones
	} else {
		after[p].set(int(a))
	}
	own := g.PathDistance(&after, p)
	if own == 0 {
		return winScore
	}
	return g.PathDistance(&after, 1-p) - own
}

// Act implements agent.Agent.
func (h *HexPath) Act(ctx context.Context, s games.State, player int) (games.Action, error) {
	hs, err := h.state(ctx, s, player)
	if err != nil {
		return games.NoAction, err
	}
	h.score(hs)
	return h.best(), nil
}

// Analyze implements agent.Analyzer: every legal move with its score
// (opponent's distance - own distance after the move; 1<<20 for a win).
func (h *HexPath) Analyze(ctx context.Context, s games.State, player int) ([]agent.Analysis, error) {
	hs, err := h.state(ctx, s, player)
	if err != nil {
		return nil, err
	}
	h.score(hs)
	return h.analysis(), nil
}

func (h *HexPath) score(hs *State) {
	for a := range h.mask.All() {
		h.scores[a] = float64(pathScore(hs, a))
	}
}
