package web

import (
	"strconv"
	"strings"
	"sync"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/connect4d"
	"github.com/canopy-go/canopy/games/sequence"
	"github.com/canopy-go/canopy/games/strands"
	"github.com/canopy-go/canopy/games/sushigo"
	"github.com/canopy-go/canopy/games/tetrislink"
)

// This file holds the drawing data of the games whose boards need more than
// a grid of owners: Connect4d, Strands, Tetris Link, Sequence and Sushi Go.
// Everything here comes from what the game shows the viewing player
// (Observation of perfect-information games, Draw(view), and the exported
// accessors that Draw itself honours, such as sushigo.State.Knows); hidden
// hands never reach the page.

// playerJSON is what the page shows of one player next to the board.
type playerJSON struct {
	Player int `json:"player"`
	// Pieces are the pieces left per shape (Tetris Link, in
	// boardJSON.PieceNames order).
	Pieces []int `json:"pieces,omitempty"`
	// Hand is the player's hand when the viewer may see it (nil: hidden);
	// HandCount is its size, always shown.
	Hand      []string `json:"hand,omitempty"`
	HandCount int      `json:"hand_count"`
	Hidden    bool     `json:"hidden,omitempty"` // the hand is not shown
	// HandActions are, for each card of Hand, the action that picks it
	// alone (Sushi Go), so the page can play a card by clicking it.
	HandActions []int `json:"hand_actions,omitempty"`
	// Table is Sushi Go's tableau ("wasabi+salmon": a nigiri on a wasabi).
	Table    []string `json:"table,omitempty"`
	Puddings int      `json:"puddings,omitempty"`
	Note     string   `json:"note,omitempty"` // one line: sequences, a pending choice
}

// dropJSON is one Tetris Link placement: the cells (row, column; row 0 at
// the top) the piece would occupy.
type dropJSON struct {
	ID     int      `json:"id"`
	Player int      `json:"player"`
	Text   string   `json:"text"`   // "T2@5"
	Orient string   `json:"orient"` // "T2"
	Col    int      `json:"col"`    // leftmost column, 0-based
	Cells  [][2]int `json:"cells"`
}

// boardOf returns the drawing data of s for player view (-1: everything),
// or nil for the generic view. legal are the actions the page may offer
// (from render), used for the placements and cells the page can click.
func boardOf(s games.State, view int, legal []legalJSON) *boardJSON {
	if b := gridBoard(s); b != nil {
		return b
	}
	switch st := s.(type) {
	case *connect4d.State:
		return connect4dBoard(st)
	case *strands.State:
		return strandsBoard(st)
	case *tetrislink.State:
		return tetrislinkBoard(st, legal)
	case *sequence.State:
		return sequenceBoard(st, view, legal)
	case *sushigo.State:
		return sushigoBoard(st, view)
	}
	return nil
}

// connect4dBoard: the d boards side by side in one 6 x 7d grid; column
// 7b+c of the grid is board b's column c, whose action id is 7b+c too.
func connect4dBoard(st *connect4d.State) *boardJSON {
	d := st.Game().(*connect4d.Game).D()
	w := connect4d.Cols * d
	b := newBoard("connect4d", connect4d.Rows, w)
	obs := make([]float32, games.ObservationSize(st.Game()))
	st.Observation(0, obs) // plane 0: player 0's stones, plane 1: player 1's; index row*w+col, row 0 at the top
	plane := connect4d.Rows * w
	for r := range b.Rows {
		for c := range w {
			switch i := r*w + c; {
			case obs[i] != 0:
				b.Cells[r][c] = 0
			case obs[plane+i] != 0:
				b.Cells[r][c] = 1
			}
			b.Actions[r][c] = c
		}
	}
	b.Boards, b.Active = d, -1
	if !st.IsTerminal() {
		b.Active = st.StepInTurn()
		b.Notes = append(b.Notes, "stone "+strconv.Itoa(st.StepInTurn()+1)+" of "+strconv.Itoa(d)+" this turn: drop it into board "+strconv.Itoa(st.StepInTurn()))
	}
	return b
}

// strandsBoard: the W x W array of the game's files, off-board cells -1
// with no action; Labels are the printed numbers.
func strandsBoard(st *strands.State) *boardJSON {
	bd := st.Game().(*strands.Game).Board()
	b := newBoard("strands", bd.W, bd.W)
	b.Labels = make([][]string, bd.W)
	for r := range b.Labels {
		b.Labels[r] = make([]string, bd.W)
	}
	obs := make([]float32, games.ObservationSize(st.Game()))
	st.Observation(0, obs) // plane 0: Black's stones, plane 1: White's; index x*W+y
	plane := bd.W * bd.W
	for c := range bd.N {
		x, y := int(bd.X[c]), int(bd.Y[c])
		i := x*bd.W + y
		switch {
		case obs[i] != 0:
			b.Cells[x][y] = 0
		case obs[plane+i] != 0:
			b.Cells[x][y] = 1
		}
		b.Actions[x][y] = c
		b.Labels[x][y] = strconv.Itoa(int(bd.Label[c]))
	}
	if !st.IsTerminal() {
		if st.StepInTurn() > 0 {
			b.Notes = append(b.Notes, "this turn's number: "+strconv.Itoa(st.Pick())+", "+strconv.Itoa(st.StepInTurn())+" stone(s) placed")
		} else if st.TurnNumber() > 0 {
			b.Notes = append(b.Notes, "a new turn: any empty cell; its number says how many stones this turn places")
		}
	}
	var gs [strands.MaxCells]uint8
	for p, name := range []string{"Black", "White"} {
		n := st.Groups(p, &gs)
		sizes := make([]string, n)
		for i := range n {
			sizes[i] = strconv.Itoa(int(gs[i]))
		}
		if n == 0 {
			sizes = []string{"none"}
		}
		b.Notes = append(b.Notes, name+" groups: "+strings.Join(sizes, " "))
	}
	return b
}

