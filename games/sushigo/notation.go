package sushigo

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games"
)

// State notation (one line, fields separated by single spaces):
//
//	round=R hands=H0/H1/... table=T0/T1/... pudding=P0,P1,... score=S0,S1,... deck=D [pending=A0,A1,...]
//
// R is 1..3 or "over". Hands, tables and the deck are multisets of one-letter
// codes in Card order, "-" when empty: T tempura, S sashimi, D dumpling,
// 1/2/3 maki, W wasabi, E egg, N salmon, Q squid, P pudding, C chopsticks.
// On a table, W is an open wasabi, and a nigiri lying on a wasabi is written
// in lower case (e, n, q) and stands for both cards. hands[p] is the hand
// player p holds now; table[p] the cards in front of p this round (puddings
// of this round included); pudding the puddings of completed rounds; score
// the points of completed rounds (pudding points included at the end).
// pending appears in the sequential view only: the choices made so far in
// the current trick, "-" for players still to choose.
//
// The phase is derived: while the tables are empty and fewer than
// players*handsize cards are in the hands, cards are being dealt (card d of
// the round to player d mod players); otherwise every table holds the
// number of tricks played and every hand handsize minus that.

var lowerNigiri = [3]byte{'e', 'n', 'q'}

func appendCounts(b []byte, k *Counts, w *[3]uint8) []byte {
	start := len(b)
	for c := range NumCards {
		n := int(k[c])
		switch {
		case w != nil && Card(c) == Wasabi:
			n -= int(w[0]) + int(w[1]) + int(w[2])
		case w != nil && nigiriValue(Card(c)) > 0:
			n -= int(w[c-int(Egg)])
		}
		for range n {
			b = append(b, cardLetters[c])
		}
	}
	if w != nil {
		for i, n := range w {
			for range n {
				b = append(b, lowerNigiri[i])
			}
		}
	}
	if len(b) == start {
		b = append(b, '-')
	}
	return b
}

// actionText is the text of a player action (not a dealt card).
func actionText(a games.Action) string {
	if a < 0 || a >= NumActions {
		return fmt.Sprintf("action(%d)", a)
	}
	if !actChop[a] {
		return cardNames[a]
	}
	return "chop:" + cardNames[actFirst[a]] + "+" + cardNames[actSecond[a]]
}

// String implements games.State.
func (s *State) String() string {
	c := &s.c
	np := int(c.np)
	b := make([]byte, 0, 256)
	b = append(b, "round="...)
	if c.over() {
		b = append(b, "over"...)
	} else {
		b = strconv.AppendInt(b, int64(c.round)+1, 10)
	}
	b = append(b, " hands="...)
	for p := range np {
		if p > 0 {
			b = append(b, '/')
		}
		b = appendCounts(b, &c.hands[p], nil)
	}
	b = append(b, " table="...)
	for p := range np {
		if p > 0 {
			b = append(b, '/')
		}
		b = appendCounts(b, &c.table[p], &c.onWasabi[p])
	}
	b = append(b, " pudding="...)
	for p := range np {
		if p > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(c.pudding[p]), 10)
	}
	b = append(b, " score="...)
	for p := range np {
		if p > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(c.score[p]), 10)
	}
	b = append(b, " deck="...)
	b = appendCounts(b, &c.deck, nil)
	if s.g.seq {
		b = append(b, " pending="...)
		for p := range np {
			if p > 0 {
				b = append(b, ',')
			}
			if a := c.pending[p]; a == games.NoAction {
				b = append(b, '-')
			} else {
				b = append(b, actionText(a)...)
			}
		}
	}
	return string(b)
}

func parseCounts(s string, table bool) (Counts, [3]uint8, error) {
	var k Counts
	var w [3]uint8
	if s == "-" {
		return k, w, nil
	}
	if s == "" || len(s) > 120 {
		return k, w, fmt.Errorf("card list %q: want letters from TSD123WENQPC (or - for none)", s)
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		found := false
		for c, l := range cardLetters {
			if l == ch {
				k[c]++
				found = true
			}
		}
		if !found && table {
			for j, l := range lowerNigiri {
				if l == ch {
					k[Egg+Card(j)]++
					k[Wasabi]++
					w[j]++
					found = true
				}
			}
		}
		if !found {
			return k, w, fmt.Errorf("card list %q: unknown card letter %q (want TSD123WENQPC%s)", s, ch, map[bool]string{true: " or e/n/q for nigiri on wasabi"}[table])
		}
	}
	return k, w, nil
}

func splitN(v string, sep string, n int, what string) ([]string, error) {
	parts := strings.Split(v, sep)
	if len(parts) != n {
		return nil, fmt.Errorf("%s %q: want %d entries separated by %q, got %d", what, v, n, sep, len(parts))
	}
	return parts, nil
}

