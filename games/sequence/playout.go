package sequence

import (
	"math/bits"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
)

// PlayRandom plays s to the end with uniformly random legal actions and
// chance draws, like games.RandomPlayout, and returns the number of actions
// applied (chance draws included). It is the specialised fast path for
// playouts and never allocates.
//
// It follows the same distribution as games.RandomPlayout (every legal
// action id equally likely, every card of the deck equally likely) but
// consumes the random stream differently, so the same seed gives a
// different game: it works on a playout (see there), picks the r-th legal
// action in its own order (kinds in bit order, not slot order) and draws
// the r-th card of an unordered list of the deck. The tests check, move by
// move, that every action it takes is legal and that replaying them with
// Apply gives the same state, and that its choices are uniform over Legal.
func (s *State) PlayRandom(rng *rand.Rand) int {
	var pl playout
	pl.load(s)
	n := pl.run(rng, nil, 0)
	pl.store()
	return n
}

// PlayRandomTurns is PlayRandom stopped as soon as turns actions of the
// players have been applied (chance draws do not count, a dead-card
// exchange does; the state reached may be a chance node), or at the end of
// the game if it comes first; it returns the number of actions applied,
// chance draws included. turns <= 0 plays to the end. A search's rollout
// cut after a number of turns (search.Rollout with Turns, study 000's
// eight-turn rollouts) takes it instead of stepping through Legal and
// Apply. It never allocates.
func (s *State) PlayRandomTurns(rng *rand.Rand, turns int) int {
	var pl playout
	pl.load(s)
	n := pl.run(rng, nil, turns)
	pl.store()
	return n
}

// playout is the working form of a State during PlayRandom: the hands as
// kind bit sets, the empty face squares of every kind as two bit sets, the
// deck as a dense unordered list and each player's chips line by line, so
// that counting the legal actions is a few popcounts, a draw is a
// swap-remove and a sequence test is one table lookup per direction. Bit k
// of a kind set is kind k (0..51). The State's chips, locked chips,
// sequences, phase, player and counters stay current; its hands, hand
// sizes, deck counts and discards are stale until store. The State's hash
// is kept current for the chips, locked chips and sequences; its turn and
// card keys are those of the loaded state until store swaps them for the
// current ones. load must start
// from the zero playout. A playout is a stack value of one goroutine.
//
// Invariants: held[p] has the kinds p holds at least once and dup[p] those
// held twice (dup ⊆ held); a1 has the non-jack kinds with at least one
// empty face square and a2 (⊆ a1) those with two; occ is the union of the
// chips; empties = 96 - |occ|; cards[:nCards] lists the deck (each copy
// once, any order); dealt counts the cards in hands; lines[p][l] has bit i
// set when the i-th square of line l (see lineOf) is p's chip or a corner.
type playout struct {
	s       *State
	held    [maxPlayers]uint64
	dup     [maxPlayers]uint64
	a1, a2  uint64
	occ     bitboard
	lines   [maxPlayers][64]uint16 // numLines used; 64 so that a masked index needs no bounds check
	empties int
	nCards  int
	dealt   int
	rnd     [16]uint16 // random bits from rng; rnd[:avail] not used yet
	avail   uint8
	turn0   uint64         // s.turnKey() at load: s.hash still holds it until store
	cards   [104 + 2]uint8 // 2 spare bytes: load writes two entries per kind
}

// Static kind sets and face squares for the playout.
var (
	normalKinds  uint64             // the 48 non-jack kinds
	twoEyedKinds uint64             // JD, JC
	oneEyedKinds uint64             // JS, JH
	faceA, faceB [numKinds]uint8    // the two face squares of a non-jack kind, faceA < faceB
	kindBit      [numSquares]uint64 // 1<<kind shown on the square, 0 on a corner
	// lineOf[sq][d] is the line through sq in direction dirStep[d] (10
	// rows, 10 columns, 19 diagonals, 19 anti-diagonals) and posOf[sq][d]
	// the index of sq on it, counted along dirStep[d]: one step in d is
	// one bit up.
	lineOf, posOf [numSquares][4]uint8
	lineSlot      [numSquares][4]uint16 // lineOf<<4 | posOf
	cornerLines   [64]uint16            // the lines of the four corners
	playSquares   bitboard              // the 96 squares that take chips (not corners)
)

