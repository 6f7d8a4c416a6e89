package sequence

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
	"github.com/canopy-go/canopy/internal/refdata"
)

func TestBoardFile(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(refdata.Dir(t), "sequence", "board.txt"))
	if err != nil {
		t.Skipf("board.txt: %v", err)
	}
	rows := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(rows) != 10 {
		t.Fatalf("board.txt has %d rows, want 10", len(rows))
	}
	count := map[string]int{}
	var wild []int
	for r, row := range rows {
		toks := strings.Fields(row)
		if len(toks) != 10 {
			t.Fatalf("row %d has %d tokens", r, len(toks))
		}
		for c, tok := range toks {
			sq := r*10 + c
			if tok == "W" {
				wild = append(wild, sq)
				if squareKind[sq] != -1 {
					t.Errorf("square %s: file has a wild corner, built-in layout does not", squareName(sq))
				}
				continue
			}
			count[tok]++
			k, ok := parseCard(tok)
			if !ok {
				t.Fatalf("bad token %q", tok)
			}
			if int(squareKind[sq]) != int(k) {
				t.Errorf("square %s: file %s, built-in %d", squareName(sq), tok, squareKind[sq])
			}
		}
	}
	if !slices.Equal(wild, []int{0, 9, 90, 99}) {
		t.Errorf("wild squares %v, want the four corners", wild)
	}
	// Every non-jack face exactly twice, no jack.
	for _, s := range "SHDC" {
		for _, r := range []string{"A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "Q", "K"} {
			if n := count[r+string(s)]; n != 2 {
				t.Errorf("%s%c appears %d times, want 2", r, s, n)
			}
		}
		if n := count["J"+string(s)]; n != 0 {
			t.Errorf("J%c appears %d times, want 0", s, n)
		}
	}
	if len(count) != 48 {
		t.Errorf("%d distinct faces, want 48", len(count))
	}
	for k := range uint8(numKinds) {
		want := 2
		if kindClass(k) != kindNormal {
			want = 0
		}
		if faceSquares[k].count() != want {
			t.Errorf("%s on %d squares, want %d", cardName(k), faceSquares[k].count(), want)
		}
	}
}

func TestConformance(t *testing.T) {
	for _, sp := range []string{"sequence", "sequence:players=3", "sequence:jacks=false", "sequence:jacks=false,players=3"} {
		t.Run(sp, func(t *testing.T) {
			g := games.MustNew(sp)
			if g.Spec() != sp {
				t.Errorf("Spec() = %q, want %q", g.Spec(), sp)
			}
			o := gametest.Options{}
			if testing.Short() {
				o.Games = 6 // the suite's tensor checks dominate: ~0.2 s per game here
			}
			if raceEnabled {
				o.Games = 2
			}
			gametest.Run(t, g, o)
		})
	}
}

func FuzzNotation(f *testing.F) { gametest.FuzzNotation(f, games.MustNew("sequence")) }

func TestSpecAndShapes(t *testing.T) {
	for _, bad := range []string{"sequence:players=4", "sequence:players=1", "sequence:jacks=maybe", "sequence:teams=2"} {
		if _, err := games.New(bad); err == nil {
			t.Errorf("games.New(%q) accepted", bad)
		}
	}
	g := games.MustNew("sequence:jacks=false").(*Game)
	if got := g.ObservationShape(); !slices.Equal(got, []int{99, 10, 10}) {
		t.Errorf("research observation shape %v, want [99 10 10]", got)
	}
	if g.NumActions() != 700 || g.FeatureSize() != 3*100+100+96+13 {
		t.Errorf("actions %d features %d", g.NumActions(), g.FeatureSize())
	}
	full := games.MustNew("sequence").(*Game)
	if got := full.ObservationShape(); !slices.Equal(got, []int{107, 10, 10}) {
		t.Errorf("full observation shape %v", got)
	}
	if full.HandSize() != 7 || games.MustNew("sequence:players=3").(*Game).HandSize() != 6 {
		t.Error("hand sizes: want 7 with 2 players, 6 with 3")
	}
}