// tetrisShapes are Tetris Link's shapes in the game's order.
var tetrisShapes = []string{"I", "O", "T", "S", "L"}

// tetrislinkBoard: the 20 x 10 grid (row 0 at the top) by owner, pieces
// left per player, and for each offered placement the cells it would fill
// (found by playing it on a clone).
func tetrislinkBoard(st *tetrislink.State, legal []legalJSON) *boardJSON {
	g := st.Game()
	np := g.NumPlayers()
	b := newBoard("tetrislink", tetrislink.Height, tetrislink.Width)
	cells := func(s games.State, dst []float32) {
		s.Observation(0, dst) // plane i: player i's cells; row 0 at the top
		for r := range b.Rows {
			for c := range b.Cols {
				b.Cells[r][c] = -1
				for p := range np {
					if dst[p*tetrislink.Height*tetrislink.Width+r*tetrislink.Width+c] != 0 {
						b.Cells[r][c] = p
					}
				}
			}
		}
	}
	obs := make([]float32, games.ObservationSize(g))
	cells(st, obs)
	b.PieceNames = tetrisShapes
	for p := range np {
		pl := playerJSON{Player: p, Pieces: make([]int, len(tetrisShapes))}
		for k := range tetrisShapes {
			pl.Pieces[k] = st.PiecesLeft(p, k)
			pl.HandCount += pl.Pieces[k]
		}
		b.Players = append(b.Players, pl)
	}
	b.Drops = []dropJSON{}
	if len(legal) == 0 {
		return b
	}
	occ := make([][]bool, b.Rows)
	for r := range occ {
		occ[r] = make([]bool, b.Cols)
		for c := range occ[r] {
			occ[r][c] = b.Cells[r][c] >= 0
		}
	}
	after := make([]float32, len(obs))
	cl := st.Clone()
	for _, l := range legal {
		for _, a := range l.Actions {
			st.CloneInto(cl)
			cl.Apply(games.Action(a.ID))
			cl.Observation(0, after)
			d := dropJSON{ID: a.ID, Player: l.Player, Text: a.Text, Col: a.ID % tetrislink.Width}
			d.Orient, _, _ = strings.Cut(a.Text, "@")
			for r := range b.Rows {
				for c := range b.Cols {
					if occ[r][c] {
						continue
					}
					for p := range np {
						if after[p*tetrislink.Height*tetrislink.Width+r*tetrislink.Width+c] != 0 {
							d.Cells = append(d.Cells, [2]int{r, c})
						}
					}
				}
			}
			b.Drops = append(b.Drops, d)
		}
	}
	return b
}

// sequenceFaces are the card faces of the 10 x 10 board ("*" a corner),
// read once from the drawing of an empty board (the deal has not begun, so
// no hand is in it).
var sequenceFaces = sync.OnceValue(func() [10][10]string {
	s := sequence.New(2, true).NewInitialState().(*sequence.State)
	faces, _ := sequenceGrid(s.Draw(-1))
	return faces
})

// sequenceGrid reads the 10 board rows of sequence.State.Draw: each square
// is 4 characters, a face, "*" or a chip letter ('a' player 0, capitals
// locked). rest are the lines after the board.
func sequenceGrid(text string) (grid [10][10]string, rest []string) {
	lines := strings.Split(text, "\n")
	for r := 0; r < 10 && r < len(lines); r++ {
		ln := lines[r]
		for c := range 10 {
			lo, hi := 3+4*c, 3+4*c+4
			if hi <= len(ln) {
				grid[r][c] = strings.TrimSpace(ln[lo:hi])
			}
		}
	}
	if len(lines) > 11 {
		rest = lines[11:]
	}
	return grid, rest
}

