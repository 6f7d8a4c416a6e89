package sequence

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games"
)

// String implements games.State. The notation holds the full state, hidden
// cards included, in seven space-separated fields:
//
//	BOARD PHASE h=HANDS d=DISCARDS s=SEQUENCES p=PASSES m=MOVE
//
// BOARD is 10 rows of 10 characters joined by '/', top row first: '*' a
// corner, '.' empty, 'a' 'b' 'c' a chip of player 0 1 2, 'A' 'B' 'C' such a
// chip locked in a completed sequence. PHASE is "deal", "play:P" (player P
// to move), "xplay:P" (P exchanged a dead card this turn), "draw:P" (P draws
// after playing), "xdraw:P" (P draws the replacement of a dead card) or
// "over". HANDS lists each player's cards sorted, comma-separated, players
// separated by ';'. DISCARDS is the sorted discard pile or '-'. SEQUENCES
// and the consecutive pass count follow. The deck is not listed: it is
// every card not in a hand or the discard pile, and it has no order (each
// draw is a chance node).
//
// Example: "*........*/........../.../*........* play:0 h=AS,2S;3D d=- s=0,0 p=0 m=14".
func (s *State) String() string {
	var b strings.Builder
	b.Grow(256)
	for sq := range numSquares {
		if sq > 0 && sq%10 == 0 {
			b.WriteByte('/')
		}
		b.WriteByte(s.squareChar(sq))
	}
	b.WriteByte(' ')
	b.WriteString(s.phaseName())
	s.writeRest(&b)
	return b.String()
}

func (s *State) phaseName() string {
	var ph string
	switch s.phase {
	case phDeal:
		return "deal"
	case phOver:
		return "over"
	case phPlay:
		ph = "play"
		if s.exchanged {
			ph = "xplay"
		}
	case phDraw:
		ph = "draw"
	default:
		ph = "xdraw"
	}
	return ph + ":" + strconv.Itoa(int(s.player))
}

func (s *State) writeRest(b *strings.Builder) {
	b.WriteString(" h=")
	for p := range s.g.players {
		if p > 0 {
			b.WriteByte(';')
		}
		for i, k := range s.hand[p][:s.hn[p]] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(cardName(k))
		}
	}
	b.WriteString(" d=")
	n := 0
	for k, c := range s.discard {
		for range c {
			if n > 0 {
				b.WriteByte(',')
			}
			b.WriteString(cardName(uint8(k)))
			n++
		}
	}
	if n == 0 {
		b.WriteByte('-')
	}
	b.WriteString(" s=")
	for p := range s.g.players {
		if p > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(s.seqs[p])))
	}
	fmt.Fprintf(b, " p=%d m=%d", s.passes, s.move)
}

func (s *State) squareChar(sq int) byte {
	if corners.has(sq) {
		return '*'
	}
	for p := range s.g.players {
		if s.chips[p].has(sq) {
			if s.locked[p].has(sq) {
				return byte('A' + p)
			}
			return byte('a' + p)
		}
	}
	return '.'
}

// ParseState implements games.Game; it inverts State.String and rejects
// notation that breaks the state's invariants.
func (g *Game) ParseState(notation string) (games.State, error) {
	s, err := g.parseState(notation)
	if err != nil {
		return nil, fmt.Errorf("sequence: bad notation %q: %w", notation, err)
	}
	return s, nil
}