func TestChanceOutcomes(t *testing.T) {
	for _, c := range []struct {
		spec  string
		kinds int
		deck  float64
	}{{"sequence", 52, 104}, {"sequence:jacks=false", 48, 96}} {
		s := games.MustNew(c.spec).NewInitialState().(*State)
		if s.CurrentPlayer() != games.ChancePlayer {
			t.Fatalf("%s: initial state is not a chance node", c.spec)
		}
		outs := s.ChanceOutcomes(nil)
		if len(outs) != c.kinds {
			t.Fatalf("%s: %d outcomes, want %d", c.spec, len(outs), c.kinds)
		}
		for _, o := range outs {
			if math.Abs(o.Prob-2/c.deck) > 1e-12 {
				t.Errorf("%s: outcome %s prob %v, want 2/%v", c.spec, cardName(uint8(o.Action)), o.Prob, c.deck)
			}
		}
		// After one AS is dealt, AS has 1/(deck-1).
		s.Apply(games.Action(0))
		for _, o := range s.ChanceOutcomes(nil) {
			want := 2 / (c.deck - 1)
			if o.Action == 0 {
				want = 1 / (c.deck - 1)
			}
			if math.Abs(o.Prob-want) > 1e-12 {
				t.Errorf("%s after AS: %s prob %v want %v", c.spec, cardName(uint8(o.Action)), o.Prob, want)
			}
		}
	}
}

// board builds a BOARD field: chips maps square names to chip letters.
func board(chips map[string]byte) string {
	var b []byte
	for sq := range numSquares {
		if sq > 0 && sq%10 == 0 {
			b = append(b, '/')
		}
		ch := byte('.')
		if corners.has(sq) {
			ch = '*'
		}
		for name, c := range chips {
			if n, _ := parseSquare(name); n == sq {
				ch = c
			}
		}
		b = append(b, ch)
	}
	return string(b)
}

// rowChips maps squares of one board-file row r (0 = top) and columns to c.
func rowChips(m map[string]byte, r int, cols string, c byte) map[string]byte {
	for _, col := range cols {
		m[squareName(r*10+int(col-'0'))] = c
	}
	return m
}

func parse(t *testing.T, g games.Game, notation string) *State {
	t.Helper()
	s, err := g.ParseState(notation)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*State)
}

func play(t *testing.T, s *State, action string) {
	t.Helper()
	a, err := s.ParseAction(action)
	if err != nil {
		t.Fatal(err)
	}
	if err := games.ApplyChecked(s, a); err != nil {
		t.Fatal(err)
	}
}

func legal(s *State) games.Mask {
	m := games.NewMask(NumActions)
	s.Legal(m)
	return m
}

func TestTwoEyedJack(t *testing.T) {
	g := games.MustNew("sequence")
	// Two chips on the board; JD may go on any of the 96-2 empty squares.
	s := parse(t, g, board(map[string]byte{"b10": 'a', "c10": 'b'})+" play:0 h=JD,2S;3S d=- s=0,0 p=0 m=20")
	m := legal(s)
	jd := 0
	for a := range m.All() {
		if int(a)/100 == 1 { // JD sorts after 2S: slot 1
			jd++
		}
	}
	if jd != 94 {
		t.Errorf("two-eyed jack has %d targets, want 94", jd)
	}
	if m.Has(100+1) || m.Has(100+2) || m.Has(100+0) || m.Has(100+9) {
		t.Error("two-eyed jack may go on an occupied square or a corner")
	}
	play(t, s, "JD@e5")
	sq, _ := parseSquare("e5")
	if !s.chips[0].has(sq) || s.discard[36] != 1 {
		t.Errorf("JD@e5 did not place a chip / discard the jack: %s", s)
	}
}

func TestOneEyedJack(t *testing.T) {
	g := games.MustNew("sequence")
	// Player 1 has a locked sequence on the second row (a9..e9) and a loose
	// chip on g5; player 0 has a chip on a1's neighbour b1.
	chips := rowChips(map[string]byte{"g5": 'b', "b1": 'a'}, 1, "01234", 'B')
	s := parse(t, g, board(chips)+" play:0 h=2S,JS;3S d=- s=0,1 p=0 m=30")
	m := legal(s)
	var got []string
	for a := range m.All() {
		if int(a)/100 == 1 {
			got = append(got, s.ActionString(a))
		}
	}
	if !slices.Equal(got, []string{"JS@g5"}) {
		t.Fatalf("one-eyed jack targets %v, want only the loose opponent chip g5 (locked and own chips excluded)", got)
	}
	play(t, s, "JS@g5")
	g5, _ := parseSquare("g5")
	if s.chips[1].has(g5) || s.chips[0].has(g5) {
		t.Error("JS@g5 left a chip on g5")
	}
	// A locked chip cannot be taken even by raw id.
	s = parse(t, g, board(chips)+" play:0 h=2S,JS;3S d=- s=0,1 p=0 m=30")
	a9, _ := parseSquare("a9")
	if err := games.ApplyChecked(s, games.Action(100+a9)); err == nil {
		t.Error("one-eyed jack removed a chip locked in a sequence")
	}
}

