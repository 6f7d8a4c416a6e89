package sequence

import (
	"testing"

	"github.com/canopy-go/canopy/games"
)

// hashFromScratch recomputes the Zobrist hash of s field by field, square
// by square and kind by kind, independently of State.rehash and of the
// incremental updates (the key tables are the only thing shared).
func hashFromScratch(s *State) uint64 {
	h := zPhase[s.phase] ^ zPlayer[s.player] ^ zPasses[s.passes&3]
	if s.exchanged {
		h ^= zExchanged
	}
	for p := range s.g.players {
		for sq := range numSquares {
			if s.chips[p].has(sq) {
				h ^= zChip[p][sq]
			}
			if s.locked[p].has(sq) {
				h ^= zLocked[sq]
			}
		}
		var count [numKinds]int
		for _, k := range s.hand[p][:s.hn[p]] {
			count[k]++
		}
		for k, c := range count {
			for i := range c {
				h ^= zHand[p][k][i]
			}
		}
		h ^= zSeqs[p][s.seqs[p]&7]
	}
	for k, c := range s.discard {
		for i := range int(c) {
			h ^= zDiscard[k][i]
		}
	}
	return h
}

func checkHash(t *testing.T, s *State, what string) {
	t.Helper()
	if got, want := s.Hash(), hashFromScratch(s); got != want {
		t.Fatalf("%s: incremental hash %016x, from scratch %016x in %s", what, got, want, s)
	}
}

// TestHashIncremental plays random games and checks at every step that
// the incremental hash equals the recomputed one: after Apply (chance
// draws included), after a fast playout from the current position (which
// writes its end state back), after a fast random choice (which must leave
// the state alone) and in Resample's output for every player.
func TestHashIncremental(t *testing.T) {
	n := 20
	if testing.Short() || raceEnabled {
		n = 4
	}
	for _, sp := range playoutSpecs {
		t.Run(sp, func(t *testing.T) {
			g := games.MustNew(sp).(*Game)
			rng := games.NewRand(1)
			m := games.NewMask(NumActions)
			tmp := &State{}
			for range n {
				s := g.NewInitialState().(*State)
				checkHash(t, s, "initial state")
				for step := 0; !s.IsTerminal(); step++ {
					if step%7 == 0 {
						fast := s.Clone().(*State)
						fast.PlayRandom(rng)
						checkHash(t, fast, "after PlayRandom")
						for p := range g.players {
							s.Resample(p, rng, tmp)
							checkHash(t, tmp, "Resample output")
						}
					}
					var a games.Action
					if s.CurrentPlayer() == games.ChancePlayer {
						a = s.SampleChance(rng)
					} else {
						h := s.Hash()
						a = s.randomAction(rng)
						if s.Hash() != h {
							t.Fatalf("randomAction changed the hash of %s", s)
						}
						s.Legal(m)
						if !m.Has(a) {
							t.Fatalf("randomAction chose illegal %d in %s", a, s)
						}
					}
					s.Apply(a)
					checkHash(t, s, "after Apply")
				}
			}
		})
	}
}