// ParseState implements games.Game.
func (g *Game) ParseState(notation string) (games.State, error) {
	st, err := g.parseState(notation)
	if err != nil {
		return nil, fmt.Errorf("%s notation: %w", g.Type().Name, err)
	}
	return st, nil
}

func (g *Game) parseState(notation string) (*State, error) {
	fields := strings.Fields(notation)
	want := []string{"round", "hands", "table", "pudding", "score", "deck"}
	if g.seq {
		want = append(want, "pending")
	}
	if len(fields) != len(want) {
		return nil, fmt.Errorf("want %d fields %s=..., got %d", len(want), strings.Join(want, "=... "), len(fields))
	}
	vals := map[string]string{}
	for i, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k != want[i] {
			return nil, fmt.Errorf("field %d is %q, want %s=...", i+1, f, want[i])
		}
		vals[k] = v
	}
	np := g.np
	s := &State{g: g}
	c := &s.c
	c.reset(np)
	c.deck = Counts{}
	switch r := vals["round"]; r {
	case "1", "2", "3":
		c.round = int8(r[0] - '1')
	case "over":
		c.round = numRounds
	default:
		return nil, fmt.Errorf("round %q: want 1, 2, 3 or over", r)
	}
	hands, err := splitN(vals["hands"], "/", np, "hands")
	if err != nil {
		return nil, err
	}
	tables, err := splitN(vals["table"], "/", np, "table")
	if err != nil {
		return nil, err
	}
	puds, err := splitN(vals["pudding"], ",", np, "pudding")
	if err != nil {
		return nil, err
	}
	scores, err := splitN(vals["score"], ",", np, "score")
	if err != nil {
		return nil, err
	}
	var total Counts
	add := func(k *Counts) {
		for i, n := range k {
			total[i] += n
		}
	}
	for p := range np {
		if c.hands[p], _, err = parseCounts(hands[p], false); err != nil {
			return nil, fmt.Errorf("hand of player %d: %w", p, err)
		}
		if c.table[p], c.onWasabi[p], err = parseCounts(tables[p], true); err != nil {
			return nil, fmt.Errorf("table of player %d: %w", p, err)
		}
		pu, err := strconv.Atoi(puds[p])
		if err != nil || pu < 0 || pu > int(FullDeck[Pudding]) {
			return nil, fmt.Errorf("pudding %q of player %d: want an integer in [0, %d]", puds[p], p, FullDeck[Pudding])
		}
		c.pudding[p] = uint8(pu)
		sc, err := strconv.Atoi(scores[p])
		if err != nil || sc < -1000 || sc > 1000 {
			return nil, fmt.Errorf("score %q of player %d: want an integer in [-1000, 1000]", scores[p], p)
		}
		c.score[p] = int16(sc)
		add(&c.hands[p])
		add(&c.table[p])
		total[Pudding] += c.pudding[p]
	}
	if c.deck, _, err = parseCounts(vals["deck"], false); err != nil {
		return nil, fmt.Errorf("deck: %w", err)
	}
	add(&c.deck)
	for k := range NumCards {
		if total[k] > FullDeck[k] {
			return nil, fmt.Errorf("%d %s cards in hands, tables, puddings and deck; the deck has only %d", total[k], Card(k), FullDeck[k])
		}
	}
	if err := c.derivePhase(); err != nil {
		return nil, err
	}
	if g.seq {
		if err := c.parsePending(vals["pending"]); err != nil {
			return nil, err
		}
	}
	c.rehash()
	return s, nil
}