func TestDeadCardExchange(t *testing.T) {
	g := games.MustNew("sequence:jacks=false")
	// Both 2S squares (b10, g2) are taken: 2S is dead.
	s := parse(t, g, board(map[string]byte{"b10": 'a', "g2": 'b'})+" play:0 h=2S,3S;4S d=- s=0,0 p=0 m=20")
	m := legal(s)
	if !m.Has(exchangeAction(0)) {
		t.Fatalf("dead 2S cannot be exchanged: %s", games.FormatActions(s, m))
	}
	if m.Has(exchangeAction(1)) {
		t.Error("live 3S may be exchanged")
	}
	play(t, s, "2S@dead")
	if s.CurrentPlayer() != games.ChancePlayer || s.discard[1] != 1 || s.hn[0] != 1 {
		t.Fatalf("after the exchange: %s", s)
	}
	// Draw the other 3S... then a second dead card may not be exchanged.
	s2 := parse(t, g, board(map[string]byte{"b10": 'a', "g2": 'b', "c10": 'b', "f2": 'a'})+" xdraw:0 h=4S;5S d=2S s=0,0 p=0 m=21")
	play(t, s2, "3S") // both 3S squares (c10, f2) are taken too
	if s2.CurrentPlayer() != 0 || !s2.exchanged {
		t.Fatalf("after the replacement the same player should play: %s", s2)
	}
	m = legal(s2)
	if m.Has(exchangeAction(0)) {
		t.Error("a second exchange in one turn is legal")
	}
	play(t, s2, "4S@d10")
	if s2.CurrentPlayer() != games.ChancePlayer || s2.player != 0 {
		t.Errorf("after playing, player 0 draws: %s", s2)
	}
	play(t, s2, "AS")
	if s2.CurrentPlayer() != 1 {
		t.Errorf("turn did not pass to player 1: %s", s2)
	}
	// With an empty deck a dead card cannot be exchanged: covered in TestDeckExhaustion.
}

// allBut lists, as a discard field, every card of the variant not in held.
func allBut(g *Game, held ...string) string {
	used := map[uint8]int{}
	for _, h := range held {
		for _, c := range strings.Split(h, ",") {
			if k, ok := parseCard(c); ok {
				used[k]++
			}
		}
	}
	var out []string
	for k := range uint8(numKinds) {
		if !g.jacks && kindClass(k) != kindNormal {
			continue
		}
		for range 2 - used[k] {
			out = append(out, cardName(k))
		}
	}
	return strings.Join(out, ",")
}

func TestDeckExhaustion(t *testing.T) {
	g := games.MustNew("sequence:jacks=false").(*Game)
	// The deck is empty: every card not in a hand is discarded.
	h0, h1 := "2S,3S", "4S"
	s := parse(t, g, board(map[string]byte{"b10": 'a', "g2": 'b'})+" play:0 h="+h0+";"+h1+" d="+allBut(g, h0, h1)+" s=0,0 p=0 m=200")
	if s.deckN != 0 {
		t.Fatalf("deck has %d cards, want 0", s.deckN)
	}
	m := legal(s)
	if m.Has(exchangeAction(0)) {
		t.Error("dead card exchangeable with an empty deck")
	}
	play(t, s, "3S@c10")
	if s.CurrentPlayer() != 1 || s.hn[0] != 1 {
		t.Fatalf("no draw from an empty deck: turn should pass straight to player 1: %s", s)
	}
	play(t, s, "4S@d10")
	// Player 0 holds only the dead 2S: pass is the only move.
	m = legal(s)
	if m.Count() != 1 || !m.Has(PassAction) {
		t.Fatalf("player 0 with a dead card and no deck: legal %s, want pass", games.FormatActions(s, m))
	}
	play(t, s, "pass")
	if s.IsTerminal() || s.CurrentPlayer() != 1 {
		t.Fatalf("after one pass the game goes on: %s", s)
	}
	play(t, s, "pass") // player 1's hand is empty
	if !s.IsTerminal() {
		t.Fatalf("a full round of passes (nobody can move) must end the game: %s", s)
	}
	ret := make([]float64, 2)
	s.Returns(ret)
	if ret[0] != 0 || ret[1] != 0 {
		t.Errorf("drawn game returns %v", ret)
	}
	// Every hand empty ends the game at once.
	s = parse(t, g, board(nil)+" play:1 h=;5S d="+allBut(g, "5S")+" s=0,0 p=0 m=300")
	play(t, s, "5S@e10")
	if !s.IsTerminal() {
		t.Errorf("all hands empty and no deck: game should be over: %s", s)
	}
}

