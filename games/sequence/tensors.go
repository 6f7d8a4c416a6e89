package sequence

import (
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
)

// instance returns the one-hot index of the copy-th copy (0 or 1) of kind k:
// 2*faceIndex+copy for the 96 non-jack cards, 96+2*jackIndex+copy for the
// jacks JS, JH, JD, JC.
func instance(k uint8, copy int) int {
	if f := faceIndex[k]; f >= 0 {
		return 2*int(f) + copy
	}
	return 96 + 2*int(jackIndex[k]) + copy
}

func (s *State) checkPlayer(p int) {
	if p < 0 || p >= s.g.players {
		panic("sequence: player out of range")
	}
}

// writeChipPlanes writes own / opponents / empty planes (3*100 floats) from
// p's point of view. The wild corners count for everyone: 1 in the own and
// opponent planes, 0 in the empty plane.
func (s *State) writeChipPlanes(p int, dst []float32) {
	own := s.chips[p]
	opp := s.occupied().andNot(own)
	empty := s.empty()
	for sq := range numSquares {
		c := corners.has(sq)
		dst[sq] = b2f(c || own.has(sq))
		dst[numSquares+sq] = b2f(c || opp.has(sq))
		dst[2*numSquares+sq] = b2f(empty.has(sq))
	}
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

// Observation implements games.State. The tensor is [3+C, 10, 10] with C
// the number of card instances (96, or 104 with jacks); see doc.go. It shows
// the board and player's own hand only.
func (s *State) Observation(player int, dst []float32) {
	s.checkPlayer(player)
	n := s.g.numPlanes() * numSquares
	dst = dst[:n]
	clear(dst)
	s.writeChipPlanes(player, dst)
	empty, rem := s.empty(), s.removable(player)
	prev := uint8(255)
	for _, k := range s.hand[player][:s.hn[player]] {
		cp := 0
		if k == prev {
			cp = 1
		}
		prev = k
		plane := dst[(3+instance(k, cp))*numSquares:][:numSquares]
		t, _ := s.targets(k, empty, rem)
		if kindClass(k) == kindNormal {
			faceSquares[k].forEach(func(sq int) { plane[sq] = 0.5 })
		}
		t.forEach(func(sq int) { plane[sq] = 1 })
	}
}

// InformationState implements games.InfoState; see doc.go for the layout.
// Beyond the observation it holds the public history that matters: the
// discard pile, locked chips, hand sizes, sequence counts, deck size and
// turn state.
func (s *State) InformationState(player int, dst []float32) {
	s.checkPlayer(player)
	g := s.g
	dst = dst[:g.infoSize()]
	s.Observation(player, dst)
	o := g.numPlanes() * numSquares
	writeFacePlane(dst[o:])
	o += numSquares
	lockedOpp := bitboard{}
	for q := range g.players {
		if q != player {
			lockedOpp = lockedOpp.or(s.locked[q])
		}
	}
	for sq := range numSquares {
		dst[o+sq] = b2f(s.locked[player].has(sq))
		dst[o+numSquares+sq] = b2f(lockedOpp.has(sq))
	}
	o += 2 * numSquares
	o += s.writeHand(player, dst[o:])
	o += s.writeRankCounts(player, dst[o:])
	for k, c := range s.discard {
		dst[o+k] = float32(c) / 2
	}
	o += numKinds
	for i := range maxPlayers {
		q := (player + i) % g.players
		v, w := float32(0), float32(0)
		if i < g.players {
			v = float32(s.hn[q]) / float32(g.handSize)
			w = float32(s.seqs[q]) / 2
		}
		dst[o+i], dst[o+maxPlayers+i] = v, w
	}
	o += 2 * maxPlayers
	dst[o] = float32(s.deckN) / float32(g.nCards)
	dst[o+1] = b2f(s.exchanged)
	dst[o+2] = float32(s.passes) / float32(g.players)
	o += 3
	for i := range 4 {
		dst[o+i] = 0
	}
	switch s.phase {
	case phPlay:
		dst[o+(int(s.player)-player+g.players)%g.players] = 1
	case phOver:
	default:
		dst[o+3] = 1
	}
}

// writeFacePlane writes the static face plane: (faceIndex+1)/48 on each
// square, 0 on the corners.
func writeFacePlane(dst []float32) {
	for sq := range numSquares {
		dst[sq] = 0
		if k := squareKind[sq]; k >= 0 {
			dst[sq] = float32(faceIndex[k]+1) / 48
		}
	}
}

// writeHand writes the one-hot of p's hand over card instances (a kind
// held once sets copy 0, held twice both copies) and returns its length.
func (s *State) writeHand(p int, dst []float32) int {
	n := s.g.nInst
	clear(dst[:n])
	prev := uint8(255)
	for _, k := range s.hand[p][:s.hn[p]] {
		cp := 0
		if k == prev {
			cp = 1
		}
		prev = k
		dst[instance(k, cp)] = 1
	}
	return n
}

// writeRankCounts writes the 13 rank counts of the cards p has seen (the
// discard pile and p's hand), each divided by 8, and returns 13.
func (s *State) writeRankCounts(p int, dst []float32) int {
	var cnt [numRanks]int
	for k, c := range s.discard {
		cnt[kindRank(uint8(k))] += int(c)
	}
	for _, k := range s.hand[p][:s.hn[p]] {
		cnt[kindRank(k)]++
	}
	for r, c := range cnt {
		dst[r] = float32(c) / 8
	}
	return numRanks
}

// Features writes the study's flat encoding for player into dst
// (Game.FeatureSize floats): the 3 chip planes (own, opponents, empty), the
// static face plane, the hand one-hot over card instances (96 without
// jacks) and the 13 rank counts of seen cards.
func (s *State) Features(player int, dst []float32) {
	s.checkPlayer(player)
	s.writeChipPlanes(player, dst)
	writeFacePlane(dst[3*numSquares:])
	o := 4 * numSquares
	o += s.writeHand(player, dst[o:])
	s.writeRankCounts(player, dst[o:])
}

// Resample implements games.Resampler: dst becomes a copy of s in which
// the cards player cannot see (the deck and the other hands) are dealt
// again uniformly at random, keeping every hand's size. The deck has no
// order, so dealing the other hands fixes the rest. It never allocates.
func (s *State) Resample(player int, rng *rand.Rand, dst games.State) {
	d := dst.(*State)
	*d = *s
	if player < 0 || player >= s.g.players {
		return
	}
	// The unseen cards: the other hands go back to the deck counts, and
	// the pool lists those counts in kind order (two writes per kind, kept
	// when there are that many: no branch). The pool, and so the deal
	// drawn from rng, depends only on what player has seen, not on where
	// the unseen cards are: two states player cannot tell apart resample
	// alike (the web UI's analyses rely on it to show nothing hidden).
	for q := range s.g.players {
		if q == player {
			continue
		}
		for _, k := range s.hand[q][:s.hn[q]] {
			d.deck[k]++
		}
	}
	var pool [104 + 2]uint8
	n := 0
	for k, c := range d.deck {
		pool[n], pool[n+1] = uint8(k), uint8(k)
		n += int(c)
	}
	i := 0
	for q := range s.g.players {
		if q == player {
			continue
		}
		d.hash ^= s.handKey(q)
		d.hn[q] = 0
		d.hand[q] = [maxHand]uint8{}
		for range s.hn[q] {
			j := i + rng.IntN(n-i)
			k := pool[j]
			pool[j] = pool[i]
			d.insertCard(q, k)
			d.deck[k]--
			i++
		}
	}
}