func (g *Game) parseState(notation string) (*State, error) {
	f := strings.Fields(notation)
	if len(f) != 7 {
		return nil, fmt.Errorf("want 7 space-separated fields (board phase h= d= s= p= m=), got %d", len(f))
	}
	s := &State{g: g}
	// Board.
	rows := strings.Split(f[0], "/")
	if len(rows) != 10 {
		return nil, fmt.Errorf("board: want 10 rows separated by '/', got %d", len(rows))
	}
	for r, row := range rows {
		if len(row) != 10 {
			return nil, fmt.Errorf("board row %d: want 10 characters, got %q", r+1, row)
		}
		for c := range 10 {
			sq, ch := r*10+c, row[c]
			if corners.has(sq) {
				if ch != '*' {
					return nil, fmt.Errorf("board: corner %s must be '*', got %q", squareName(sq), ch)
				}
				continue
			}
			switch {
			case ch == '.':
			case ch >= 'a' && int(ch-'a') < g.players:
				s.chips[ch-'a'].set(sq)
			case ch >= 'A' && int(ch-'A') < g.players:
				s.chips[ch-'A'].set(sq)
				s.locked[ch-'A'].set(sq)
			default:
				return nil, fmt.Errorf("board: square %s: bad character %q (want . or a chip letter for %d players)", squareName(sq), ch, g.players)
			}
		}
	}
	// Phase.
	ph, pl, hasPl := strings.Cut(f[1], ":")
	switch ph {
	case "deal", "over":
		if hasPl {
			return nil, fmt.Errorf("phase %q takes no player", f[1])
		}
		s.phase = map[string]uint8{"deal": phDeal, "over": phOver}[ph]
	case "play", "xplay", "draw", "xdraw":
		p, err := strconv.Atoi(pl)
		if !hasPl || err != nil || p < 0 || p >= g.players {
			return nil, fmt.Errorf("phase %q: want %s:P with P in 0..%d", f[1], ph, g.players-1)
		}
		s.player = uint8(p)
		s.phase = map[string]uint8{"play": phPlay, "xplay": phPlay, "draw": phDraw, "xdraw": phXDraw}[ph]
		s.exchanged = ph == "xplay"
	default:
		return nil, fmt.Errorf("unknown phase %q (want deal, play:P, xplay:P, draw:P, xdraw:P or over)", f[1])
	}
	// Hands.
	hs, ok := strings.CutPrefix(f[2], "h=")
	if !ok {
		return nil, fmt.Errorf("third field %q must start with h=", f[2])
	}
	parts := strings.Split(hs, ";")
	if len(parts) != g.players {
		return nil, fmt.Errorf("hands: want %d hands separated by ';', got %d", g.players, len(parts))
	}
	var used [numKinds]int
	for p, part := range parts {
		if part == "" {
			continue
		}
		cards := strings.Split(part, ",")
		if len(cards) > g.handSize {
			return nil, fmt.Errorf("hand of player %d has %d cards, more than %d", p, len(cards), g.handSize)
		}
		for _, c := range cards {
			k, err := g.card(c)
			if err != nil {
				return nil, fmt.Errorf("hand of player %d: %w", p, err)
			}
			s.insertCard(p, k)
			used[k]++
		}
	}
	// Discards.
	ds, ok := strings.CutPrefix(f[3], "d=")
	if !ok {
		return nil, fmt.Errorf("fourth field %q must start with d=", f[3])
	}
	if ds != "-" {
		for _, c := range strings.Split(ds, ",") {
			k, err := g.card(c)
			if err != nil {
				return nil, fmt.Errorf("discards: %w", err)
			}
			s.discard[k]++
			used[k]++
		}
	}
	for k := range uint8(numKinds) {
		if used[k] > 2 {
			return nil, fmt.Errorf("card %s appears %d times (two decks hold 2)", cardName(k), used[k])
		}
		if g.jacks || kindClass(k) == kindNormal {
			s.deck[k] = uint8(2 - used[k])
			s.deckN += s.deck[k]
		}
	}
	// Sequences, passes, move number.
	ss, ok := strings.CutPrefix(f[4], "s=")
	if !ok {
		return nil, fmt.Errorf("fifth field %q must start with s=", f[4])
	}
	sp := strings.Split(ss, ",")
	if len(sp) != g.players {
		return nil, fmt.Errorf("sequences: want %d counts, got %q", g.players, ss)
	}
	for p, v := range sp {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 7 {
			return nil, fmt.Errorf("sequences of player %d: want 0..7, got %q", p, v)
		}
		s.seqs[p] = uint8(n)
		if (n == 0) != s.locked[p].isEmpty() {
			return nil, fmt.Errorf("player %d: %d sequences but %d locked chips", p, n, s.locked[p].count())
		}
	}
	ps, ok := strings.CutPrefix(f[5], "p=")
	n, err := strconv.Atoi(ps)
	if !ok || err != nil || n < 0 || n > g.players || (n == g.players && s.phase != phOver) {
		return nil, fmt.Errorf("pass count %q: want p=N with N in 0..%d (%d only when over)", f[5], g.players-1, g.players)
	}
	s.passes = uint8(n)
	ms, ok := strings.CutPrefix(f[6], "m=")
	n, err = strconv.Atoi(ms)
	if !ok || err != nil || n < 0 || n > g.MaxGameLength() {
		return nil, fmt.Errorf("move number %q: want m=N with N in 0..%d", f[6], g.MaxGameLength())
	}
	s.move = int32(n)
	if err := s.checkPhase(); err != nil { // sets the player at chance nodes
		return s, err
	}
	s.hash = s.rehash()
	return s, nil
}

