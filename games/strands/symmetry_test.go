package strands

import (
	"slices"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

// The rules are the outside truth: every declared symmetry must map random
// games onto games with the same legal moves, observations and results.
func TestSymmetriesFollowTheRules(t *testing.T) {
	names := []string{"rotate60", "rotate120", "rotate180", "rotate240", "rotate300",
		"mirror", "mirror-rotate60", "mirror-rotate120", "mirror-rotate180", "mirror-rotate240", "mirror-rotate300"}
	for _, side := range []int{4, 5, 6} {
		g, err := New(side)
		if err != nil {
			t.Fatal(err)
		}
		gametest.Symmetries(t, g, names, 12, uint64(10*side))
	}
}

// The action maps, with the identity, form a group of 12 distinct
// permutations: closed under composition, rotate60 of order 6 and every
// reflection of order 2. The centre cell is fixed and the corners (printed
// 4 on side 4) go to corners.
func TestSymmetriesFormTheHexagonGroup(t *testing.T) {
	g, _ := New(4)
	syms := g.Symmetries()
	n := g.NumActions()
	perm := func(s *games.Symmetry) []int {
		p := make([]int, n)
		for a := range n {
			p[a] = int(s.Action(games.Action(a)))
		}
		return p
	}
	identity := make([]int, n)
	for a := range identity {
		identity[a] = a
	}
	all := [][]int{identity}
	byName := map[string][]int{}
	for i := range syms {
		p := perm(&syms[i])
		for _, q := range all {
			if slices.Equal(p, q) {
				t.Fatalf("%s repeats another symmetry", syms[i].Name())
			}
		}
		all = append(all, p)
		byName[syms[i].Name()] = p
	}
	compose := func(p, q []int) []int { // p after q
		r := make([]int, n)
		for a := range n {
			r[a] = p[q[a]]
		}
		return r
	}
	for _, p := range all {
		for _, q := range all {
			pq := compose(p, q)
			if !slices.ContainsFunc(all, func(x []int) bool { return slices.Equal(x, pq) }) {
				t.Fatal("the symmetries are not closed under composition")
			}
		}
	}
	r := identity
	for k := 1; k <= 6; k++ {
		r = compose(byName["rotate60"], r)
		if (k == 6) != slices.Equal(r, identity) {
			t.Fatalf("rotate60 to the power %d is the identity: %t", k, slices.Equal(r, identity))
		}
	}
	for name, p := range byName {
		if len(name) >= 6 && name[:6] == "mirror" && !slices.Equal(compose(p, p), identity) {
			t.Errorf("%s is not its own inverse", name)
		}
	}
	b := g.Board()
	centre := b.At(b.Side-1, b.Side-1)
	for _, p := range all {
		if p[centre] != centre {
			t.Fatalf("the centre %d moves to %d", centre, p[centre])
		}
		for c := range n {
			if (b.Label[c] == 4) != (b.Label[p[c]] == 4) {
				t.Fatalf("cell %d (printed %d) maps to %d (printed %d)", c, b.Label[c], p[c], b.Label[p[c]])
			}
		}
	}
}
