package multi

import (
	"context"
	"fmt"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/strands"
)

// checkSequence reports whether acts, played from root, is a legal
// sequence of whole turns: every action legal where it is played, the
// game not over and fewer than turns turns begun before each action, and
// after the last one the game over or exactly turns turns begun.
func checkSequence(root games.State, acts []games.Action, turns int) error {
	s := root.Clone()
	t0 := turnOf(s)
	for i, a := range acts {
		if s.IsTerminal() || turnOf(s)-t0 >= turns {
			return fmt.Errorf("action %d (%s) after the end of the sequence", i, s.ActionString(a))
		}
		if err := games.ApplyChecked(s, a); err != nil {
			return fmt.Errorf("action %d: %v", i, err)
		}
	}
	if !s.IsTerminal() && turnOf(s)-t0 != turns {
		return fmt.Errorf("%d actions end inside turn %d (want %d turns)", len(acts), turnOf(s)-t0, turns)
	}
	return nil
}

// randomStates returns n states reached by uniformly random play from
// the start of g, some in the middle of a turn, none terminal.
func randomStates(g games.Game, n int, seed uint64) []games.State {
	rng := games.NewRand(seed)
	mask := games.NewMask(g.NumActions())
	var out []games.State
	for len(out) < n {
		s := g.NewInitialState()
		stop := rng.IntN(g.MaxGameLength())
		for i := 0; i < stop && !s.IsTerminal(); i++ {
			s.Legal(mask)
			s.Apply(mask.Random(rng))
		}
		if !s.IsTerminal() {
			out = append(out, s)
		}
	}
	return out
}

var repairGames = []string{"strands:size=4", "strands:size=5", "connect4d", "connect4d:d=3"}

// Crossover and mutation with repair always give legal whole turns
// (property test over random states, mid-turn ones included).
func TestOEPOperatorsLegal(t *testing.T) {
	for _, gs := range repairGames {
		g := games.MustNew(gs)
		for k, s := range randomStates(g, 60, 3) {
			o, err := NewOEP(g, nil, Budget{Sims: 1}, uint64(k))
			if err != nil {
				t.Fatal(err)
			}
			s.CloneInto(o.root)
			o.turn, o.mover = turnOf(s), s.CurrentPlayer()
			born := 0
			var pop []*genome
			for range 6 {
				x := o.newGenome(&born)
				o.randomTurn(x)
				pop = append(pop, x)
			}
			for i := range 200 {
				x := o.newGenome(&born)
				o.crossover(x, pop[o.rng.IntN(len(pop))], pop[o.rng.IntN(len(pop))])
				if err := checkSequence(s, x.acts, 1); err != nil {
					t.Fatalf("%s %s: crossover %d: %v", gs, s, i, err)
				}
				o.mutate(x)
				if err := checkSequence(s, x.acts, 1); err != nil {
					t.Fatalf("%s %s: mutation %d: %v", gs, s, i, err)
				}
				pop[o.rng.IntN(len(pop))] = x
			}
		}
	}
}

// Every mutation of an EMCTS tree, chained down random paths, is repaired
// into a legal sequence of Horizon turns (or to the end of the game).
func TestEMCTSMutationsLegal(t *testing.T) {
	for _, gs := range repairGames {
		g := games.MustNew(gs)
		for k, s := range randomStates(g, 40, 4) {
			for _, h := range []int{1, 2} {
				e, err := NewEMCTS(g, nil, Budget{Sims: 1}, uint64(k))
				if err != nil {
					t.Fatal(err)
				}
				e.Horizon = h
				s.CloneInto(e.root0)
				e.turn = turnOf(s)
				e.genes = e.initSequence(context.Background(), e.genes[:0])
				ni := e.newNode(0, len(e.genes))
				if err := checkSequence(s, e.genome(ni), h); err != nil {
					t.Fatalf("%s %s: L0: %v", gs, s, err)
				}
				for step := range 30 {
					e.expand(ni)
					nd := e.nodes[ni]
					if nd.cnt == 0 {
						break
					}
					ei := nd.first + int32(e.rng.IntN(int(nd.cnt)))
					c := e.mutate(ni, ei)
					ed := e.edges[ei]
					got := e.genome(c)
					if err := checkSequence(s, got, h); err != nil {
						t.Fatalf("%s %s horizon %d step %d: mutation (%d, %d): %v", gs, s, h, step, ed.pos, ed.act, err)
					}
					if ed.pos >= 0 && got[ed.pos] != ed.act {
						t.Fatalf("%s: mutation (%d, %d) gave action %d there", gs, ed.pos, ed.act, got[ed.pos])
					}
					ni = c
				}
			}
		}
	}
}