// checkPhase validates the phase against the rest of the state.
func (s *State) checkPhase() error {
	g := s.g
	total := 0
	for p := range g.players {
		total += int(s.hn[p])
	}
	if s.phase != phOver && s.Winner() >= 0 {
		return fmt.Errorf("player %d has won but the phase is not over", s.Winner())
	}
	switch s.phase {
	case phDeal:
		if total >= g.players*g.handSize {
			return fmt.Errorf("deal phase with every hand full")
		}
		for p := range g.players {
			want := total / g.players
			if p < total%g.players {
				want++
			}
			if int(s.hn[p]) != want {
				return fmt.Errorf("deal phase: player %d holds %d cards, want %d after %d dealt", p, s.hn[p], want, total)
			}
		}
		s.player = uint8(total % g.players)
	case phDraw, phXDraw:
		if s.deckN == 0 {
			return fmt.Errorf("draw phase with an empty deck")
		}
		if int(s.hn[s.player]) >= g.handSize {
			return fmt.Errorf("draw phase but player %d's hand is full", s.player)
		}
	}
	return nil
}

func (g *Game) card(c string) (uint8, error) {
	k, ok := parseCard(c)
	if !ok {
		return 0, fmt.Errorf("bad card %q (want rank A,2..10,J,Q,K and suit S,H,D,C, e.g. 10H)", c)
	}
	if !g.jacks && kindClass(k) != kindNormal {
		return 0, fmt.Errorf("card %s: this variant has no jacks", c)
	}
	return k, nil
}

// ActionString implements games.State. At chance nodes an action is the
// card drawn ("AS"). A player's action is "CARD@SQUARE" (play the card on
// the square; for a one-eyed jack, remove the chip there), "CARD@dead"
// (exchange a dead card), or "pass". When the slot is empty the card is
// written "slotN".
func (s *State) ActionString(a games.Action) string {
	if a < 0 || int(a) >= NumActions {
		return "#" + strconv.Itoa(int(a))
	}
	if s.phase != phPlay {
		if a < numKinds && s.phase != phOver {
			return cardName(uint8(a))
		}
		return "#" + strconv.Itoa(int(a))
	}
	if a == PassAction {
		return "pass"
	}
	slot, sq := int(a)/numSquares, int(a)%numSquares
	c := "slot" + strconv.Itoa(slot)
	if slot < int(s.hn[s.player]) {
		c = cardName(s.hand[s.player][slot])
	}
	if sq == 0 {
		return c + "@dead"
	}
	return c + "@" + squareName(sq)
}