func TestSequences(t *testing.T) {
	g := games.MustNew("sequence:jacks=false")
	ret := make([]float64, 2)
	// Row 5 of board.txt (row index 4): 9C QS 7C 6H 5H 4H AH 9D 7H AS.
	cases := []struct {
		name   string
		chips  map[string]byte
		seqs   string
		hand   string
		move   string
		want   int // sequences of player 0 after the move
		winner int
	}{
		// A locked sequence on columns 0-4; 7H on column 8 completes 4-8,
		// sharing exactly one chip (column 4): the second sequence wins.
		{"share one", rowChips(rowChips(map[string]byte{}, 4, "01234", 'A'), 4, "567", 'a'), "1,0", "7H", "7H@i6", 2, 0},
		// Columns 3-7 share two chips with 0-4: no second sequence.
		{"share two", rowChips(rowChips(map[string]byte{}, 4, "01234", 'A'), 4, "56", 'a'), "1,0", "9D", "9D@h6", 1, -1},
		// Four, a gap, four: filling the gap makes nine in a row, two sequences.
		{"nine", rowChips(map[string]byte{}, 4, "01235678", 'a'), "0,0", "5H", "5H@e6", 2, 0},
		// Six in a row is one sequence.
		{"six", rowChips(map[string]byte{}, 4, "01235", 'a'), "0,0", "5H", "5H@e6", 1, -1},
		// A corner counts as an own chip: b10..e10 plus corner a10.
		{"corner", rowChips(map[string]byte{}, 0, "123", 'a'), "0,0", "5S", "5S@e10", 1, -1},
		// A column through one chip of the locked row: shares one chip, wins.
		// Column 4 (e): e10 5S, e9 2C, e8 4D, e7 4C, e6 5H (locked).
		{"cross", rowChips(map[string]byte{"e10": 'a', "e9": 'a', "e8": 'a'}, 4, "01234", 'A'), "1,0", "4C", "4C@e7", 2, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := parse(t, g, board(c.chips)+" play:0 h="+c.hand+",KD;3D d=- s="+c.seqs+" p=0 m=40")
			play(t, s, c.move)
			if int(s.seqs[0]) != c.want {
				t.Errorf("player 0 has %d sequences, want %d: %s", s.seqs[0], c.want, s)
			}
			if s.Winner() != c.winner || s.IsTerminal() != (c.winner >= 0) {
				t.Errorf("winner %d terminal %v, want %d", s.Winner(), s.IsTerminal(), c.winner)
			}
			if c.winner == 0 {
				s.Returns(ret)
				if ret[0] != 1 || ret[1] != -1 {
					t.Errorf("returns %v", ret)
				}
			}
		})
	}
	// Three players: one sequence wins, returns +1, -1/2, -1/2.
	g3 := games.MustNew("sequence:players=3")
	s := parse(t, g3, board(rowChips(map[string]byte{}, 4, "0123", 'b'))+" play:1 h=2D;5H,KD;3D d=- s=0,0,0 p=0 m=40")
	play(t, s, "5H@e6")
	r3 := make([]float64, 3)
	s.Returns(r3)
	if !s.IsTerminal() || !slices.Equal(r3, []float64{-0.5, 1, -0.5}) {
		t.Errorf("3 players: terminal %v returns %v", s.IsTerminal(), r3)
	}
}

func TestFivesShiftAndMask(t *testing.T) {
	// Compare the shift-and-mask detector with a direct scan on random boards.
	rng := games.NewRand(3)
	steps := [4][2]int{{0, 1}, {1, 0}, {1, 1}, {1, -1}}
	n := 2000
	if testing.Short() || raceEnabled {
		n = 200
	}
	for range n {
		var b bitboard
		for sq := range numSquares {
			if rng.IntN(100) < 60 {
				b.set(sq)
			}
		}
		for d := range 4 {
			got := fives(b, d)
			for sq := range numSquares {
				r, c := sq/10, sq%10
				want := true
				for i := range 5 {
					rr, cc := r+i*steps[d][0], c+i*steps[d][1]
					if rr < 0 || rr > 9 || cc < 0 || cc > 9 || !b.has(rr*10+cc) {
						want = false
					}
				}
				if got.has(sq) != want {
					t.Fatalf("dir %d square %d: got %v want %v", d, sq, got.has(sq), want)
				}
			}
		}
	}
}