func init() {
	playSquares = allSquares.andNot(corners) // after board.go's init
	for k := range uint8(numKinds) {
		switch kindClass(k) {
		case kindNormal:
			normalKinds |= 1 << k
			if faceSquares[k].count() != 2 {
				panic("sequence: built-in layout shows a card other than twice")
			}
			faceA[k] = uint8(faceSquares[k].nth(0))
			faceB[k] = uint8(faceSquares[k].nth(1))
		case kindTwoEyed:
			twoEyedKinds |= 1 << k
		case kindOneEyed:
			oneEyedKinds |= 1 << k
		}
	}
	for sq := range numSquares {
		if k := squareKind[sq]; k >= 0 {
			kindBit[sq] = 1 << uint(k)
		}
		r, c := sq/10, sq%10
		lineOf[sq] = [4]uint8{uint8(r), uint8(10 + c), uint8(20 + 9 + r - c), uint8(39 + r + c)}
		posOf[sq] = [4]uint8{uint8(c), uint8(r), uint8(min(r, c)), uint8(min(r, 9-c))}
		for d := range 4 {
			lineSlot[sq][d] = uint16(lineOf[sq][d])<<4 | uint16(posOf[sq][d])
		}
	}
	var pl playout
	for _, c := range [...]int{0, 9, 90, 99} {
		pl.setLines(0, c)
	}
	cornerLines = pl.lines[0]
}

// numLines counts the lines of lineOf (<= 64: indexes are masked with 63).
const numLines = 10 + 10 + 19 + 19

// setLines adds sq to p's lines.
func (pl *playout) setLines(p, sq int) {
	l, o := &lineOf[sq], &posOf[sq]
	lines := &pl.lines[p]
	for d := range 4 {
		lines[l[d]&63] |= 1 << (o[d] & 15)
	}
}

// clearLines removes sq from p's lines.
func (pl *playout) clearLines(p, sq int) {
	l, o := &lineOf[sq], &posOf[sq]
	lines := &pl.lines[p]
	for d := range 4 {
		lines[l[d]&63] &^= 1 << (o[d] & 15)
	}
}

// place adds sq to p's lines and records the sequences the chip on sq
// completes, as State.addSequences does: along each direction the nine
// squares around sq (four each way) on p's line give, through runTable,
// the run of p's squares through sq.
func (pl *playout) place(p, sq int) {
	ls, lines := &lineSlot[sq], &pl.lines[p]
	for d := range 4 {
		i, pos := ls[d]>>4&63, ls[d]&15
		v := lines[i] | 1<<pos
		lines[i] = v
		if run := runTable[uint32(v)<<4>>pos&0x1ff]; run != 0 {
			pl.lock(p, sq, d, run)
		}
	}
}

// lock takes the windows of five inside p's run through sq in direction
// d (run from runTable) as State.addSequences does, in its order
// (direction, then start square): a window is a new sequence when it
// shares at most one square with p's locked chips.
func (pl *playout) lock(p, sq, d int, run uint8) {
	s := pl.s
	step := int(dirStep[d])
	back, fwd := int(run&0xf), int(run>>4)
	for start := sq - back*step; start <= sq+(fwd-4)*step; start += step {
		win := window[d][start]
		if win.and(s.locked[p]).count() <= 1 {
			s.lockWindow(p, win)
		}
	}
}

// runTable[w], for the nine squares w around a square (bit 4 the square,
// bits 0..3 the four before it, 5..8 the four after), is back | fwd<<4:
// how many set squares run contiguously before and after bit 4, when
// the run with bit 4 holds at least five squares; 0 otherwise.
var runTable = func() (t [512]uint8) {
	for w := range 512 {
		if w>>4&1 == 0 {
			continue
		}
		back, fwd := 0, 0
		for back < 4 && w>>(3-back)&1 != 0 {
			back++
		}
		for fwd < 4 && w>>(5+fwd)&1 != 0 {
			fwd++
		}
		if back+fwd >= 4 {
			t[w] = uint8(back | fwd<<4)
		}
	}
	return t
}()