// ParseAction implements games.State. It accepts ActionString's forms
// (case-insensitive, "T" for ten), "slotN@SQUARE", and "#ID" for a raw id.
// A card names the first slot holding it.
func (s *State) ParseAction(str string) (games.Action, error) {
	t := strings.TrimSpace(str)
	if id, ok := strings.CutPrefix(t, "#"); ok {
		n, err := strconv.Atoi(id)
		if err != nil || n < 0 || n >= NumActions {
			return games.NoAction, fmt.Errorf("action %q: want #ID with ID in 0..%d", str, NumActions-1)
		}
		return games.Action(n), nil
	}
	switch s.phase {
	case phOver:
		return games.NoAction, fmt.Errorf("action %q: the game is over", str)
	case phPlay:
	default:
		k, ok := parseCard(t)
		if !ok {
			return games.NoAction, fmt.Errorf("action %q: at a chance node an action is a card such as AS or 10H", str)
		}
		return games.Action(k), nil
	}
	if strings.EqualFold(t, "pass") {
		return PassAction, nil
	}
	cs, sqs, ok := strings.Cut(t, "@")
	if !ok {
		return games.NoAction, fmt.Errorf("action %q: want CARD@SQUARE (e.g. AS@c4), CARD@dead, slotN@SQUARE or pass", str)
	}
	slot := -1
	if n, ok := strings.CutPrefix(strings.ToLower(cs), "slot"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 || v >= maxHand {
			return games.NoAction, fmt.Errorf("action %q: slot must be 0..%d", str, maxHand-1)
		}
		slot = v
	} else {
		k, ok := parseCard(cs)
		if !ok {
			return games.NoAction, fmt.Errorf("action %q: bad card %q", str, cs)
		}
		p := s.player
		for i, h := range s.hand[p][:s.hn[p]] {
			if h == k {
				slot = i
				break
			}
		}
		if slot < 0 {
			return games.NoAction, fmt.Errorf("action %q: player %d does not hold %s", str, p, cardName(k))
		}
	}
	if strings.EqualFold(sqs, "dead") {
		return exchangeAction(slot), nil
	}
	sq, ok := parseSquare(sqs)
	if !ok {
		return games.NoAction, fmt.Errorf("action %q: bad square %q (want a1..j10)", str, sqs)
	}
	if corners.has(sq) {
		return games.NoAction, fmt.Errorf("action %q: %s is a wild corner; no card is played there", str, sqs)
	}
	return games.Action(slot*numSquares + sq), nil
}

// Draw implements games.Drawer: the board with faces on empty squares and
// chips as letters (capitals locked), then the hands visible to viewer (-1:
// all hands).
func (s *State) Draw(viewer int) string {
	var b strings.Builder
	for r := range 10 {
		fmt.Fprintf(&b, "%2d ", 10-r)
		for c := range 10 {
			sq := r*10 + c
			ch := s.squareChar(sq)
			switch ch {
			case '.':
				fmt.Fprintf(&b, " %3s", cardName(uint8(squareKind[sq])))
			case '*':
				b.WriteString("   *")
			default:
				fmt.Fprintf(&b, "   %c", ch)
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString("    ")
	for c := range 10 {
		fmt.Fprintf(&b, "   %c", 'a'+c)
	}
	b.WriteByte('\n')
	for p := range s.g.players {
		fmt.Fprintf(&b, "player %d (%c): %d sequences, ", p, 'a'+p, s.seqs[p])
		if viewer < 0 || viewer == p {
			b.WriteString("hand")
			for _, k := range s.hand[p][:s.hn[p]] {
				b.WriteString(" " + cardName(k))
			}
		} else {
			fmt.Fprintf(&b, "%d cards hidden", s.hn[p])
		}
		b.WriteByte('\n')
	}
	b.WriteString(s.status())
	b.WriteByte('\n')
	return b.String()
}

// status is the last line of Draw: the deck, the discards and who is to
// play (or the result).
func (s *State) status() string {
	nd := 0
	for _, c := range s.discard {
		nd += int(c)
	}
	head := fmt.Sprintf("deck %d, discards %d, ", s.deckN, nd)
	switch {
	case s.phase == phOver && s.Winner() >= 0:
		return head + fmt.Sprintf("player %d wins", s.Winner())
	case s.phase == phOver:
		return head + "draw"
	case s.phase == phPlay:
		return head + fmt.Sprintf("player %d to play", s.player)
	default:
		return head + fmt.Sprintf("card to player %d", s.player)
	}
}
