package sequence

import (
	"math/bits"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
)

// Phases of a turn.
const (
	phDeal  uint8 = iota // chance: the next card of the deal goes to player (round robin)
	phPlay               // player plays a card, exchanges a dead card, or passes
	phDraw               // chance: player draws after playing; then the turn passes on
	phXDraw              // chance: player draws the replacement of an exchanged dead card
	phOver               // terminal
)

// State is one position of Sequence. All storage is inline (fixed-size
// arrays), so CloneInto is a plain copy and never allocates. States are not
// safe for concurrent use.
//
// Invariants: chips of different players are disjoint and never on a
// corner; locked[p] ⊆ chips[p]; each hand is sorted by kind; for every kind,
// deck + hands + discards = 2 (0 for jacks when the game has none); deckN
// is the deck's total. The deck has no order: every draw is a chance node
// over the remaining cards, weighted by count.
type State struct {
	g         *Game
	chips     [maxPlayers]bitboard
	locked    [maxPlayers]bitboard // chips in a completed sequence (never removable)
	hand      [maxPlayers][maxHand]uint8
	hn        [maxPlayers]uint8 // hand sizes
	deck      [numKinds]uint8   // cards left in the deck per kind
	discard   [numKinds]uint8   // discard pile per kind (public)
	deckN     uint8
	seqs      [maxPlayers]uint8 // completed sequences per player
	phase     uint8
	player    uint8 // player to move; at chance nodes the one who receives the card
	exchanged bool  // the player to move has exchanged a dead card this turn
	passes    uint8 // consecutive pure pass turns
	move      int32
	hash      uint64 // Zobrist hash of everything above but g, deck, deckN and move (see rehash)
}

var (
	_ games.ChanceState = (*State)(nil)
	_ games.InfoState   = (*State)(nil)
	_ games.Resampler   = (*State)(nil)
	_ games.Drawer      = (*State)(nil)
)

// Game implements games.State.
func (s *State) Game() games.Game { return s.g }

// CurrentPlayer implements games.State.
func (s *State) CurrentPlayer() int {
	switch s.phase {
	case phPlay:
		return int(s.player)
	case phOver:
		return games.TerminalPlayer
	}
	return games.ChancePlayer
}

// IsTerminal implements games.State.
func (s *State) IsTerminal() bool { return s.phase == phOver }

// MoveNumber implements games.State.
func (s *State) MoveNumber() int { return int(s.move) }

// Clone implements games.State.
func (s *State) Clone() games.State {
	c := *s
	return &c
}

// CloneInto implements games.State.
func (s *State) CloneInto(dst games.State) { *dst.(*State) = *s }

func (s *State) occupied() bitboard {
	return s.chips[0].or(s.chips[1]).or(s.chips[2])
}

// empty returns the squares a chip may be put on.
func (s *State) empty() bitboard { return allSquares.andNot(corners).andNot(s.occupied()) }

// removable returns the opponent chips p may take with a one-eyed jack.
func (s *State) removable(p int) bitboard {
	locked := s.locked[0].or(s.locked[1]).or(s.locked[2])
	return s.occupied().andNot(s.chips[p]).andNot(locked)
}

// targets returns where card k can be played, and whether k is a dead card
// that may be exchanged now.
func (s *State) targets(k uint8, empty, removable bitboard) (bitboard, bool) {
	switch kindClass(k) {
	case kindTwoEyed:
		return empty, false
	case kindOneEyed:
		return removable, false
	}
	t := faceSquares[k].and(empty)
	return t, t.isEmpty() && s.deckN > 0 && !s.exchanged
}