// load sets pl up from s.
func (pl *playout) load(s *State) {
	pl.s = s
	pl.turn0 = s.turnKey()
	for p := range s.g.players {
		var h, d uint64
		for _, k := range s.hand[p][:s.hn[p]] {
			b := uint64(1) << k
			d |= h & b
			h |= b
		}
		pl.held[p], pl.dup[p] = h, d
		pl.dealt += int(s.hn[p])
	}
	pl.occ = s.occupied()
	for p := range s.g.players {
		pl.lines[p] = cornerLines
		for i, w := range s.chips[p].words() {
			for ; w != 0; w &= w - 1 {
				pl.setLines(p, i<<6+bits.TrailingZeros64(w))
			}
		}
	}
	pl.empties = playSquares.count() - pl.occ.count()
	pl.a1, pl.a2 = normalKinds, normalKinds
	for i, w := range pl.occ.words() {
		for ; w != 0; w &= w - 1 {
			kb := kindBit[i<<6+bits.TrailingZeros64(w)]
			if pl.a2&kb != 0 {
				pl.a2 &^= kb
			} else {
				pl.a1 &^= kb
			}
		}
	}
	n := 0
	for k, c := range s.deck {
		pl.cards[n], pl.cards[n+1] = uint8(k), uint8(k)
		n += int(c)
	}
	pl.nCards = n
}

// store writes the hands (sorted by kind), hand sizes, deck counts and
// discards back into s. Every card is in the deck, a hand or the discards:
// the discards are the copies of each kind that are in neither.
func (pl *playout) store() {
	s := pl.s
	s.hash ^= pl.turn0 ^ s.cardsKey() // the stale cards of the loaded state
	s.deck = [numKinds]uint8{}
	for _, k := range pl.cards[:pl.nCards] {
		s.deck[k]++
	}
	s.deckN = uint8(pl.nCards)
	copies := [numKinds]uint8{}
	for k := range copies {
		copies[k] = s.deck[k]
		if s.g.jacks || kindClass(uint8(k)) == kindNormal {
			copies[k] -= 2 // negated below
		}
	}
	for p := range s.g.players {
		s.hand[p] = [maxHand]uint8{}
		i := 0
		for h, d := pl.held[p], pl.dup[p]; h != 0; h &= h - 1 {
			k := uint8(bits.TrailingZeros64(h))
			s.hand[p][i] = k
			i++
			copies[k]++
			if d>>k&1 != 0 {
				s.hand[p][i] = k
				i++
				copies[k]++
			}
		}
		s.hn[p] = uint8(i)
	}
	for k, c := range copies {
		s.discard[k] = -c
	}
	s.hash ^= s.cardsKey() ^ s.turnKey()
}

// Moves chosen by the playout.
const (
	mvPlace    = iota // put a chip of the mover on sq (a non-jack card or a two-eyed jack)
	mvRemove          // one-eyed jack: take the chip on sq
	mvExchange        // discard the dead card kind and draw a replacement
	mvPass
)

// move is one playout choice: what, with which card kind, on which square.
type move struct {
	what, kind, sq int
}

// run plays to the end, or with turns > 0 until turns actions of the
// players have been applied, and returns the number of actions applied.
// When rec is not nil every action is appended to it as its games.Action
// id (for the tests).
func (pl *playout) run(rng *rand.Rand, rec *[]games.Action, turns int) int {
	s := pl.s
	n, acts := 0, 0
	for {
		switch s.phase {
		case phPlay:
			m := pl.choose(rng)
			if rec != nil {
				*rec = append(*rec, pl.action(m))
			}
			pl.apply(m)
			if acts++; acts == turns {
				n++
				s.move += int32(n)
				return n
			}
		case phOver:
			s.move += int32(n)
			return n
		default:
			k := pl.draw(rng)
			if rec != nil {
				*rec = append(*rec, games.Action(k))
			}
		}
		n++
	}
}