func midgame(t *testing.T, spec string, seed uint64, moves int) *State {
	t.Helper()
	g := games.MustNew(spec)
	rng := games.NewRand(seed)
	s := g.NewInitialState().(*State)
	m := games.NewMask(NumActions)
	for i := 0; i < moves && !s.IsTerminal(); i++ {
		if s.CurrentPlayer() == games.ChancePlayer {
			s.Apply(s.SampleChance(rng))
		} else {
			s.Legal(m)
			s.Apply(m.Random(rng))
		}
	}
	if s.IsTerminal() {
		t.Fatalf("game ended before %d moves", moves)
	}
	return s
}

type views struct{ obs, info, feat []float32 }

func viewOf(s *State, p int) views {
	g := s.g
	v := views{make([]float32, games.ObservationSize(g)), make([]float32, g.infoSize()), make([]float32, g.FeatureSize())}
	s.Observation(p, v.obs)
	s.InformationState(p, v.info)
	s.Features(p, v.feat)
	return v
}

func (v views) equal(w views) bool {
	return slices.Equal(v.obs, w.obs) && slices.Equal(v.info, w.info) && slices.Equal(v.feat, w.feat)
}

func TestNoLeak(t *testing.T) {
	for _, spec := range []string{"sequence", "sequence:jacks=false", "sequence:players=3"} {
		s := midgame(t, spec, 11, 40)
		n := s.g.players
		for p := range n {
			before := viewOf(s, p)
			// 1. Resampling the hidden cards changes nothing p sees.
			rng := games.NewRand(5)
			dst := s.g.NewInitialState().(*State)
			changed := false
			for range 50 {
				s.Resample(p, rng, dst)
				if !viewOf(dst, p).equal(before) {
					t.Fatalf("%s: resample changed player %d's view", spec, p)
				}
				changed = changed || dst.String() != s.String()
			}
			if !changed {
				t.Errorf("%s: 50 resamples never changed the hidden cards", spec)
			}
			// 2. Swapping a card between an opponent's hand and the deck
			// (keeping all counts valid) changes nothing p sees...
			q := (p + 1) % n
			c := s.Clone().(*State)
			old := c.hand[q][0]
			for k := range uint8(numKinds) {
				if c.deck[k] > 0 && k != old {
					c.removeSlot(q, 0)
					c.insertCard(q, k)
					c.deck[k]--
					c.deck[old]++
					break
				}
			}
			if c.String() == s.String() {
				t.Fatal("opponent hand swap did nothing")
			}
			if !viewOf(c, p).equal(before) {
				t.Errorf("%s: changing player %d's hand changed player %d's tensors", spec, q, p)
			}
			// ...while the same swap in p's own hand is visible (the check can fail).
			c = s.Clone().(*State)
			old = c.hand[p][0]
			for k := range uint8(numKinds) {
				if c.deck[k] > 0 && k != old && faceIndex[k] >= 0 && faceIndex[k] != faceIndex[old] {
					c.removeSlot(p, 0)
					c.insertCard(p, k)
					c.deck[k]--
					c.deck[old]++
					break
				}
			}
			if slices.Equal(viewOf(c, p).obs, before.obs) {
				t.Errorf("%s: changing player %d's own hand left its observation unchanged", spec, p)
			}
		}
	}
}

func TestResampleUniformAndReproducible(t *testing.T) {
	s := midgame(t, "sequence:jacks=false", 21, 30)
	p := 0
	q := 1
	dst := s.g.NewInitialState().(*State)
	unseen := int(s.deckN) + int(s.hn[q])
	// Probability that a given unseen copy lands in q's hand: hn[q]/unseen.
	// Pick a kind with c unseen copies; expected count in q's hand = c*hn/unseen.
	var kind uint8
	var c int
	for k := range uint8(numKinds) {
		n := int(s.deck[k])
		for _, h := range s.hand[q][:s.hn[q]] {
			if h == k {
				n++
			}
		}
		if n > 0 {
			kind, c = k, n
			break
		}
	}
	trials := 20000
	if raceEnabled {
		trials = 5000
	}
	rng := games.NewRand(9)
	sum := 0
	for range trials {
		s.Resample(p, rng, dst)
		for _, h := range dst.hand[q][:dst.hn[q]] {
			if h == kind {
				sum++
			}
		}
	}
	want := float64(c) * float64(s.hn[q]) / float64(unseen)
	got := float64(sum) / float64(trials)
	if math.Abs(got-want) > 0.025 {
		t.Errorf("mean copies of %s in the opponent hand %.4f, want %.4f", cardName(kind), got, want)
	}
	a, b := s.g.NewInitialState().(*State), s.g.NewInitialState().(*State)
	s.Resample(p, games.NewRand(4), a)
	s.Resample(p, games.NewRand(4), b)
	if a.String() != b.String() {
		t.Error("resampling is not reproducible from the rng")
	}
	r := games.NewRand(1)
	if n := testing.AllocsPerRun(100, func() { s.Resample(p, r, dst) }); n != 0 {
		t.Errorf("Resample allocates %v times", n)
	}
}

