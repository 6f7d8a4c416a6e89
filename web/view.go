package web

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/games/hex"
	"github.com/canopy-go/canopy/games/sushigo"
	"github.com/canopy-go/canopy/games/tictactoe"
)

// actionJSON is one action with its text (ActionString).
type actionJSON struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
}

// legalJSON lists one waiting player's legal actions.
type legalJSON struct {
	Player  int          `json:"player"`
	Actions []actionJSON `json:"actions"`
}

// seatJSON is one seat of a game.
type seatJSON struct {
	Spec  string `json:"spec"`
	Human bool   `json:"human"`
}

// stateJSON is what the page draws a game from.
type stateJSON struct {
	ID       string     `json:"id,omitempty"`
	Game     string     `json:"game"`      // canonical spec
	Name     string     `json:"name"`      // registry name, e.g. "hex"
	LongName string     `json:"long_name"` // e.g. "Connect Four"
	Seed     uint64     `json:"seed"`
	Seats    []seatJSON `json:"seats,omitempty"`
	Move     int        `json:"move"` // MoveNumber
	// ToMove is State.CurrentPlayer: a player, or -2 at simultaneous
	// nodes, -4 at the end.
	ToMove int `json:"to_move"`
	// Waiting are the players whose choice the game waits for.
	Waiting []int `json:"waiting"`
	// Legal lists the legal actions of the waiting human players (of
	// every waiting player in replays and games without humans).
	Legal    []legalJSON `json:"legal"`
	Terminal bool        `json:"terminal"`
	Returns  []float64   `json:"returns,omitempty"` // at the end only
	Scores   []float64   `json:"scores,omitempty"`  // games.Scorer
	Result   string      `json:"result"`            // one line: whose turn, or who won
	View     int         `json:"view"`              // the player the text is drawn for, -1 all
	Text     string      `json:"text"`              // Drawer.Draw(view), else String()
	Board    *boardJSON  `json:"board,omitempty"`   // nil: the generic view
	History  []string    `json:"history"`           // applied actions as text
	Last     int         `json:"last"`              // the last action's id, -1 none
	Busy     bool        `json:"busy"`              // an agent is thinking
	CanUndo  bool        `json:"can_undo"`
	// Views are the views this game may be drawn for (?view=): one seat
	// while a person plays with hidden cards (Private), else -1 and every
	// player.
	Views []int `json:"views"`
	// Private: the view shows one seat's hidden cards; with several people
	// at one screen the page hands it over before showing another seat's.
	Private bool `json:"private"`
	// LogReady: /log answers (not while Private: it lists every deal).
	LogReady bool `json:"log_ready"`
}

// boardJSON is the drawing data of the games with an SVG board. Cells is
// row-major with row 0 at the top; a cell holds its owner (a player) or -1
// when empty. Actions holds each cell's action id (-1: none; the cells of
// Connect Four and Connect4d take their column's action). The optional
// fields serve the games that need them (boards.go).
type boardJSON struct {
	// Kind is "connect4", "tictactoe", "hex", "connect4d", "strands",
	// "tetrislink", "sequence" or "sushigo" (no grid: Rows = Cols = 0).
	Kind    string  `json:"kind"`
	Rows    int     `json:"rows"`
	Cols    int     `json:"cols"`
	Cells   [][]int `json:"cells"`
	Actions [][]int `json:"actions"`
	// Labels are printed on cells: Strands' numbers ("" off the board),
	// Sequence's card faces ("*" a corner).
	Labels [][]string `json:"labels,omitempty"`
	// Marks flag cells: 1 a square of one of the shown hand's cards, 2 a
	// chip locked in a sequence (Sequence).
	Marks [][]int `json:"marks,omitempty"`
	// Boards is Connect4d's number of boards (7 columns each, side by
	// side); Active the board to play in (-1: none).
	Boards int `json:"boards,omitempty"`
	Active int `json:"active"`
	// Players are per-player panels: pieces left, hands, tableaux.
	Players    []playerJSON `json:"players,omitempty"`
	PieceNames []string     `json:"piece_names,omitempty"`
	// Drops are Tetris Link's offered placements and the cells each fills.
	Drops []dropJSON `json:"drops,omitempty"`
	// Buttons: list every legal move as a button, even those the board
	// takes (games whose moves are best read as text).
	Buttons bool     `json:"buttons,omitempty"`
	Notes   []string `json:"notes,omitempty"` // lines shown under the board
	// Line are the cells (row, column) of the line that won a finished
	// game (games.WinningLiner), marked on the board.
	Line [][2]int `json:"line,omitempty"`
	// rowsUp: the game's observation has row 0 at the bottom (Connect
	// Four), the drawing at the top.
	rowsUp bool
}