// draw takes a uniformly random card from the deck, gives it to the
// player at the chance node and moves on as State.applyChance does; it
// returns the card's kind.
func (pl *playout) draw(rng *rand.Rand) uint8 {
	j := pl.intn(rng, pl.nCards)
	k := pl.cards[j]
	pl.nCards--
	pl.cards[j] = pl.cards[pl.nCards]
	s := pl.s
	p := int(s.player)
	b := uint64(1) << (k & 63)
	pl.dup[p] |= pl.held[p] & b
	pl.held[p] |= b
	switch s.phase {
	case phDraw:
		pl.advance()
	case phDeal:
		pl.dealt++
		if pl.dealt == s.g.players*s.g.handSize {
			s.phase, s.player = phPlay, 0
		} else {
			s.player = dealTurn[s.g.players][pl.dealt]
		}
	case phXDraw:
		s.phase, s.exchanged = phPlay, true
	}
	return k
}

// dealTurn[n][t] = t % n: who receives the next card of the deal after t
// cards (a division is slow).
var dealTurn = func() (t [maxPlayers + 1][maxPlayers*maxHand + 1]uint8) {
	for n := 2; n <= maxPlayers; n++ {
		for i := range t[n] {
			t[n][i] = uint8(i % n)
		}
	}
	return t
}()

// choose returns a uniformly random legal move of the player to move: it
// counts the legal action ids by class (non-jack cards with one or two
// empty face squares, two-eyed jacks x empty squares, one-eyed jacks x
// removable chips, dead cards to exchange) and picks the r-th. The common
// case, a hand of live non-jack cards only, takes the short path.
func (pl *playout) choose(rng *rand.Rand) move {
	p := int(pl.s.player)
	h := pl.held[p]
	k1, k2 := h&pl.a1, h&pl.a2 // a1 and a2 hold no jacks
	c1 := bits.OnesCount64(k1)
	if h&^pl.a1 != 0 {
		return pl.chooseAll(rng, p, h, k1, k2, c1) // jacks or dead cards
	}
	total := c1 + bits.OnesCount64(k2)
	if total == 0 {
		return move{what: mvPass}
	}
	r := pl.intn(rng, total)
	if r < c1 { // the first empty face square of a kind
		k := games.SelectBit(k1, r)
		sq := int(faceA[k])
		if pl.occ.has(sq) {
			sq = int(faceB[k])
		}
		return move{mvPlace, k, sq}
	}
	k := games.SelectBit(k2, r-c1) // the second face square of a kind with both empty
	return move{mvPlace, k, int(faceB[k])}
}

// chooseAll is choose for a hand with jacks or dead cards.
func (pl *playout) chooseAll(rng *rand.Rand, p int, h, k1, k2 uint64, c1 int) move {
	s := pl.s
	c2 := bits.OnesCount64(k2)
	total := c1 + c2
	jacks := h &^ normalKinds
	var rem bitboard
	nTwo, nRem := 0, 0
	if jacks != 0 {
		nTwo = bits.OnesCount64(jacks & twoEyedKinds)
		if jacks&oneEyedKinds != 0 {
			rem = pl.removable(p)
			nRem = rem.count()
		}
		total += nTwo*pl.empties + bits.OnesCount64(jacks&oneEyedKinds)*nRem
	}
	var dead uint64
	if pl.nCards > 0 && !s.exchanged {
		dead = h & normalKinds &^ pl.a1
		total += bits.OnesCount64(dead)
	}
	if total == 0 {
		return move{what: mvPass}
	}
	r := pl.intn(rng, total)
	if r < c1 {
		k := games.SelectBit(k1, r)
		sq := int(faceA[k])
		if pl.occ.has(sq) {
			sq = int(faceB[k])
		}
		return move{mvPlace, k, sq}
	}
	if r -= c1; r < c2 {
		k := games.SelectBit(k2, r)
		return move{mvPlace, k, int(faceB[k])}
	}
	r -= c2
	if t := nTwo * pl.empties; r < t {
		k := games.SelectBit(jacks&twoEyedKinds, r/pl.empties)
		return move{mvPlace, k, selectSquare(playSquares.andNot(pl.occ), r%pl.empties)}
	} else {
		r -= t
	}
	if t := bits.OnesCount64(jacks&oneEyedKinds) * nRem; r < t {
		k := games.SelectBit(jacks&oneEyedKinds, r/nRem)
		return move{mvRemove, k, selectSquare(rem, r%nRem)}
	} else {
		r -= t
	}
	return move{mvExchange, games.SelectBit(dead, r), 0}
}

