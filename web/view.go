package web

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games"
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
	// Board is the game's drawing for view (games.Boarder), with the
	// listed legal moves on offer; nil: the generic view.
	Board   *games.Board `json:"board,omitempty"`
	History []string     `json:"history"` // applied actions as text
	Last    int          `json:"last"`    // the last action's id, -1 none
	Busy    bool         `json:"busy"`    // an agent is thinking
	CanUndo bool         `json:"can_undo"`
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
	offered := games.NewMask(g.NumActions())
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
			offered.Set(a)
		}
		out.Legal = append(out.Legal, l)
	}
	out.Board = games.BoardOf(s, view, offered)
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

// hidePending hides, in a history drawn for player view, the choices of
// other players that the game has not revealed yet (games.Concealer: the
// picks of a sequential Sushi Go trick), the last move of each such player.
func hidePending(s games.State, view int, movers []int, hist []string) {
	c, ok := s.(games.Concealer)
	if !ok || view < 0 || len(movers) != len(hist) {
		return
	}
	for p := range s.Game().NumPlayers() {
		if p == view || c.Pending(p) == games.NoAction {
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