// markLine fills b.Line from s's winning line (games.WinningLiner), whose
// cells index a plane of the observation, laid out as b's grid.
func markLine(s games.State, b *boardJSON) {
	wl, ok := s.(games.WinningLiner)
	if !ok || b == nil {
		return
	}
	sh := s.Game().ObservationShape()
	if len(sh) < 2 {
		return
	}
	h, w := sh[len(sh)-2], sh[len(sh)-1]
	for _, i := range wl.WinningLine() {
		r, c := i/w, i%w
		if b.rowsUp {
			r = h - 1 - r
		}
		if r >= 0 && r < b.Rows && c >= 0 && c < b.Cols {
			b.Line = append(b.Line, [2]int{r, c})
		}
	}
}

// gridBoard returns the SVG drawing data of the two-player grid games, or
// nil.
func gridBoard(s games.State) *boardJSON {
	switch st := s.(type) {
	case *connect4.State:
		b := newBoard("connect4", connect4.Height, connect4.Width)
		b.rowsUp = true
		obs := make([]float32, games.ObservationSize(st.Game()))
		st.Observation(0, obs) // plane 0: player 0's stones, plane 1: player 1's; index row*Width+col, row 0 at the bottom
		for r := range b.Rows {
			for c := range b.Cols {
				i := (b.Rows-1-r)*b.Cols + c
				switch {
				case obs[i] != 0:
					b.Cells[r][c] = 0
				case obs[connect4.Cells+i] != 0:
					b.Cells[r][c] = 1
				}
				b.Actions[r][c] = c
			}
		}
		return b
	case *tictactoe.State:
		b := newBoard("tictactoe", 3, 3)
		obs := make([]float32, games.ObservationSize(st.Game()))
		st.Observation(0, obs) // plane 0: player 0's stones, plane 1: player 1's; index r*3+c
		for i := range 9 {
			r, c := i/3, i%3
			switch {
			case obs[i] != 0:
				b.Cells[r][c] = 0
			case obs[9+i] != 0:
				b.Cells[r][c] = 1
			}
			b.Actions[r][c] = i
		}
		return b
	case *hex.State:
		g := st.Game().(*hex.Game)
		n := g.Size()
		b := newBoard("hex", n, n)
		for r := range n {
			for c := range n {
				b.Cells[r][c] = st.Stone(r, c)
				b.Actions[r][c] = int(g.Cell(r, c))
			}
		}
		return b
	}
	return nil
}

func newBoard(kind string, rows, cols int) *boardJSON {
	b := &boardJSON{Kind: kind, Rows: rows, Cols: cols, Cells: make([][]int, rows), Actions: make([][]int, rows)}
	for r := range rows {
		b.Cells[r] = make([]int, cols)
		b.Actions[r] = make([]int, cols)
		for c := range cols {
			b.Cells[r][c], b.Actions[r][c] = -1, -1
		}
	}
	return b
}

// render describes s for the page. view is the player to draw for (-1:
// everything); legalFor says whose legal actions to list (nil: every
// waiting player's); history are the applied actions' texts.
func render(s games.State, view int, waiting []int, legalFor func(p int) bool, legal func(p int, m games.Mask), history []string, last games.Action) stateJSON {
	g := s.Game()
	t := g.Type()
	out := stateJSON{
		Game: g.Spec(), Name: t.Name, LongName: t.LongName,
		Move: s.MoveNumber(), ToMove: s.CurrentPlayer(), Waiting: waiting,
		Terminal: s.IsTerminal(), View: view,
		History: history, Last: int(last), Legal: []legalJSON{},
	}
	if out.Waiting == nil {
		out.Waiting = []int{}
	}
	if out.History == nil {
		out.History = []string{}
	}
	if d, ok := s.(games.Drawer); ok {
		out.Text = d.Draw(view)
	} else {
		out.Text = s.String()
	}
	if sc, ok := s.(games.Scorer); ok {
		out.Scores = make([]float64, g.NumPlayers())
		sc.Scores(out.Scores)
	}
	m := games.NewMask(g.NumActions())
	// With hidden information, a player's legal moves name its cards:
	// list only the viewer's.
	hidden := t.Information != games.PerfectInformation && view >= 0
	for _, p := range waiting {
		if legalFor != nil && !legalFor(p) || hidden && p != view {
			continue
		}
		legal(p, m)
		l := legalJSON{Player: p, Actions: make([]actionJSON, 0, m.Count())}
		for a := range m.All() {
			l.Actions = append(l.Actions, actionJSON{int(a), s.ActionString(a)})
		}
		out.Legal = append(out.Legal, l)
	}
	out.Board = boardOf(s, view, out.Legal)
	markLine(s, out.Board)
	out.Result = summary(s, waiting)
	if out.Terminal {
		out.Returns = make([]float64, g.NumPlayers())
		s.Returns(out.Returns)
	}
	return out
}

