package hex

import (
	"fmt"
	"slices"

	"github.com/canopy-go/canopy/games"
)

// zobrist holds one key per (player, cell) and, last, the side-to-move key
// (XORed in while player 1 is to move). Fixed seed: hashes are stable.
var zobrist = games.ZobristKeys(0x4845_5821_0000_0001, 2*maxCells+1)

const sideKey = 2 * maxCells

// State is a Hex position. It holds no pointers besides its game, so
// CloneInto is one struct copy. Not safe for concurrent use.
//
// Invariants: stones[0] and stones[1] are disjoint subsets of g.full;
// hist[:moves] is the action sequence from the initial state; parent is a
// union-find forest over the stones (ids 0..n*n-1; empty cells are
// singletons) in which two stones share a root iff a chain of stones of
// their colour joins them; for each root r, flags[r] says which of its
// owner's edges the group touches (bit 0: top or left, bit 1: bottom or
// right; entries of non-roots are stale); winner is -1 until a player
// connects their edges.
type State struct {
	g      *Game
	stones [2]board
	hash   uint64
	moves  int16
	winner int8
	parent [256]uint8 // n*n used; 256 entries let uint8 indices skip bounds checks
	flags  [256]uint8 // likewise
	hist   [maxCells + 1]uint8
}

func (s *State) resetUnionFind() {
	for i := range s.g.nn {
		s.parent[i] = uint8(i)
	}
}

// find returns the root of x with path halving.
func (s *State) find(x uint8) uint8 {
	p := &s.parent
	for p[x] != x {
		p[x] = p[p[x]]
		x = p[x]
	}
	return x
}

// Game implements games.State.
func (s *State) Game() games.Game { return s.g }

// CurrentPlayer implements games.State.
func (s *State) CurrentPlayer() int {
	if s.winner >= 0 {
		return games.TerminalPlayer
	}
	return int(s.moves & 1)
}

// IsTerminal implements games.State.
func (s *State) IsTerminal() bool { return s.winner >= 0 }

// Winner returns the winning player, or -1 while the game goes on.
func (s *State) Winner() int { return int(s.winner) }

// MoveNumber implements games.State.
func (s *State) MoveNumber() int { return int(s.moves) }

// Hash implements games.State.
func (s *State) Hash() uint64 { return s.hash }

// Stone returns the owner of cell (r, c): 0, 1, or -1 when empty.
func (s *State) Stone(r, c int) int {
	a := r*s.g.n + c
	switch {
	case s.stones[0].has(a):
		return 0
	case s.stones[1].has(a):
		return 1
	}
	return -1
}

// WinningLine implements games.WinningLiner: a shortest chain of the
// winner's stones from one of their edges to the other (observation
// indices r*n+c), nil before the end.
func (s *State) WinningLine() []int {
	if s.winner < 0 {
		return nil
	}
	g, p := s.g, int(s.winner)
	own := &s.stones[p]
	from := make([]int, g.nn)
	for i := range from {
		from[i] = -2 // unseen
	}
	var queue []int
	for a := range g.nn {
		if own.has(a) && g.edgeBits[p][a]&1 != 0 {
			from[a] = -1
			queue = append(queue, a)
		}
	}
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		if g.edgeBits[p][a]&2 != 0 {
			var out []int
			for ; a >= 0; a = from[a] {
				out = append(out, a)
			}
			slices.Sort(out)
			return out
		}
		for _, b := range g.nbr[a][:g.nnbr[a]] {
			if own.has(int(b)) && from[b] == -2 {
				from[b] = a
				queue = append(queue, int(b))
			}
		}
	}
	return nil // unreachable: the winner's group joins both edges
}

// canSwap reports whether the swap action is legal now.
func (s *State) canSwap() bool { return s.g.swap && s.moves == 1 && s.winner < 0 }

// Legal implements games.State.
func (s *State) Legal(dst games.Mask) {
	if s.winner >= 0 {
		dst.Clear()
		return
	}
	g := s.g
	for i := range dst {
		dst[i] = g.full[i] &^ (s.stones[0][i] | s.stones[1][i])
	}
	if s.canSwap() {
		dst.Set(games.Action(g.nn))
	}
}

// Apply implements games.State. a must be legal.
func (s *State) Apply(a games.Action) {
	g := s.g
	p := int(s.moves & 1)
	s.hist[s.moves] = uint8(a)
	s.moves++
	s.hash ^= zobrist[sideKey]
	if int(a) == g.nn {
		s.applySwap()
		return
	}
	cell := int(a)
	s.stones[p].set(cell)
	s.hash ^= zobrist[p*maxCells+cell]
	s.connect(p, cell)
}

// connect joins the new stone of player p at cell (a singleton in the
// union-find) with its neighbours, merges their edge flags into the new
// root and records a win when the group touches both edges. Only the new
// stone's group can have become winning.
func (s *State) connect(p, cell int) {
	g := s.g
	own := &s.stones[p]
	par := &s.parent
	fl := &s.flags
	root := uint8(cell)
	f := g.edgeBits[p][cell]
	for _, b := range g.nbr[cell][:g.nnbr[cell]] {
		if own.has(int(b)) {
			if rb := s.find(b); rb != root {
				par[root] = rb
				root = rb
				f |= fl[rb]
			}
		}
	}
	fl[root] = f
	if f == 3 {
		s.winner = int8(p)
	}
}

// applySwap replaces Black's only stone at (r, c) by a White stone at
// (c, r). The side-to-move key has already been toggled.
func (s *State) applySwap() {
	first := int(s.hist[0])
	t := int(s.g.transpose[first])
	s.stones[0].unset(first)
	s.hash ^= zobrist[first]
	s.resetUnionFind()
	s.stones[1].set(t)
	s.hash ^= zobrist[maxCells+t]
	s.connect(1, t)
}

// Clone implements games.State.
func (s *State) Clone() games.State {
	c := *s
	return &c
}

// CloneInto implements games.State. dst must be a *State of the same game.
func (s *State) CloneInto(dst games.State) { *dst.(*State) = *s }

// Returns implements games.State: +1 for the winner, -1 for the loser,
// zeros before the end.
func (s *State) Returns(dst []float64) {
	dst[0], dst[1] = 0, 0
	if s.winner >= 0 {
		dst[s.winner], dst[1-s.winner] = 1, -1
	}
}

// Observation implements games.State; see the package doc for the planes.
func (s *State) Observation(player int, dst []float32) {
	if player != 0 && player != 1 {
		panic(fmt.Sprintf("hex: Observation for player %d, want 0 or 1", player))
	}
	nn := s.g.nn
	own, opp := s.stones[player], s.stones[1-player]
	side := float32(0)
	if player == 0 {
		side = 1
	}
	_ = dst[3*nn-1]
	for a := range nn {
		dst[a], dst[nn+a] = 0, 0
		if own.has(a) {
			dst[a] = 1
		} else if opp.has(a) {
			dst[nn+a] = 1
		}
		dst[2*nn+a] = side
	}
}
