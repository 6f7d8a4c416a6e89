package hex

import (
	"fmt"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

// Board size limits and the default.
const (
	MinSize     = 2
	MaxSize     = 13
	DefaultSize = 11

	maxCells = MaxSize * MaxSize // 169
)

func init() {
	games.Register(games.Registration{
		Name:    "hex",
		Summary: "Hex on an n x n rhombus, optional pie (swap) rule",
		Options: new(options).table().Docs(),
		New: func(s *spec.Spec) (games.Game, error) {
			var o options
			if err := o.table().Parse(s); err != nil {
				return nil, err
			}
			g, err := New(o.size, o.swap)
			if err != nil {
				return nil, err
			}
			g.pathHeuristic = o.heuristic == "path"
			return g, nil
		},
	})
}

// options are hex's spec options, declared once: the registration's
// documentation and New's parsing both come from table.
type options struct {
	size      int
	swap      bool
	heuristic string
}

func (o *options) table() spec.Table {
	return spec.Table{
		spec.Int("size", &o.size, DefaultSize, MinSize, MaxSize, "board side n"),
		spec.Bool("swap", &o.swap, false, "pie rule: White may answer Black's first move with \"swap\""),
		spec.Choice("heuristic", &o.heuristic, "twodistance", []string{"twodistance", "path"}, "the states' heuristic for searches (bias=, rollout=heuristic): twodistance (hexdist's score) or path (hexpath's: plain shortest paths)"),
	}
}

// board is a bitset over action ids (bit r*n+c is cell (r, c)). Bits at or
// above n*n are always zero in stone sets.
type board [3]uint64

func (b *board) set(i int)       { b[i>>6] |= 1 << (uint(i) & 63) }
func (b *board) unset(i int)     { b[i>>6] &^= 1 << (uint(i) & 63) }
func (b board) has(i int) bool   { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b board) or(o board) board { return board{b[0] | o[0], b[1] | o[1], b[2] | o[2]} }
func (b board) and(o board) board {
	return board{b[0] & o[0], b[1] & o[1], b[2] & o[2]}
}
func (b board) andNot(o board) board {
	return board{b[0] &^ o[0], b[1] &^ o[1], b[2] &^ o[2]}
}
func (b board) empty() bool { return b[0]|b[1]|b[2] == 0 }

// shl moves every bit k places up (1 <= k <= 63).
func (b board) shl(k uint) board {
	k &= 63
	return board{b[0] << k, b[1]<<k | b[0]>>(64-k), b[2]<<k | b[1]>>(64-k)}
}

// shr moves every bit k places down (1 <= k <= 63).
func (b board) shr(k uint) board {
	k &= 63
	return board{b[0]>>k | b[1]<<(64-k), b[1]>>k | b[2]<<(64-k), b[2] >> k}
}

// Game is Hex with its options applied. It is immutable and safe for
// concurrent use.
type Game struct {
	n    int
	nn   int // n*n, also the swap action id
	swap bool
	// pathHeuristic: the states' heuristic is hexpath's score, not
	// hexdist's (the heuristic=path option).
	pathHeuristic bool

	full, row0, rowLast, col0, colLast board
	notCol0, notColLast                board

	// nbr[a][:nnbr[a]] are the cells adjacent to cell a, and nbrSet[a]
	// the same cells as a set.
	nbr    [maxCells][6]uint8
	nnbr   [maxCells]uint8
	nbrSet [maxCells]board
	// edgeBits[p][a] says which of player p's edges cell a touches: bit 0
	// the top (p = 0) or left (p = 1) edge, bit 1 the bottom or right edge.
	// With n >= 2 a cell touches at most one edge of each player.
	edgeBits [2][maxCells]uint8
	// transpose[a] is the cell (c, r) for a = (r, c).
	transpose [maxCells]uint8
	// rowOf[a], colOf[a] are the coordinates of cell a.
	rowOf, colOf [maxCells]uint8
}

// New returns Hex on an n x n board, with the pie rule when swap is true.
func New(n int, swap bool) (*Game, error) {
	if n < MinSize || n > MaxSize {
		return nil, fmt.Errorf("hex: size %d out of range [%d, %d]", n, MinSize, MaxSize)
	}
	g := &Game{n: n, nn: n * n, swap: swap}
	for r := range n {
		for c := range n {
			a := r*n + c
			g.full.set(a)
			if r == 0 {
				g.row0.set(a)
			}
			if r == n-1 {
				g.rowLast.set(a)
			}
			if c == 0 {
				g.col0.set(a)
			}
			if c == n-1 {
				g.colLast.set(a)
			}
			g.transpose[a] = uint8(c*n + r)
			g.rowOf[a], g.colOf[a] = uint8(r), uint8(c)
			k := 0
			for _, d := range [6][2]int{{0, -1}, {0, 1}, {-1, 0}, {-1, 1}, {1, 0}, {1, -1}} {
				rr, cc := r+d[0], c+d[1]
				if rr >= 0 && rr < n && cc >= 0 && cc < n {
					g.nbr[a][k] = uint8(rr*n + cc)
					g.nbrSet[a].set(rr*n + cc)
					k++
				}
			}
			g.nnbr[a] = uint8(k)
			switch r {
			case 0:
				g.edgeBits[0][a] = 1
			case n - 1:
				g.edgeBits[0][a] = 2
			}
			switch c {
			case 0:
				g.edgeBits[1][a] = 1
			case n - 1:
				g.edgeBits[1][a] = 2
			}
		}
	}
	g.notCol0 = g.full.andNot(g.col0)
	g.notColLast = g.full.andNot(g.colLast)
	return g, nil
}

// Size returns the board side n.
func (g *Game) Size() int { return g.n }

// Swap reports whether the pie rule is on.
func (g *Game) Swap() bool { return g.swap }

// SwapAction is the id of the swap action (n*n); it is a legal action id
// only when Swap() is true.
func (g *Game) SwapAction() games.Action { return games.Action(g.nn) }

// Cell returns the action id of cell (r, c), 0-based from the top-left.
func (g *Game) Cell(r, c int) games.Action { return games.Action(r*g.n + c) }

// Type implements games.Game.
func (g *Game) Type() games.Type {
	return games.Type{
		Name: "hex", LongName: "Hex",
		Dynamics: games.Sequential, Chance: games.Deterministic,
		Information: games.PerfectInformation, Utility: games.ZeroSum,
		MinPlayers: 2, MaxPlayers: 2,
		MinReturn: -1, MaxReturn: 1,
	}
}

// Spec implements games.Game.
func (g *Game) Spec() string {
	if g.pathHeuristic {
		return fmt.Sprintf("hex:size=%d,swap=%t,heuristic=path", g.n, g.swap)
	}
	return fmt.Sprintf("hex:size=%d,swap=%t", g.n, g.swap)
}

// NumPlayers implements games.Game.
func (g *Game) NumPlayers() int { return 2 }

// NumActions implements games.Game: n*n cells, plus the swap action n*n
// when the pie rule is on.
func (g *Game) NumActions() int {
	if g.swap {
		return g.nn + 1
	}
	return g.nn
}

// MaxGameLength implements games.Game: at most one stone per cell, plus
// the swap (which places no extra stone).
func (g *Game) MaxGameLength() int { return g.NumActions() }

// ObservationShape implements games.Game: [3, n, n], see the package doc.
func (g *Game) ObservationShape() []int { return []int{3, g.n, g.n} }

// NewInitialState implements games.Game.
func (g *Game) NewInitialState() games.State { return g.NewState() }

// NewState is NewInitialState with the concrete type.
func (g *Game) NewState() *State {
	s := &State{g: g, winner: -1}
	s.resetUnionFind()
	return s
}
