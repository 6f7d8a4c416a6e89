package sushigo

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// hashFromScratch recomputes the Zobrist hash of c field by field,
// independently of core.rehash and of the incremental updates (only the
// key tables are shared; hands and deck use zCards, not the pair
// table): the hand p holds is keyed by the seat it was
// dealt to, (p + turn) mod np.
func hashFromScratch(c *core) uint64 {
	np := int(c.np)
	h := zRound[c.round] ^ zTurn[c.turn] ^ zDealt[c.dealt] ^ zNext[c.next]
	for p := range np {
		o := (p + int(c.turn)) % np
		for k := range NumCards {
			h ^= bits.RotateLeft64(zCards[k][c.hands[p][k]], handRot[o]) ^ zTable[p][k][c.table[p][k]]
		}
		for i, n := range c.onWasabi[p] {
			h ^= zWasabi[p][i][n]
		}
		h ^= zPudding[p][c.pudding[p]] ^ zScore[p][uint8(c.score[p])]
		if a := c.pending[p]; a != games.NoAction {
			h ^= zPending[p][a+1]
		}
	}
	for k, n := range c.deck { // removed cards: FullDeck - deck - hands - tables
		n = FullDeck[k] - n
		for p := range np {
			n -= c.hands[p][k] + c.table[p][k]
		}
		h ^= bits.RotateLeft64(zCards[k][n], removedRot)
	}
	return h
}

func checkHash(t *testing.T, s *State, what string) {
	t.Helper()
	if got, want := s.Hash(), hashFromScratch(&s.c); got != want {
		t.Fatalf("%s: incremental hash %016x, from scratch %016x in %s", what, got, want, s)
	}
}

// TestHashIncremental plays random games of both views and checks at
// every step that the incremental hash equals the recomputed one: after
// Apply and ApplyJoint, after fast playouts from the current position that
// stop after a random number of tricks (mid-round, at a round's end or at
// the game's end) and in Resample's output for every player.
func TestHashIncremental(t *testing.T) {
	n := 10
	if testing.Short() {
		n = 3
	}
	for _, seq := range []bool{false, true} {
		for np := 2; np <= MaxPlayers; np++ {
			g := New(np, seq)
			t.Run(fmt.Sprintf("players=%d,seq=%v", np, seq), func(t *testing.T) {
				rng := games.NewRand(uint64(np))
				m := games.NewMask(NumActions)
				joint := make([]games.Action, np)
				tmp := &State{}
				for range n {
					s := g.NewInitialState().(*State)
					checkHash(t, s, "initial state")
					for step := 0; !s.IsTerminal(); step++ {
						if step%3 == 0 {
							fast := s.Clone().(*State)
							fast.RandomPlayoutTricks(rng, rng.IntN(2*HandSize(np)))
							checkHash(t, fast, "after RandomPlayoutTricks")
							for p := range np {
								s.Resample(p, rng, tmp)
								checkHash(t, tmp, "Resample output")
							}
						}
						switch p := s.CurrentPlayer(); p {
						case games.ChancePlayer:
							s.Apply(s.SampleChance(rng))
						case games.SimultaneousPlayer:
							for q := range np {
								s.LegalFor(q, m)
								joint[q] = m.Random(rng)
							}
							s.ApplyJoint(joint)
						default:
							s.Legal(m)
							s.Apply(m.Random(rng))
						}
						checkHash(t, s, "after a move")
					}
				}
			})
		}
	}
}