// Legal implements games.State. Of two equal cards in a hand only the first
// slot is legal (the two would lead to the same state). At chance nodes the
// legal ids are the kinds left in the deck.
func (s *State) Legal(dst games.Mask) {
	dst.Clear()
	switch s.phase {
	case phOver:
		return
	case phPlay:
	default:
		for k, c := range s.deck {
			if c > 0 {
				dst.Set(games.Action(k))
			}
		}
		return
	}
	p := int(s.player)
	empty, rem := s.empty(), s.removable(p)
	any := false
	prev := uint8(255)
	for i := range int(s.hn[p]) {
		k := s.hand[p][i]
		if k == prev {
			continue
		}
		prev = k
		t, ex := s.targets(k, empty, rem)
		base := i * numSquares
		if ex {
			dst.Set(exchangeAction(i))
			any = true
			continue
		}
		if !t.isEmpty() {
			any = true
			setTargets(dst, base, t)
		}
	}
	if !any {
		dst.Set(PassAction)
	}
}

// Apply implements games.State. a must be legal. The hash is updated by
// XOR: the turn fields' key is taken out before the move and put back after
// it; the helpers that change chips, locked chips, sequences, hands and
// discards update their own keys.
func (s *State) Apply(a games.Action) {
	s.hash ^= s.turnKey()
	s.apply(a)
	s.hash ^= s.turnKey()
}

func (s *State) apply(a games.Action) {
	s.move++
	if s.phase != phPlay {
		s.applyChance(uint8(a))
		return
	}
	p := int(s.player)
	if a == PassAction {
		if s.exchanged {
			s.passes = 0
		} else {
			s.passes++
		}
		s.advance()
		return
	}
	slot, sq := int(a)/numSquares, int(a)%numSquares
	k := s.hand[p][slot]
	s.removeSlot(p, slot)
	s.addDiscard(k)
	s.passes = 0
	if sq == 0 { // exchange of a dead card: square a10 is a corner, never a target
		s.phase = phXDraw
		return
	}
	s.exchanged = false
	if kindClass(k) == kindOneEyed {
		for q := range s.g.players {
			if s.chips[q].has(sq) {
				s.chips[q].unset(sq)
				s.hash ^= zChip[q][sq]
			}
		}
	} else {
		s.chips[p].set(sq)
		s.hash ^= zChip[p][sq]
		s.addSequences(p, sq)
		if int(s.seqs[p]) >= s.g.target {
			s.finish()
			return
		}
	}
	if s.deckN > 0 {
		s.phase = phDraw
	} else {
		s.advance()
	}
}

func (s *State) applyChance(k uint8) {
	s.deck[k]--
	s.deckN--
	p := int(s.player)
	s.insertCard(p, k)
	switch s.phase {
	case phDeal:
		total := 0
		for q := range s.g.players {
			total += int(s.hn[q])
		}
		if total == s.g.players*s.g.handSize {
			s.phase, s.player = phPlay, 0
		} else {
			s.player = uint8(total % s.g.players)
		}
	case phDraw:
		s.advance()
	case phXDraw:
		s.phase, s.exchanged = phPlay, true
	}
}

// advance hands the turn to the next player and detects the draws: n pure
// pass turns in a row (nobody can move), or every hand empty.
func (s *State) advance() {
	n := s.g.players
	s.player = uint8((int(s.player) + 1) % n)
	s.exchanged = false
	s.phase = phPlay
	if int(s.passes) >= n {
		s.finish()
		return
	}
	for q := range n {
		if s.hn[q] > 0 {
			return
		}
	}
	s.finish()
}

// finish ends the game; player is reset so that terminal states have one
// canonical form (the notation does not print a player when over).
func (s *State) finish() {
	s.phase, s.player, s.exchanged = phOver, 0, false
}

// addSequences records the sequences completed by p's chip on sq. A
// window of five own chips (corners count for everyone) through sq is a new
// sequence when it shares at most one square with p's locked chips; its
// chips then become locked.
func (s *State) addSequences(p, sq int) {
	b := s.chips[p].or(corners)
	for d := range 4 {
		if b.and(lineAt[d][sq]).count() < 5 {
			continue // fewer than five own squares on the line through sq
		}
		st := fives(b, d).and(windowsAt[d][sq])
		for j, w := range st.words() {
			for w != 0 {
				start := j<<6 + bits.TrailingZeros64(w)
				w &= w - 1
				win := window[d][start]
				if win.and(s.locked[p]).count() <= 1 {
					s.lockWindow(p, win)
				}
			}
		}
	}
}

