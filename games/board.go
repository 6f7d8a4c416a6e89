package games

// Board is a neutral description of a position for drawing: a grid of
// cells with their owners, the action each cell takes, labels and marks,
// and per-player panels (pieces left, hands, tableaux). A front end (the
// web page, package web) draws it without knowing the game; Kind names the
// drawing style, so games that look alike may share one. The web page reads
// it as JSON, so the field tags are its wire format.
//
// Cells, Actions, Labels and Marks are row-major, row 0 at the top, each
// Rows x Cols (Labels and Marks may be nil). Every field is filled from
// what the viewer may see: a hidden hand never reaches a Board.
type Board struct {
	// Kind is the drawing style: "connect4", "tictactoe", "hex",
	// "connect4d", "strands", "tetrislink", "sequence" or "sushigo" (no
	// grid: Rows = Cols = 0).
	Kind string `json:"kind"`
	Rows int    `json:"rows"`
	Cols int    `json:"cols"`
	// Cells hold each cell's owner (a player), or -1 when empty.
	Cells [][]int `json:"cells"`
	// Actions hold the action a click on a cell plays, or -1 for none
	// (the cells of Connect Four and Connect4d take their column's
	// action whether it is legal or not).
	Actions [][]int `json:"actions"`
	// Labels are printed on cells: Strands' numbers ("" off the board),
	// Sequence's card faces ("*" a corner).
	Labels [][]string `json:"labels,omitempty"`
	// Marks flag cells: 1 a square of one of the shown hand's cards, 2 a
	// chip locked in a sequence (Sequence).
	Marks [][]int `json:"marks,omitempty"`
	// Boards is the number of boards drawn side by side in the grid
	// (Connect4d, 7 columns each); Active the board to play in (-1: none).
	Boards int `json:"boards,omitempty"`
	Active int `json:"active"`
	// Players are per-player panels shown beside the board.
	Players []BoardPlayer `json:"players,omitempty"`
	// PieceNames name the piece shapes of BoardPlayer.Pieces.
	PieceNames []string `json:"piece_names,omitempty"`
	// Drops are the offered placements of pieces that fill several cells
	// (Tetris Link), each with the cells it would fill.
	Drops []Drop `json:"drops,omitempty"`
	// Buttons: list every legal move as a button, even those the board
	// takes (games whose moves are best read as text).
	Buttons bool     `json:"buttons,omitempty"`
	Notes   []string `json:"notes,omitempty"` // lines shown under the board
	// Line are the cells (row, column) of the line that won a finished
	// game (WinningLiner), filled in by BoardOf.
	Line [][2]int `json:"line,omitempty"`
	// RowsUp says that the game's observation planes, which WinningLine
	// indexes, have row 0 at the bottom (Connect Four), where the drawing
	// has it at the top.
	RowsUp bool `json:"-"`
}

// BoardPlayer is what a Board shows of one player beside the grid. The
// fields a game has no use for stay empty.
type BoardPlayer struct {
	Player int `json:"player"`
	// Pieces are the pieces left per shape (in Board.PieceNames order).
	Pieces []int `json:"pieces,omitempty"`
	// Hand is the player's hand when the viewer may see it (nil: hidden);
	// HandCount is its size, always shown.
	Hand      []string `json:"hand,omitempty"`
	HandCount int      `json:"hand_count"`
	Hidden    bool     `json:"hidden,omitempty"` // the hand is not shown
	// HandActions are, for each card of Hand, the action that plays it
	// alone, so that a click on the card plays it.
	HandActions []int `json:"hand_actions,omitempty"`
	// Table are the cards played in front of the player ("wasabi+salmon":
	// one card on another).
	Table []string `json:"table,omitempty"`
	// Puddings are cards kept across rounds (Sushi Go).
	Puddings int    `json:"puddings,omitempty"`
	Note     string `json:"note,omitempty"` // one line: sequences, a pending choice
}

// Drop is one offered placement of a piece that fills several cells.
type Drop struct {
	ID     int      `json:"id"` // the action
	Player int      `json:"player"`
	Text   string   `json:"text"`   // ActionString, e.g. "T2@5"
	Orient string   `json:"orient"` // the piece in its orientation, e.g. "T2"
	Col    int      `json:"col"`    // leftmost column, 0-based
	Cells  [][2]int `json:"cells"`  // (row, column), row 0 at the top
}

// Boarder is implemented by states that describe themselves as a Board
// for drawing. viewer is the player to draw for, or -1 for everything;
// the Board shows only what viewer may see (as Drawer.Draw does). offered
// are the actions the caller lets the viewer play now (nil: none): the
// Board attaches them to its cells and placements, so that clicking one
// plays it. Board allocates; it is for front ends, not search.
type Boarder interface {
	State
	Board(viewer int, offered Mask) *Board
}

// NewGridBoard returns a Board of kind with rows x cols empty cells that
// take no action.
func NewGridBoard(kind string, rows, cols int) *Board {
	b := &Board{Kind: kind, Rows: rows, Cols: cols, Cells: make([][]int, rows), Actions: make([][]int, rows)}
	for r := range rows {
		b.Cells[r] = make([]int, cols)
		b.Actions[r] = make([]int, cols)
		for c := range cols {
			b.Cells[r][c], b.Actions[r][c] = -1, -1
		}
	}
	return b
}

// BoardOf returns s's Board for viewer with offered on offer (see
// Boarder), with the line that won a finished game marked (WinningLiner),
// or nil when s is not a Boarder.
func BoardOf(s State, viewer int, offered Mask) *Board {
	bs, ok := s.(Boarder)
	if !ok {
		return nil
	}
	b := bs.Board(viewer, offered)
	if b != nil {
		markLine(s, b)
	}
	return b
}

// markLine fills b.Line from s's winning line (WinningLiner), whose cells
// index a plane of the observation, laid out as b's grid.
func markLine(s State, b *Board) {
	wl, ok := s.(WinningLiner)
	if !ok {
		return
	}
	sh := s.Game().ObservationShape()
	if len(sh) < 2 {
		return
	}
	h, w := sh[len(sh)-2], sh[len(sh)-1]
	for _, i := range wl.WinningLine() {
		r, c := i/w, i%w
		if b.RowsUp {
			r = h - 1 - r
		}
		if r >= 0 && r < b.Rows && c >= 0 && c < b.Cols {
			b.Line = append(b.Line, [2]int{r, c})
		}
	}
}