// removable returns the opponent chips p may take with a one-eyed jack.
func (pl *playout) removable(p int) bitboard {
	s := pl.s
	locked := s.locked[0].or(s.locked[1]).or(s.locked[2])
	return pl.occ.andNot(s.chips[p]).andNot(locked)
}

// apply plays m for the player to move, as State.Apply does.
func (pl *playout) apply(m move) {
	s := pl.s
	p := int(s.player)
	if m.what == mvPass {
		if s.exchanged {
			s.passes = 0
		} else {
			s.passes++
		}
		pl.advance()
		return
	}
	k := uint8(m.kind)
	b := uint64(1) << (k & 63)
	if pl.dup[p]&b != 0 {
		pl.dup[p] &^= b
	} else {
		pl.held[p] &^= b
	}
	s.passes = 0
	if m.what == mvExchange {
		s.phase = phXDraw
		return
	}
	s.exchanged = false
	sq := m.sq
	kb := kindBit[sq]
	if m.what == mvRemove {
		for q := range s.chips {
			if s.chips[q].has(sq) {
				s.chips[q].unset(sq)
				s.hash ^= zChip[q][sq]
				pl.clearLines(q, sq)
			}
		}
		pl.occ.unset(sq)
		pl.empties++
		if pl.a1&kb != 0 {
			pl.a2 |= kb
		} else {
			pl.a1 |= kb
		}
	} else {
		s.chips[p].set(sq)
		s.hash ^= zChip[p][sq]
		pl.occ.set(sq)
		pl.empties--
		if pl.a2&kb != 0 {
			pl.a2 &^= kb
		} else {
			pl.a1 &^= kb
		}
		pl.place(p, sq)
		if int(s.seqs[p]) >= s.g.target {
			s.finish()
			return
		}
	}
	if pl.nCards > 0 {
		s.phase = phDraw
	} else {
		pl.advance()
	}
}

// advance is State.advance on the playout's hands.
func (pl *playout) advance() {
	s := pl.s
	n := s.g.players
	s.player++
	if int(s.player) == n {
		s.player = 0
	}
	s.exchanged = false
	s.phase = phPlay
	if int(s.passes) >= n || pl.held[0]|pl.held[1]|pl.held[2] == 0 {
		s.finish()
	}
}

// action returns the games.Action id of m for the player to move: the
// slot of a kind is its first position in the sorted hand.
func (pl *playout) action(m move) games.Action {
	if m.what == mvPass {
		return PassAction
	}
	p := int(pl.s.player)
	below := uint64(1)<<uint(m.kind) - 1
	slot := bits.OnesCount64(pl.held[p]&below) + bits.OnesCount64(pl.dup[p]&below)
	if m.what == mvExchange {
		return exchangeAction(slot)
	}
	return games.Action(slot*numSquares + m.sq)
}

// intn returns a uniformly random int in [0, n), 0 < n < 2^16 (legal
// actions and deck cards are far fewer), from 16 random bits at a time
// (Lemire's multiply-shift with rejection, exact): one rng.Uint64 serves
// four draws, and the bits are fetched four words at a time.
func (pl *playout) intn(rng *rand.Rand, n int) int {
	for {
		if pl.avail == 0 {
			for i := 0; i < len(pl.rnd); i += 4 {
				x := rng.Uint64()
				pl.rnd[i], pl.rnd[i+1], pl.rnd[i+2], pl.rnd[i+3] = uint16(x>>48), uint16(x>>32), uint16(x>>16), uint16(x)
			}
			pl.avail = uint8(len(pl.rnd))
		}
		pl.avail--
		m := uint32(pl.rnd[pl.avail&15]) * uint32(n)
		// Reject when the low half falls below 2^16 mod n (only possible
		// when it is below n, so the division is rarely made).
		if lo := uint16(m); lo >= uint16(n) || lo >= uint16(-n)%uint16(n) {
			return int(m >> 16)
		}
	}
}

// selectSquare returns the r-th (0-based) square of b; r < b.count().
func selectSquare(b bitboard, r int) int {
	if c := bits.OnesCount64(b.lo); r >= c {
		return 64 + games.SelectBit(b.hi, r-c)
	}
	return games.SelectBit(b.lo, r)
}