// lockWindow locks the chips of win (a window of five) for p and counts
// a new sequence, updating the hash.
func (s *State) lockWindow(p int, win bitboard) {
	s.hash ^= xorKeys(win.andNot(corners).andNot(s.locked[p]), &zLocked)
	s.locked[p] = s.locked[p].or(win.andNot(corners))
	s.hash ^= zSeqs[p][s.seqs[p]&7] ^ zSeqs[p][(s.seqs[p]+1)&7]
	s.seqs[p]++
}

// addDiscard puts a card of kind k on the discard pile, updating the hash.
func (s *State) addDiscard(k uint8) {
	s.hash ^= zDiscard[k][s.discard[k]&1]
	s.discard[k]++
}

// insertCard adds k to p's sorted hand, updating the hash: the key of the
// c-th copy (c = 0, 1) goes in.
func (s *State) insertCard(p int, k uint8) {
	h := &s.hand[p]
	i := int(s.hn[p])
	for i > 0 && h[i-1] > k {
		h[i] = h[i-1]
		i--
	}
	c := 0
	if i > 0 && h[i-1] == k {
		c = 1
	}
	s.hash ^= zHand[p][k][c]
	h[i] = k
	s.hn[p]++
}

// removeSlot removes the card in slot from p's hand, updating the hash:
// the key of the last copy of its kind goes out.
func (s *State) removeSlot(p, slot int) {
	n := int(s.hn[p])
	k := s.hand[p][slot]
	c := 0
	if (slot > 0 && s.hand[p][slot-1] == k) || (slot+1 < n && s.hand[p][slot+1] == k) {
		c = 1
	}
	s.hash ^= zHand[p][k][c]
	copy(s.hand[p][slot:n-1], s.hand[p][slot+1:n])
	s.hand[p][n-1] = 0
	s.hn[p]--
}

// Returns implements games.State: +1 for the winner, -1/(n-1) for the
// others; 0 for all on a draw or before the end.
func (s *State) Returns(dst []float64) {
	n := s.g.players
	clear(dst[:n])
	if s.phase != phOver {
		return
	}
	w := s.Winner()
	if w < 0 {
		return
	}
	for q := range n {
		dst[q] = -1 / float64(n-1)
	}
	dst[w] = 1
}

// Winner returns the player who completed the winning number of sequences,
// or -1 (game not over, or drawn).
func (s *State) Winner() int {
	for q := range s.g.players {
		if int(s.seqs[q]) >= s.g.target {
			return q
		}
	}
	return -1
}

// WinningLine implements games.WinningLiner: the winner's chips locked in
// sequences (squares r*10+c, row 0 at the top; corners, which belong to
// everyone, left out), nil unless someone has won.
func (s *State) WinningLine() []int {
	w := s.Winner()
	if w < 0 || s.phase != phOver {
		return nil
	}
	var out []int
	for sq := range numSquares {
		if s.locked[w].has(sq) {
			out = append(out, sq)
		}
	}
	return out
}

// Sequences returns how many sequences player p has completed.
func (s *State) Sequences(p int) int { return int(s.seqs[p]) }

// ChanceOutcomes implements games.ChanceState: one outcome per kind left in
// the deck, with probability count/deck size.
func (s *State) ChanceOutcomes(dst []games.ChanceOutcome) []games.ChanceOutcome {
	if s.phase == phPlay || s.phase == phOver || s.deckN == 0 {
		return dst
	}
	n := float64(s.deckN)
	for k, c := range s.deck {
		if c > 0 {
			dst = append(dst, games.ChanceOutcome{Action: games.Action(k), Prob: float64(c) / n})
		}
	}
	return dst
}