// summary is one line: who is to move, or the result in words.
func summary(s games.State, waiting []int) string {
	if !s.IsTerminal() {
		switch p := s.CurrentPlayer(); p {
		case games.SimultaneousPlayer:
			who := make([]string, len(waiting))
			for i, p := range waiting {
				who[i] = strconv.Itoa(p)
			}
			return "simultaneous move: waiting for players " + strings.Join(who, ", ")
		case games.ChancePlayer:
			return "chance move next (a card dealt or drawn, dice rolled)"
		default:
			return fmt.Sprintf("player %d to move", p)
		}
	}
	ret := make([]float64, s.Game().NumPlayers())
	s.Returns(ret)
	best, n, winner := ret[0], 0, -1
	for p, v := range ret {
		switch {
		case v > best:
			best, n, winner = v, 1, p
		case v == best:
			n++
			if n == 1 {
				winner = p
			}
		}
	}
	if n != 1 {
		if n == len(ret) {
			return "game over: a draw"
		}
		var tied []string
		for p, v := range ret {
			if v == best {
				tied = append(tied, strconv.Itoa(p))
			}
		}
		return "game over: players " + strings.Join(tied, " and ") + " share first place"
	}
	if len(ret) == 2 {
		return fmt.Sprintf("game over: player %d wins", winner)
	}
	// More players: the order after the winner.
	order := make([]int, len(ret))
	for p := range order {
		order[p] = p
	}
	sort.SliceStable(order, func(i, j int) bool { return ret[order[i]] > ret[order[j]] })
	var rest []string
	for _, p := range order[1:] {
		rest = append(rest, "player "+strconv.Itoa(p))
	}
	return fmt.Sprintf("game over: player %d wins, then %s", winner, strings.Join(rest, ", "))
}

// view renders the session for player view (-1: everything). Called
// with mu held.
func (ss *session) view(view int) stateJSON {
	hist := make([]string, 0, len(ss.actions))
	// Texts are formatted in the state where each action was played, so
	// replay the actions on a fresh state (cheap next to a request).
	s := ss.game.NewInitialState()
	hideChance := view >= 0 && ss.game.Type().Information != games.PerfectInformation
	for i := 0; i < len(ss.actions); {
		if s.CurrentPlayer() == games.SimultaneousPlayer {
			n := ss.game.NumPlayers()
			joint := ss.actions[i : i+n]
			for p, a := range joint {
				hist = append(hist, fmt.Sprintf("p%d:%s", p, s.ActionString(a)))
			}
			s.(games.SimultaneousState).ApplyJoint(joint)
			i += n
			continue
		}
		a := ss.actions[i]
		txt := s.ActionString(a)
		if ss.movers[i] == games.ChancePlayer {
			if hideChance {
				txt = "chance" // a dealt card: hidden from a player's view
			} else {
				txt = "chance:" + txt
			}
		}
		hist = append(hist, txt)
		s.Apply(a)
		i++
	}
	hidePending(ss.state, view, ss.movers, hist)
	last := games.NoAction
	if n := len(ss.actions); n > 0 && n == len(hist) && hist[n-1] != "chance" && !strings.HasSuffix(hist[n-1], ":hidden") {
		last = ss.actions[n-1] // not a deal or a pick the viewer may not see
	}
	isHuman := func(p int) bool { return ss.specs[p] == humanSeat }
	out := render(ss.state, view, ss.waiting(), isHuman, ss.legalFor, hist, last)
	out.ID, out.Seed, out.Busy = ss.id, ss.seed, ss.busy
	out.Seats = make([]seatJSON, len(ss.specs))
	for p, sp := range ss.specs {
		out.Seats[p] = seatJSON{sp, sp == humanSeat}
	}
	out.CanUndo = ss.undoPoint() >= 0 && !ss.busy
	out.Views, out.Private, out.LogReady = ss.views(), ss.private(), !ss.private()
	return out
}

// defaultView is the player to draw for when the request names none: the
// seat at the screen of a private session, else the only human seat, else
// everything (-1). Called with mu held.
func (ss *session) defaultView() int {
	if ss.private() {
		return ss.screenSeat()
	}
	if h := ss.humans(); len(h) == 1 {
		return h[0]
	}
	return -1
}

// undoPoint is the number of actions to keep to take back the last human
// move (and everything after it), or -1 when there is none to take back
// or the game has simultaneous moves. Called with mu held.
func (ss *session) undoPoint() int {
	if ss.game.Type().Dynamics == games.Simultaneous {
		return -1
	}
	if ss.hidden() && len(ss.humans()) > 0 {
		// Taking a move back after seeing the card drawn or the agent's
		// reply (which tells of its hand) would show hidden cards.
		return -1
	}
	for i := len(ss.movers) - 1; i >= 0; i-- {
		if p := ss.movers[i]; p >= 0 && ss.specs[p] == humanSeat {
			return i
		}
	}
	return -1
}

// hidePending hides, in a sequential Sushi Go history drawn for player view,
// the picks of other players that the trick has not revealed yet (the
// game keeps them as pending and hides them from view's observations).
func hidePending(s games.State, view int, movers []int, hist []string) {
	sg, ok := s.(*sushigo.State)
	if !ok || view < 0 || len(movers) != len(hist) {
		return
	}
	for p := range s.Game().NumPlayers() {
		if p == view || sg.Pending(p) == games.NoAction {
			continue
		}
		for i := len(movers) - 1; i >= 0; i-- {
			if movers[i] == p {
				hist[i] = "p" + strconv.Itoa(p) + ":hidden"
				break
			}
		}
	}
}
