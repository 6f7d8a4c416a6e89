package perft

import (
	"fmt"

	"github.com/canopy-go/canopy/games"
)

// PositionKeyer is implemented by states that can name their position by an
// exact 64-bit key: two states have the same key if and only if they are the
// same position (same future, whatever the move history). Distinct prefers
// it to String, which for some games (Connect Four) is a move history.
type PositionKeyer interface {
	PositionKey() uint64
}

// Check reports whether perft applies to g: sequential games only (chance
// nodes count each outcome as a branch).
func Check(g games.Game) error {
	if g.Type().Dynamics != games.Sequential {
		return fmt.Errorf("perft: %s is a simultaneous-move game; perft counts sequences of single moves", g.Spec())
	}
	return nil
}

// Count returns, for ply 0..depth, the number of action sequences of
// exactly that many plies from s (s itself is not modified). A finished game
// is not extended: a sequence that ends the game at ply k is counted at ply
// k and at no deeper ply. At chance nodes every outcome counts as one
// branch. The game must be sequential (see Check).
//
// It walks depth-first with Undo when the state implements games.Undoer,
// otherwise with CloneInto into a stack of states allocated once; the last
// ply is counted from the legal mask without applying its moves.
func Count(s games.State, depth int) []uint64 {
	if depth < 0 {
		return nil
	}
	counts := make([]uint64, depth+1)
	g := s.Game()
	masks := make([]games.Mask, depth+1)
	for i := range masks {
		masks[i] = games.NewMask(g.NumActions())
	}
	root := s.Clone()
	if u, ok := root.(games.Undoer); ok {
		countUndo(u, 0, depth, counts, masks)
		return counts
	}
	stack := make([]games.State, depth+1)
	stack[0] = root
	for i := 1; i <= depth; i++ {
		stack[i] = g.NewInitialState()
		root.CloneInto(stack[i]) // warm dst so the walk never allocates
	}
	countClone(stack, 0, depth, counts, masks)
	return counts
}

func countUndo(s games.Undoer, ply, depth int, counts []uint64, masks []games.Mask) {
	counts[ply]++
	if ply == depth || s.IsTerminal() {
		return
	}
	m := masks[ply]
	s.Legal(m)
	if ply+1 == depth {
		counts[depth] += uint64(m.Count())
		return
	}
	for a := range m.All() {
		s.Apply(a)
		countUndo(s, ply+1, depth, counts, masks)
		s.Undo(a)
	}
}

func countClone(stack []games.State, ply, depth int, counts []uint64, masks []games.Mask) {
	s := stack[ply]
	counts[ply]++
	if ply == depth || s.IsTerminal() {
		return
	}
	m := masks[ply]
	s.Legal(m)
	if ply+1 == depth {
		counts[depth] += uint64(m.Count())
		return
	}
	child := stack[ply+1]
	for a := range m.All() {
		s.CloneInto(child)
		child.Apply(a)
		countClone(stack, ply+1, depth, counts, masks)
	}
}

// Split is Distinct's result with the terminal positions broken out.
type Split struct {
	// Total[k] is the number of distinct positions after k plies.
	Total []uint64
	// Terminal[k] counts those of Total[k] where the game is over.
	Terminal []uint64
}

// Distinct returns, for ply 0..depth, the number of distinct positions
// reachable from s in exactly that many plies (finished games are not
// extended). Positions are told apart by PositionKeyer when s implements
// it, otherwise by the full-state notation String(), never by Hash. s is
// not modified. Memory grows with the number of positions (a set per ply).
func Distinct(g games.Game, s games.State, depth int) []uint64 {
	return DistinctSplit(g, s, depth).Total
}

// DistinctSplit is Distinct with the terminal counts.
//
// It walks depth-first and stops at any position already seen at the same
// ply (its subtree has been counted), so it visits each distinct position
// once.
func DistinctSplit(g games.Game, s games.State, depth int) Split {
	if depth < 0 {
		return Split{}
	}
	w := &distinctWalk{
		depth: depth,
		split: Split{Total: make([]uint64, depth+1), Terminal: make([]uint64, depth+1)},
		masks: make([]games.Mask, depth+1),
		stack: make([]games.State, depth+1),
	}
	_, w.keyed = s.(PositionKeyer)
	if w.keyed {
		w.keys = make([]map[uint64]struct{}, depth+1)
		for i := range w.keys {
			w.keys[i] = map[uint64]struct{}{}
		}
	} else {
		w.strs = make([]map[string]struct{}, depth+1)
		for i := range w.strs {
			w.strs[i] = map[string]struct{}{}
		}
	}
	for i := range w.masks {
		w.masks[i] = games.NewMask(g.NumActions())
		w.stack[i] = g.NewInitialState()
		s.CloneInto(w.stack[i])
	}
	w.walk(0)
	return w.split
}

type distinctWalk struct {
	depth int
	split Split
	masks []games.Mask
	stack []games.State
	keyed bool
	keys  []map[uint64]struct{}
	strs  []map[string]struct{}
}

// seen records the position at ply and reports whether it was known.
func (w *distinctWalk) seen(s games.State, ply int) bool {
	if w.keyed {
		k := s.(PositionKeyer).PositionKey()
		if _, ok := w.keys[ply][k]; ok {
			return true
		}
		w.keys[ply][k] = struct{}{}
		return false
	}
	k := s.String()
	if _, ok := w.strs[ply][k]; ok {
		return true
	}
	w.strs[ply][k] = struct{}{}
	return false
}

func (w *distinctWalk) walk(ply int) {
	s := w.stack[ply]
	if w.seen(s, ply) {
		return
	}
	w.split.Total[ply]++
	if s.IsTerminal() {
		w.split.Terminal[ply]++
		return
	}
	if ply == w.depth {
		return
	}
	m := w.masks[ply]
	s.Legal(m)
	child := w.stack[ply+1]
	for a := range m.All() {
		s.CloneInto(child)
		child.Apply(a)
		w.walk(ply + 1)
	}
}