func TestActionText(t *testing.T) {
	g := games.MustNew("sequence")
	// Hands are sorted by kind (suit-major: S, H, D, C): 2S 2S JS 10H.
	s := parse(t, g, board(nil)+" play:0 h=2S,2S,10H,JS;3S d=- s=0,0 p=0 m=20")
	for _, c := range []struct {
		in   string
		want games.Action
	}{
		{"2S@b10", 1}, {"2s@B10", 1}, {"10H@i9", 3*100 + 18}, {"TH@i9", 3*100 + 18}, {"JS@i9", 2*100 + 18},
		{"slot1@b10", 101}, {"pass", PassAction}, {"PASS", PassAction}, {"2S@dead", 0}, {"#42", 42},
	} {
		got, err := s.ParseAction(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseAction(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "@", "2S", "KS@a1", "2S@k1", "2S@a11", "2S@a0", "slot9@a1", "2S@a10", "#700", "#-1", "2S@a01"} {
		if _, err := s.ParseAction(bad); err == nil {
			t.Errorf("ParseAction(%q) accepted", bad)
		}
	}
	if got := s.ActionString(3*100 + 18); got != "10H@i9" {
		t.Errorf("ActionString = %q", got)
	}
	if got := s.ActionString(6*100 + 18); got != "slot6@i9" {
		t.Errorf("ActionString of an empty slot = %q", got)
	}
	// Of two equal cards only the first slot is legal.
	m := legal(s)
	if !m.Has(1) || m.Has(101) {
		t.Error("duplicate card: want slot 0 legal, slot 1 not")
	}
}

func TestParseStateErrors(t *testing.T) {
	g := games.MustNew("sequence:jacks=false")
	ok := board(nil) + " play:0 h=2S;3S d=- s=0,0 p=0 m=20"
	if _, err := g.ParseState(ok); err != nil {
		t.Fatalf("valid notation rejected: %v", err)
	}
	for _, bad := range []string{
		"",
		board(nil) + " play:0 h=2S;3S d=- s=0,0 p=0",                                          // missing field
		board(nil) + " play:2 h=2S;3S d=- s=0,0 p=0 m=20",                                     // no player 2
		board(nil) + " play:0 h=JS;3S d=- s=0,0 p=0 m=20",                                     // no jacks in the variant
		board(nil) + " play:0 h=2S,2S;2S d=- s=0,0 p=0 m=20",                                  // three 2S
		board(nil) + " play:0 h=2S;3S d=- s=2,0 p=0 m=20",                                     // won but not over
		board(map[string]byte{"a10": 'a'}) + " play:0 h=2S;3S d=- s=0,0 p=0 m=20",             // chip on a corner
		board(map[string]byte{"b10": 'c'}) + " play:0 h=2S;3S d=- s=0,0 p=0 m=20",             // no player c
		board(nil) + " deal h=2S,3S,4S;5S d=- s=0,0 p=0 m=4",                                  // deal order
		board(nil) + " draw:0 h=2S;3S d=" + allBut(g.(*Game), "2S", "3S") + " s=0,0 p=0 m=20", // empty deck
	} {
		if _, err := g.ParseState(bad); err == nil {
			t.Errorf("ParseState accepted %q", bad)
		}
	}
}

func TestGreedy(t *testing.T) {
	g := games.MustNew("sequence:jacks=false")
	// Player 0 owns a6..d6; 5H on e6 makes five in a row (100 points);
	// 3D on j5 next to nothing scores 0.
	s := parse(t, g, board(rowChips(map[string]byte{}, 4, "0123", 'a'))+" play:0 h=3D,5H;KD d=- s=0,0 p=0 m=20")
	five, _ := s.ParseAction("5H@e6")
	if sc := s.GreedyScore(five); sc != 100 {
		t.Errorf("greedy score of the five-run %v, want 100", sc)
	}
	// 5H's other square i4 is far from every own chip: score 0.
	lone, _ := s.ParseAction("5H@i4")
	if sc := s.GreedyScore(lone); sc != 0 {
		t.Errorf("isolated chip scores %v, want 0", sc)
	}
	a := newGreedy(1)
	for range 5 {
		m, err := a.Act(t.Context(), s, 0)
		if err != nil || m != five {
			t.Fatalf("greedy played %s, %v; want 5H@e6", s.ActionString(m), err)
		}
	}
	if runScore(bitboard{}.or(corners), 1, false) != 1 {
		t.Error("a chip next to a corner is a 2-run (1 point)")
	}
}

func TestTensorsAllocateNothing(t *testing.T) {
	s := midgame(t, "sequence", 3, 60)
	g := s.g
	obs := make([]float32, games.ObservationSize(g))
	info := make([]float32, g.infoSize())
	feat := make([]float32, g.FeatureSize())
	if n := testing.AllocsPerRun(20, func() {
		s.Observation(1, obs)
		s.InformationState(1, info)
		s.Features(1, feat)
	}); n != 0 {
		t.Errorf("tensor writers allocate %v times", n)
	}
}

func TestGreedyRegisteredAndPlays(t *testing.T) {
	g := games.MustNew("sequence:jacks=false")
	a, err := agent.New(g, "sequence-greedy", agent.Env{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Greedy against random over a few games: every move it makes is legal.
	rng := games.NewRand(8)
	m := games.NewMask(NumActions)
	wins, losses := 0, 0
	games_ := 100 // fixed seeds: deterministic
	for i := range games_ {
		s := g.NewInitialState()
		for !s.IsTerminal() {
			switch p := s.CurrentPlayer(); {
			case p == games.ChancePlayer:
				s.Apply(s.(*State).SampleChance(rng))
			case p == i%2:
				act, err := a.Act(t.Context(), s, p)
				if err != nil {
					t.Fatal(err)
				}
				if err := games.ApplyChecked(s, act); err != nil {
					t.Fatal(err)
				}
			default:
				s.Legal(m)
				s.Apply(m.Random(rng))
			}
		}
		if w := s.(*State).Winner(); w >= 0 && w != i%2 {
			losses++
		}
		if s.(*State).Winner() == i%2 {
			wins++
		}
	}
	t.Logf("greedy won %d, lost %d of %d games against random", wins, losses, games_)
	if wins <= losses {
		t.Errorf("greedy won %d and lost %d against random; it should win more often", wins, losses)
	}
}

// randomGames plays n random games (n/6 under -short or -race) of each
// rule variant, seeded with seed, and calls visit with every state reached
// after an action (chance or player).
func randomGames(seed uint64, n int, visit func(spec string, s *State)) {
	if testing.Short() || raceEnabled {
		n = max(1, n/6)
	}
	for _, sp := range []string{"sequence", "sequence:jacks=false", "sequence:players=3"} {
		g := games.MustNew(sp)
		rng := games.NewRand(seed)
		m := games.NewMask(NumActions)
		for range n {
			s := g.NewInitialState().(*State)
			for !s.IsTerminal() {
				if s.CurrentPlayer() == games.ChancePlayer {
					s.Apply(s.SampleChance(rng))
				} else {
					s.Legal(m)
					s.Apply(m.Random(rng))
				}
				visit(sp, s)
			}
		}
	}
}

// TestNoMissedSequence plays random games and checks, by a direct scan of
// every five-square line, that each complete line of a player's chips was
// either counted (its chips are locked) or rightly refused (it shares at
// least two chips with the player's locked chips).
func TestNoMissedSequence(t *testing.T) {
	steps := [4][2]int{{0, 1}, {1, 0}, {1, 1}, {1, -1}}
	randomGames(77, 30, func(sp string, s *State) {
		for p := range s.g.NumPlayers() {
			for sq := range numSquares {
				for _, d := range steps {
					shared, full := 0, true
					for i := range 5 {
						r, c := sq/10+i*d[0], sq%10+i*d[1]
						if r < 0 || r > 9 || c < 0 || c > 9 {
							full = false
							break
						}
						q := r*10 + c
						if !corners.has(q) && !s.chips[p].has(q) {
							full = false
							break
						}
						if s.locked[p].has(q) {
							shared++
						}
					}
					if full && shared < 2 {
						t.Fatalf("%s: player %d's line from %s (step %v) is complete but not counted: %s", sp, p, squareName(sq), d, s)
					}
				}
			}
		}
	})
}

// TestGreedyReadings checks the readings of the study's eq. 2 on positions
// whose scores were worked out by hand.
func TestGreedyReadings(t *testing.T) {
	g := games.MustNew("sequence:jacks=false")
	board_ := GreedyReading{Board: true}
	// Player 0 owns a6..d6: the five on e6 scores P(5) = 100 through the
	// chip, and P(5) - P(4) = 90 as the change over the board.
	s := parse(t, g, board(rowChips(map[string]byte{}, 4, "0123", 'a'))+" play:0 h=3D,5H;KD d=- s=0,0 p=0 m=20")
	five, _ := s.ParseAction("5H@e6")
	if sc := s.GreedyScoreReading(five, board_); sc != 90 {
		t.Errorf("board reading of the five %v, want 90", sc)
	}
	// A chip beside a corner: a 2-run (1 point) when the corners are the
	// mover's, nothing when they are not.
	if sc := runScore(bitboard{}.or(corners), 1, true); sc != 1 {
		t.Errorf("board reading beside a corner %v, want 1", sc)
	}
	if sc := runScore(bitboard{}, 1, false); sc != 0 {
		t.Errorf("a lone chip with no corners scores %v, want 0", sc)
	}

	// X extends the 3-run on row 7 (c..e) to four: 10 through the chip, 10 - 5
	// = 5 over the board. Y on row 2 joins two single chips into a 3-run
	// (5 either way) and makes a vertical 2-run with the chip above it
	// (1 either way): 6. So the default reading plays X, the board reading Y.
	chips := rowChips(map[string]byte{}, 7, "234", 'a')
	rowChips(chips, 2, "46", 'a')
	rowChips(chips, 1, "5", 'a')
	x, y := 7*10+5, 2*10+5
	cx, cy := cardName(uint8(squareKind[x])), cardName(uint8(squareKind[y]))
	if cx == cy {
		t.Fatalf("the test needs two different cards, got %s twice", cx)
	}
	s = parse(t, g, board(chips)+" play:0 h="+cx+","+cy+";KD d=- s=0,0 p=0 m=20")
	ax, _ := s.ParseAction(cx + "@" + squareName(x))
	ay, _ := s.ParseAction(cy + "@" + squareName(y))
	for _, c := range []struct {
		a      games.Action
		r      GreedyReading
		want   float64
		reason string
	}{
		{ax, GreedyReading{}, 10, "X through the chip"},
		{ax, board_, 5, "X over the board"},
		{ay, GreedyReading{}, 6, "Y through the chip"},
		{ay, board_, 6, "Y over the board"},
	} {
		if sc := s.GreedyScoreReading(c.a, c.r); sc != c.want {
			t.Errorf("%s: %v, want %v", c.reason, sc, c.want)
		}
	}
	for _, c := range []struct {
		spec string
		want games.Action
	}{
		{"sequence-greedy", ax},
		{"sequence-greedy:score=board", ay},
		{"sequence-greedy:score=board,corners=none,ties=first", ay},
	} {
		a, err := agent.New(g, c.spec, agent.Env{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if m, err := a.Act(t.Context(), s, 0); err != nil || m != c.want {
			t.Errorf("%s played %s, %v; want %s", c.spec, s.ActionString(m), err, s.ActionString(c.want))
		}
	}
	if _, err := agent.New(g, "sequence-greedy:score=runs", agent.Env{Seed: 1}); err == nil {
		t.Error("sequence-greedy accepted score=runs")
	}
}

// TestGreedyFirstTie checks that ties=first always plays the first of the
// best actions while the default spreads over them.
func TestGreedyFirstTie(t *testing.T) {
	g := games.MustNew("sequence:jacks=false")
	s := parse(t, g, board(nil)+" play:0 h=3D,5H,7C;KD d=- s=0,0 p=0 m=20")
	first := NewGreedyReading(1, GreedyReading{FirstTie: true})
	random := newGreedy(1)
	seen := map[games.Action]bool{}
	var want games.Action = games.NoAction
	for range 40 {
		m, err := first.Act(t.Context(), s, 0)
		if err != nil {
			t.Fatal(err)
		}
		if want == games.NoAction {
			want = m
		} else if m != want {
			t.Fatalf("ties=first played %s then %s", s.ActionString(want), s.ActionString(m))
		}
		r, err := random.Act(t.Context(), s, 0)
		if err != nil {
			t.Fatal(err)
		}
		seen[r] = true
	}
	if len(seen) < 2 {
		t.Errorf("the default tie-break played one move in 40 decisions on an empty board")
	}
}
