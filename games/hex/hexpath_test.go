package hex

import (
	"context"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
)

// refPathDistance is the shortest connection by Dijkstra's algorithm over
// the cells (0-1 weights: an empty cell costs 1, an own stone 0, opponent
// stones block; the search starts on every cell of the first edge).
func refPathDistance(g *Game, stones *[2]board, p int) int {
	const inf = 1 << 30
	cost := func(c int) int {
		switch {
		case stones[p].has(c):
			return 0
		case stones[1-p].has(c):
			return inf
		}
		return 1
	}
	onA := func(c int) bool { return (p == 0 && g.rowOf[c] == 0) || (p == 1 && g.colOf[c] == 0) }
	onB := func(c int) bool {
		return (p == 0 && int(g.rowOf[c]) == g.n-1) || (p == 1 && int(g.colOf[c]) == g.n-1)
	}
	dist := make([]int, g.nn)
	done := make([]bool, g.nn)
	for c := range dist {
		dist[c] = inf
		if onA(c) && cost(c) < inf {
			dist[c] = cost(c)
		}
	}
	best := inf
	for {
		u := -1
		for c := range dist {
			if !done[c] && dist[c] < inf && (u < 0 || dist[c] < dist[u]) {
				u = c
			}
		}
		if u < 0 {
			break
		}
		done[u] = true
		if onB(u) {
			best = min(best, dist[u])
		}
		for _, v := range g.nbr[u][:g.nnbr[u]] {
			if c := cost(int(v)); c < inf && dist[u]+c < dist[v] {
				dist[v] = dist[u] + c
			}
		}
	}
	if best == inf {
		return Far
	}
	return best
}

// PathDistance (bit-parallel layers) equals Dijkstra's algorithm cell by
// cell on positions along random games of every size, for both players.
func TestPathDistanceIsDijkstra(t *testing.T) {
	for n := MinSize; n <= MaxSize; n++ {
		g, err := New(n, false)
		if err != nil {
			t.Fatal(err)
		}
		rng := games.NewRand(uint64(200 + n))
		m := games.NewMask(g.NumActions())
		for range 3 {
			s := g.NewState()
			for {
				for p := range 2 {
					if got, want := g.PathDistance(&s.stones, p), refPathDistance(g, &s.stones, p); got != want {
						t.Fatalf("%s %q player %d: PathDistance %d, Dijkstra %d", g.Spec(), s.String(), p, got, want)
					}
				}
				if s.IsTerminal() {
					break
				}
				s.Legal(m)
				s.Apply(m.Random(rng))
			}
		}
	}
}

// Hand-worked distances on 3x3 (Black joins top and bottom, White left and
// right).
func TestPathDistanceHandWorked(t *testing.T) {
	g := mustGame(t, "hex:size=3")
	for _, c := range []struct {
		moves        string
		black, white int
	}{
		{"", 3, 3},
		{"b2", 2, 3},    // the centre saves Black a cell; White goes round it
		{"b2 a2", 2, 2}, // White a2-b1-c1
		// Black b1-b2 needs a3 or b3; White's a2 is cut off above, so
		// a3-b3 and c2 or c3: three cells.
		{"b2 a2 b1", 1, 3},
		{"b2 a2 b1 b3 a3", 0, Far}, // Black a3 joins b2 to the bottom row and cuts White off
	} {
		s := mustParse(t, g, c.moves)
		if got := g.PathDistance(&s.stones, 0); got != c.black {
			t.Errorf("%q: Black distance %d, want %d", c.moves, got, c.black)
		}
		if got := g.PathDistance(&s.stones, 1); got != c.white {
			t.Errorf("%q: White distance %d, want %d", c.moves, got, c.white)
		}
	}
}

// hexpath takes a win at once, plays the same move every time with
// ties=first, and is built by its spec (options checked).
func TestHexPathAgent(t *testing.T) {
	g := mustGame(t, "hex:size=3")
	s := mustParse(t, g, "a1 b1 a2 b2") // a3 completes column a
	for seed := range uint64(5) {
		a, err := NewHexPath(g, false, seed).Act(context.Background(), s, 0)
		if err != nil || s.ActionString(a) != "a3" {
			t.Errorf("seed %d: %s %v, want a3", seed, s.ActionString(a), err)
		}
	}
	g7 := mustGame(t, "hex:size=7")
	first, err := agent.New(g7, "hexpath:ties=first", agent.Env{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a0, _ := first.Act(context.Background(), g7.NewState(), 0)
	seen := map[games.Action]bool{}
	for seed := range uint64(8) {
		f, _ := agent.New(g7, "hexpath:ties=first", agent.Env{Seed: seed})
		a, _ := f.Act(context.Background(), g7.NewState(), 0)
		if a != a0 {
			t.Errorf("ties=first, seed %d: first move %s, seed 1 played %s", seed, g7.ActionString(a), g7.ActionString(a0))
		}
		r, _ := agent.New(g7, "hexpath", agent.Env{Seed: seed})
		b, _ := r.Act(context.Background(), g7.NewState(), 0)
		seen[b] = true
	}
	if len(seen) < 2 {
		t.Errorf("ties=random: the same first move for 8 seeds")
	}
	if _, err := agent.New(g7, "hexpath:ties=last", agent.Env{Seed: 1}); err == nil {
		t.Error("hexpath:ties=last accepted")
	}
}

// With heuristic=path the states' heuristic is hexpath's score (the
// opponent's shortest connection minus the mover's after the move, in
// empty cells), one action at a time and in a batch; the option survives
// the game's spec.
func TestPathHeuristicOption(t *testing.T) {
	gg, err := games.New("hex:size=6,heuristic=path")
	if err != nil {
		t.Fatal(err)
	}
	g := gg.(*Game)
	if again, err := games.New(g.Spec()); err != nil || again.Spec() != g.Spec() || g.Spec() != "hex:size=6,swap=false,heuristic=path" {
		t.Fatalf("spec %q does not round-trip: %v", g.Spec(), err)
	}
	if _, err := games.New("hex:size=6,heuristic=dijkstra"); err == nil {
		t.Error("heuristic=dijkstra accepted")
	}
	plain := mustGame(t, "hex:size=6")
	rng := games.NewRand(4)
	m := games.NewMask(g.NumActions())
	dst := make([]float64, g.NumActions())
	differ := false
	s := g.NewState()
	for !s.IsTerminal() {
		p := s.CurrentPlayer()
		s.Legal(m)
		s.HeuristicValues(p, m, dst)
		ps, err := plain.ParseState(s.String())
		if err != nil {
			t.Fatal(err)
		}
		for a := range m.All() {
			after := s.stones
			after[p].set(int(a))
			want := float64(winScore)
			if own := g.PathDistance(&after, p); own > 0 {
				want = float64(g.PathDistance(&after, 1-p) - own)
			}
			if got := s.HeuristicValue(p, a); got != want || dst[a] != want {
				t.Fatalf("%q %s: HeuristicValue %v, HeuristicValues %v, want %v", s.String(), s.ActionString(a), got, dst[a], want)
			}
			if ps.(*State).HeuristicValue(p, a) != want {
				differ = true
			}
		}
		s.Apply(m.Random(rng))
	}
	if !differ {
		t.Error("heuristic=path scores every move of a game as the two-distance heuristic does")
	}
}