// SampleChance implements games.ChanceState: a card drawn uniformly from
// the deck (kinds weighted by count).
func (s *State) SampleChance(rng *rand.Rand) games.Action {
	r := rng.IntN(int(s.deckN))
	for k, c := range s.deck {
		r -= int(c)
		if r < 0 {
			return games.Action(k)
		}
	}
	return games.NoAction
}

// Hash implements games.State: a Zobrist hash kept up to date by every
// change of the state (O(1), no allocation).
func (s *State) Hash() uint64 { return s.hash }

// turnKey returns the Zobrist key of the turn fields: phase, player, pass
// count and exchange flag.
func (s *State) turnKey() uint64 {
	h := zPhase[s.phase] ^ zPlayer[s.player] ^ zPasses[s.passes&3]
	if s.exchanged {
		h ^= zExchanged
	}
	return h
}

// cardsKey returns the Zobrist key of the hands and discards: for each
// player and kind the keys of the copies held (zHand[p][k][0] for one,
// both for two), for each kind those of the discarded copies. The deck is
// not hashed: deck = 2 - hands - discards for every kind.
func (s *State) cardsKey() uint64 {
	h := uint64(0)
	for p := range s.g.players {
		h ^= s.handKey(p)
	}
	for k, c := range s.discard {
		if c > 0 {
			h ^= zDiscard[k][0]
			if c > 1 {
				h ^= zDiscard[k][1]
			}
		}
	}
	return h
}

// handKey returns the Zobrist key of p's hand.
func (s *State) handKey(p int) uint64 {
	h := uint64(0)
	prev := uint8(255)
	for _, k := range s.hand[p][:s.hn[p]] {
		c := 0
		if k == prev {
			c = 1
		}
		prev = k
		h ^= zHand[p][k][c]
	}
	return h
}

// rehash computes the hash of s from scratch: the turn, cards, chips,
// locked chips and sequence counts. ParseState uses it; the tests check
// that the incremental hash always equals it.
func (s *State) rehash() uint64 {
	h := s.turnKey() ^ s.cardsKey()
	for p := range s.g.players {
		h ^= xorKeys(s.chips[p], &zChip[p]) ^ xorKeys(s.locked[p], &zLocked)
		h ^= zSeqs[p][s.seqs[p]&7]
	}
	return h
}

// setTargets adds base+sq to dst for every square of t.
func setTargets(dst games.Mask, base int, t bitboard) {
	for j, w := range t.words() {
		for w != 0 {
			dst.Set(games.Action(base + j<<6 + bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
}

func xorKeys(b bitboard, keys *[numSquares]uint64) uint64 {
	h := uint64(0)
	for j, w := range b.words() {
		for w != 0 {
			h ^= keys[j<<6+bits.TrailingZeros64(w)]
			w &= w - 1
		}
	}
	return h
}

var (
	zChip      [maxPlayers][numSquares]uint64
	zLocked    [numSquares]uint64
	zHand      [maxPlayers][numKinds][2]uint64
	zDiscard   [numKinds][2]uint64
	zSeqs      [maxPlayers][8]uint64
	zPhase     [5]uint64
	zPlayer    [maxPlayers]uint64
	zPasses    [4]uint64
	zExchanged uint64
)

func init() {
	keys := games.ZobristKeys(0x5e9e0ce, 4096)
	next := func() uint64 { k := keys[0]; keys = keys[1:]; return k }
	for p := range maxPlayers {
		for sq := range numSquares {
			zChip[p][sq] = next()
		}
		for k := range numKinds {
			zHand[p][k] = [2]uint64{next(), next()}
		}
		for i := range 8 {
			zSeqs[p][i] = next()
		}
		zSeqs[p][0] = 0
		zPlayer[p] = next()
	}
	for sq := range numSquares {
		zLocked[sq] = next()
	}
	for k := range numKinds {
		zDiscard[k] = [2]uint64{next(), next()}
	}
	for i := range zPhase {
		zPhase[i] = next()
	}
	for i := range zPasses {
		zPasses[i] = next()
	}
	zExchanged = next()
}