// sequenceBoard draws Sequence from Draw(view), which shows only what view
// may see: the chips (Marks 2: locked in a sequence), the faces, the hands
// view may see and the sizes of the others. The squares of the shown hand's
// non-jack cards are marked 1; the legal plays of such cards take their
// square (a jack, a dead card and pass stay buttons).
func sequenceBoard(st *sequence.State, view int, legal []legalJSON) *boardJSON {
	b := newBoard("sequence", 10, 10)
	b.Buttons = true
	faces := sequenceFaces()
	grid, rest := sequenceGrid(st.Draw(view))
	b.Labels = make([][]string, 10)
	b.Marks = make([][]int, 10)
	for r := range 10 {
		b.Labels[r] = faces[r][:]
		b.Marks[r] = make([]int, 10)
		for c := range 10 {
			if t := grid[r][c]; len(t) == 1 && t != "*" {
				ch := t[0]
				switch {
				case ch >= 'a' && ch <= 'c':
					b.Cells[r][c] = int(ch - 'a')
				case ch >= 'A' && ch <= 'C':
					b.Cells[r][c] = int(ch - 'A')
					b.Marks[r][c] = 2
				}
			}
		}
	}
	np := st.Game().NumPlayers()
	for _, ln := range rest {
		if !strings.HasPrefix(ln, "player ") {
			if strings.HasPrefix(ln, "deck ") {
				b.Notes = append(b.Notes, ln)
			}
			continue
		}
		head, tail, ok := strings.Cut(ln, ": ")
		if !ok {
			continue
		}
		p, err := strconv.Atoi(strings.Fields(head)[1])
		if err != nil || p < 0 || p >= np {
			continue
		}
		pl := playerJSON{Player: p}
		seqs, handTxt, _ := strings.Cut(tail, ", ")
		pl.Note = seqs
		if h, ok := strings.CutPrefix(handTxt, "hand"); ok {
			pl.Hand = strings.Fields(h)
			pl.HandCount = len(pl.Hand)
		} else {
			pl.Hidden = true
			pl.HandCount, _ = strconv.Atoi(strings.Fields(handTxt)[0])
		}
		b.Players = append(b.Players, pl)
	}
	// The hand whose squares to mark: the viewer's, else the mover's.
	own := view
	if own < 0 {
		own = st.CurrentPlayer()
	}
	held := map[string]bool{}
	for _, pl := range b.Players {
		if pl.Player == own {
			for _, k := range pl.Hand {
				held[k] = true
			}
		}
	}
	for r := range 10 {
		for c := range 10 {
			if b.Cells[r][c] < 0 && held[faces[r][c]] {
				b.Marks[r][c] = 1
			}
		}
	}
	for _, l := range legal {
		for _, a := range l.Actions {
			card, sq, ok := strings.Cut(a.Text, "@")
			if !ok || sq == "dead" || strings.HasPrefix(card, "J") || strings.HasPrefix(card, "slot") {
				continue
			}
			r, c := (a.ID%100)/10, a.ID%10
			b.Actions[r][c] = a.ID
		}
	}
	return b
}

// sushigoBoard: no grid; each player's tableau, puddings and hand when view
// knows it (sushigo.State.Knows, as Draw), else its size.
func sushigoBoard(st *sushigo.State, view int) *boardJSON {
	b := &boardJSON{Kind: "sushigo", Cells: [][]int{}, Actions: [][]int{}, Buttons: true}
	np := st.Game().NumPlayers()
	switch {
	case st.IsTerminal():
		b.Notes = append(b.Notes, "game over")
	case st.CurrentPlayer() == games.ChancePlayer:
		b.Notes = append(b.Notes, "round "+strconv.Itoa(st.Round()+1)+" of 3: dealing")
	default:
		b.Notes = append(b.Notes, "round "+strconv.Itoa(st.Round()+1)+" of 3, trick "+strconv.Itoa(st.Turn()+1)+" of "+strconv.Itoa(sushigo.HandSize(np)))
	}
	for p := range np {
		pl := playerJSON{Player: p, Puddings: st.Puddings(p), Table: []string{}}
		table, on := st.Table(p), st.OnWasabi(p)
		for c := range sushigo.NumCards {
			k := sushigo.Card(c)
			n := int(table[c])
			switch {
			case k == sushigo.Wasabi:
				n -= int(on[0]) + int(on[1]) + int(on[2])
			case k >= sushigo.Egg && k <= sushigo.Squid:
				n -= int(on[k-sushigo.Egg])
			}
			for range n {
				pl.Table = append(pl.Table, k.String())
			}
		}
		for i, n := range on {
			for range n {
				pl.Table = append(pl.Table, "wasabi+"+(sushigo.Egg+sushigo.Card(i)).String())
			}
		}
		hand := st.Hand(p)
		pl.HandCount = hand.Total()
		if view < 0 || st.Knows(view, p) {
			pl.Hand = []string{}
			for c := range sushigo.NumCards {
				for range hand[c] {
					pl.Hand = append(pl.Hand, sushigo.Card(c).String())
					pl.HandActions = append(pl.HandActions, int(sushigo.PickAction(sushigo.Card(c))))
				}
			}
		} else {
			pl.Hidden = true
		}
		if a := st.Pending(p); a != games.NoAction {
			if view < 0 || view == p {
				pl.Note = "chose " + st.ActionString(a)
			} else {
				pl.Note = "has chosen"
			}
		}
		b.Players = append(b.Players, pl)
	}
	return b
}