// derivePhase sets turn and dealt from the hand and table sizes and checks
// the invariants listed on core.
func (c *core) derivePhase() error {
	np, h := int(c.np), c.handSize()
	if c.over() {
		for p := range np {
			if c.hands[p].Total() != 0 || c.table[p].Total() != 0 {
				return errors.New("the game is over but a hand or table is not empty")
			}
		}
		return nil
	}
	t := c.table[0].Total()
	sum := 0
	for p := range np {
		if c.table[p].Total() != t {
			return fmt.Errorf("tables hold %d and %d cards; every table holds one card per trick played", t, c.table[p].Total())
		}
		sum += c.hands[p].Total()
	}
	if t >= h {
		return fmt.Errorf("tables hold %d cards; a round has only %d tricks", t, h)
	}
	c.turn = int8(t)
	if t == 0 && sum < np*h {
		for p := range np {
			if want := sum/np + b2i(p < sum%np); c.hands[p].Total() != want {
				return fmt.Errorf("while dealing, player %d must hold %d cards (card d goes to player d mod %d), not %d", p, want, np, c.hands[p].Total())
			}
		}
		c.dealt = int8(sum)
	} else {
		for p := range np {
			if c.hands[p].Total() != h-t {
				return fmt.Errorf("after %d tricks every hand holds %d cards; player %d holds %d", t, h-t, p, c.hands[p].Total())
			}
		}
		c.dealt = int8(np * h)
	}
	need := np*h*(numRounds-1-int(c.round)) + np*h - int(c.dealt)
	if c.deck.Total() < need {
		return fmt.Errorf("deck holds %d cards but %d more must be dealt", c.deck.Total(), need)
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (c *core) parsePending(v string) error {
	np := int(c.np)
	parts, err := splitN(v, ",", np, "pending")
	if err != nil {
		return err
	}
	n := 0
	for p, t := range parts {
		if t == "-" {
			continue
		}
		if n != p {
			return fmt.Errorf("pending %q: players choose in order 0, 1, ...; player %d has chosen before player %d", v, p, n)
		}
		if c.dealing() || c.over() {
			return fmt.Errorf("pending %q: no choice can be pending while dealing or after the game", v)
		}
		a, err := parsePlayerAction(t)
		if err != nil {
			return fmt.Errorf("pending choice of player %d: %w", p, err)
		}
		if !c.isLegal(p, a) {
			return fmt.Errorf("pending choice %s of player %d is not legal with that hand and table", t, p)
		}
		c.pending[p] = a
		n++
	}
	if n == np {
		return fmt.Errorf("pending %q: all players have chosen, so the trick would already be revealed", v)
	}
	c.next = int8(n)
	return nil
}

func parsePlayerAction(t string) (games.Action, error) {
	t = strings.ToLower(strings.TrimSpace(t))
	if rest, ok := strings.CutPrefix(t, "chop:"); ok {
		x, y, ok := strings.Cut(rest, "+")
		a, ok1 := parseCard(x)
		b, ok2 := parseCard(y)
		if !ok || !ok1 || !ok2 {
			return games.NoAction, fmt.Errorf("action %q: want chop:CARD+CARD, e.g. chop:wasabi+salmon", t)
		}
		if id, ok := ChopAction(a, b); ok {
			return id, nil
		}
		id, _ := ChopAction(b, a) // order does not matter for this pair
		return id, nil
	}
	if k, ok := parseCard(t); ok {
		return games.Action(k), nil
	}
	return games.NoAction, fmt.Errorf("action %q: want a card (%s) or chop:CARD+CARD", t, strings.Join(cardNames[:], ", "))
}

// ActionString implements games.State. At chance nodes ids 0..11 read
// "deal:CARD".
func (s *State) ActionString(a games.Action) string {
	if s.c.dealing() && a >= 0 && a < NumCards {
		return "deal:" + cardNames[a]
	}
	return actionText(a)
}

// ParseAction implements games.State.
func (s *State) ParseAction(t string) (games.Action, error) {
	if s.c.dealing() {
		k, ok := parseCard(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(t)), "deal:"))
		if !ok {
			return games.NoAction, fmt.Errorf("chance action %q: want deal:CARD, e.g. deal:tempura", t)
		}
		return games.Action(k), nil
	}
	return parsePlayerAction(t)
}

// Draw implements games.Drawer: one line per player; hands that viewer
// does not know (and others' pending choices) are hidden. viewer -1 sees all.
func (s *State) Draw(viewer int) string {
	c := &s.c
	var b strings.Builder
	switch {
	case c.over():
		fmt.Fprintf(&b, "Sushi Go! game over\n")
	case c.dealing():
		fmt.Fprintf(&b, "Sushi Go! round %d, dealing (%d cards dealt)\n", c.round+1, c.dealt)
	default:
		fmt.Fprintf(&b, "Sushi Go! round %d, trick %d of %d\n", c.round+1, c.turn+1, c.handSize())
	}
	for p := range int(c.np) {
		hand := string(appendCounts(nil, &c.hands[p], nil))
		if viewer >= 0 && !c.knows(viewer, p) {
			hand = fmt.Sprintf("? (%d cards)", c.hands[p].Total())
		}
		fmt.Fprintf(&b, "P%d score %3d pudding %d | table %-12s | hand %s", p, c.score[p], c.pudding[p], appendCounts(nil, &c.table[p], &c.onWasabi[p]), hand)
		if a := c.pending[p]; a != games.NoAction {
			if viewer < 0 || viewer == p {
				fmt.Fprintf(&b, " | chose %s", actionText(a))
			} else {
				b.WriteString(" | has chosen")
			}
		}
		b.WriteByte('\n')
	}
	if viewer < 0 {
		fmt.Fprintf(&b, "deck %s\n", appendCounts(nil, &c.deck, nil))
	} else {
		fmt.Fprintf(&b, "deck %d cards\n", c.deck.Total())
	}
	return b.String()
}
