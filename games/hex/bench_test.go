package hex

import (
	"fmt"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/cputime"
)

var benchSizes = []int{7, 11, 13}

// reportCPU reports the process CPU time per iteration since cpu0.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	if cpu := cputime.Now() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// reportRate reports games per second of wall time ("games/s") and of
// process CPU time since cpu0 ("cpu-games/s"). The second figure is what an
// unloaded core would give; it matters on a machine shared with other jobs.
func reportRate(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
	if cpu := cputime.Now() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "cpu-games/s")
	}
}

// BenchmarkPlayout plays uniformly random games move by move through the
// generic API (games.RandomPlayout: Legal, Mask.Random, Apply).
func BenchmarkPlayout(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("size=%d", n), func(b *testing.B) {
			g, _ := New(n, false)
			init := g.NewState()
			s := g.NewState()
			m := games.NewMask(g.NumActions())
			rng := games.NewRand(1)
			b.ReportAllocs()
			cpu0 := cputime.Now()
			for b.Loop() {
				*s = *init
				games.RandomPlayout(s, rng, m, nil)
			}
			reportRate(b, cpu0)
		})
	}
}

// BenchmarkPlayoutFast is the specialised playout (random fill + one flood
// fill) from the initial position.
func BenchmarkPlayoutFast(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("size=%d", n), func(b *testing.B) {
			g, _ := New(n, false)
			s := g.NewState()
			rng := games.NewRand(1)
			b.ReportAllocs()
			wins := 0
			cpu0 := cputime.Now()
			for b.Loop() {
				wins += 1 - s.RandomPlayoutWinner(rng)
			}
			reportRate(b, cpu0)
		})
	}
}

// benchGame returns a mid-game state of an n x n board (n moves played).
func benchGame(n int) (*Game, *State) {
	g, _ := New(n, false)
	s := g.NewState()
	rng := games.NewRand(2)
	m := games.NewMask(g.NumActions())
	for range n {
		s.Legal(m)
		s.Apply(m.Random(rng))
	}
	return g, s
}

func BenchmarkLegal(b *testing.B) {
	g, s := benchGame(11)
	m := games.NewMask(g.NumActions())
	b.ReportAllocs()
	defer reportCPU(b, cputime.Now())
	for b.Loop() {
		s.Legal(m)
	}
}

func BenchmarkClone(b *testing.B) {
	g, s := benchGame(11)
	dst := g.NewState()
	b.ReportAllocs()
	defer reportCPU(b, cputime.Now())
	for b.Loop() {
		s.CloneInto(dst)
	}
}

// BenchmarkApply times one Apply (with its win test) on 11x11, restoring
// the state by a struct copy every time (subtract BenchmarkClone).
func BenchmarkApply(b *testing.B) {
	g, s := benchGame(11)
	m := games.NewMask(g.NumActions())
	s.Legal(m)
	moves := m.AppendTo(nil)
	dst := g.NewState()
	b.ReportAllocs()
	defer reportCPU(b, cputime.Now())
	i := 0
	for b.Loop() {
		*dst = *s
		dst.Apply(moves[i])
		i++
		if i == len(moves) {
			i = 0
		}
	}
}

// BenchmarkWinTest compares ways to decide full random 11x11 boards: the
// bit-parallel flood fill over the action-id bitset (Black, then White if
// needed), the row sweep used by the fast playout (conversion included),
// and building the union-find stone by stone (what Apply does
// incrementally over a game).
func BenchmarkWinTest(b *testing.B) {
	g, _ := New(11, false)
	rng := games.NewRand(4)
	boards := make([][2]board, 64)
	for i := range boards {
		for a := range g.nn {
			boards[i][rng.IntN(2)].set(a)
		}
	}
	b.Run("flood", func(b *testing.B) {
		defer reportCPU(b, cputime.Now())
		i := 0
		for b.Loop() {
			g.winnerOf(&boards[i&63])
			i++
		}
	})
	b.Run("rows", func(b *testing.B) {
		defer reportCPU(b, cputime.Now())
		i := 0
		for b.Loop() {
			r := g.toRows(&boards[i&63][0])
			connectsTopBottom(&r, g.n)
			i++
		}
	})
	b.Run("unionfind", func(b *testing.B) {
		defer reportCPU(b, cputime.Now())
		s := g.NewState()
		i := 0
		for b.Loop() {
			s.resetUnionFind()
			s.stones = [2]board{}
			for a := range g.nn {
				if boards[i&63][0].has(a) {
					s.stones[0].set(a)
					s.connect(0, a)
				}
			}
			i++
		}
	})
}

func BenchmarkHexDist(b *testing.B) {
	for _, n := range []int{5, 9, 13} {
		b.Run(fmt.Sprintf("size=%d", n), func(b *testing.B) {
			g, s := benchGame(n)
			h := NewHexDist(g, 1)
			b.ReportAllocs()
			defer reportCPU(b, cputime.Now())
			for b.Loop() {
				if _, err := h.Act(b.Context(), s, s.CurrentPlayer()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkApplySequence applies a fixed random order of all cells on
// 11x11 until the game ends, with no legality work: the cost per move of
// placing a stone and testing for a win ("cpu-ns/move"). "unionfind" is
// Apply; "flood" places the stone in the bitset and runs the bit-parallel
// flood fill for the mover instead, the alternative Apply could use.
func BenchmarkApplySequence(b *testing.B) {
	g, _ := New(11, false)
	rng := games.NewRand(3)
	orders := make([][]games.Action, 16)
	for i := range orders {
		orders[i] = make([]games.Action, g.nn)
		for j, k := range rng.Perm(g.nn) {
			orders[i][j] = games.Action(k)
		}
	}
	edges := [2][2]board{{g.row0, g.rowLast}, {g.col0, g.colLast}}
	for _, mode := range []string{"unionfind", "flood"} {
		b.Run(mode, func(b *testing.B) {
			init := g.NewState()
			s := g.NewState()
			moves := 0
			cpu0 := cputime.Now()
			i := 0
			for b.Loop() {
				*s = *init
				for k, a := range orders[i&15] {
					moves++
					if mode == "unionfind" {
						s.Apply(a)
						if s.winner >= 0 {
							break
						}
						continue
					}
					p := k & 1
					s.stones[p].set(int(a))
					if g.connects(s.stones[p], edges[p][0], edges[p][1]) {
						break
					}
				}
				i++
			}
			b.ReportMetric(float64((cputime.Now()-cpu0).Nanoseconds())/float64(moves), "cpu-ns/move")
			b.ReportMetric(float64(moves)/float64(b.N), "moves/game")
		})
	}
}

// BenchmarkHeuristicValues scores every legal move of a position after n
// random moves, one HeuristicValue call per move ("each") or one
// HeuristicValues call ("batch"): the work of one step of a heuristic
// rollout (search's rollout=heuristic).
func BenchmarkHeuristicValues(b *testing.B) {
	for _, n := range []int{7, 11} {
		g, s := benchGame(n)
		m := games.NewMask(g.NumActions())
		s.Legal(m)
		dst := make([]float64, g.NumActions())
		p := s.CurrentPlayer()
		b.Run(fmt.Sprintf("size=%d/each", n), func(b *testing.B) {
			defer reportCPU(b, cputime.Now())
			for b.Loop() {
				for a := range m.All() {
					dst[a] = s.HeuristicValue(p, a)
				}
			}
		})
		b.Run(fmt.Sprintf("size=%d/batch", n), func(b *testing.B) {
			defer reportCPU(b, cputime.Now())
			for b.Loop() {
				s.HeuristicValues(p, m, dst)
			}
		})
	}
}
