package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
)

// catalogJSON lists what the page's forms offer.
type catalogJSON struct {
	Games  []catalogGame  `json:"games"`
	Agents []catalogAgent `json:"agents"`
	Limits map[string]any `json:"limits"`
}

type catalogGame struct {
	Name    string   `json:"name"`
	Summary string   `json:"summary"`
	Options []string `json:"options"` // key=default
	Players string   `json:"players"` // e.g. "2" or "2-4"
}

type catalogAgent struct {
	Name    string   `json:"name"`
	Summary string   `json:"summary"`
	Games   []string `json:"games,omitempty"`
}

func (s *Server) handleCatalog(w http.ResponseWriter, r *http.Request) {
	out := catalogJSON{Games: []catalogGame{}, Agents: []catalogAgent{}}
	for _, g := range games.Registered() {
		cg := catalogGame{Name: g.Name, Summary: g.Summary, Options: []string{}}
		for _, o := range g.Options {
			cg.Options = append(cg.Options, o.Key+"="+o.Default)
		}
		if gm, err := games.New(g.Name); err == nil {
			t := gm.Type()
			cg.Players = strconv.Itoa(t.MinPlayers)
			if t.MaxPlayers != t.MinPlayers {
				cg.Players += "-" + strconv.Itoa(t.MaxPlayers)
			}
		}
		out.Games = append(out.Games, cg)
	}
	for _, a := range agent.Registered() {
		out.Agents = append(out.Agents, catalogAgent{a.Name, a.Summary, a.Games})
	}
	out.Limits = map[string]any{
		"max_games": s.cfg.MaxGames, "max_client_games": s.cfg.MaxClientGames, "max_sims": s.cfg.MaxSims, "max_nodes": s.cfg.MaxNodes,
		"max_threads": s.cfg.MaxThreads, "max_time": s.cfg.MaxTime.String(),
		"move_timeout": s.cfg.MoveTimeout.String(), "idle_timeout": s.cfg.IdleTimeout.String(),
	}
	writeJSON(w, http.StatusOK, out)
}

// createRequest is the body of POST /api/games.
type createRequest struct {
	Game    string   `json:"game"`
	Players []string `json:"players"` // agent spec or "human" per seat
	Seed    *uint64  `json:"seed"`    // nil: random
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		writeError(w, err)
		return
	}
	ss, err := s.create(req, clientOf(r))
	if err != nil {
		writeError(w, err)
		return
	}
	ss.mu.Lock()
	v := ss.view(ss.defaultView())
	ss.mu.Unlock()
	w.Header().Set("Location", "/api/games/"+ss.id)
	writeJSON(w, http.StatusCreated, v)
}

// clientOf is the client a request counts for in Config.MaxClientGames:
// its remote IP address.
func clientOf(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// create validates req with the CLI's rules and stores the new game of
// client.
func (s *Server) create(req createRequest, client string) (*session, error) {
	if req.Game == "" {
		return nil, errorf(http.StatusBadRequest, "game: give a game spec, e.g. connect4 or hex:size=7 (see the game list)")
	}
	if len(req.Game) > maxSpecLen {
		return nil, errorf(http.StatusBadRequest, "game spec of %d bytes; the limit is %d", len(req.Game), maxSpecLen)
	}
	g, err := games.New(req.Game)
	if err != nil {
		return nil, badRequest(err)
	}
	if len(req.Players) != g.NumPlayers() {
		return nil, errorf(http.StatusBadRequest, "players: %s has %d players, got %d seat(s)", g.Spec(), g.NumPlayers(), len(req.Players))
	}
	specs := make([]string, len(req.Players))
	for p, sp := range req.Players {
		sp = strings.TrimSpace(sp)
		if sp == "" {
			return nil, errorf(http.StatusBadRequest, "seat %d: give an agent spec or \"human\"", p)
		}
		if sp != humanSeat {
			if err := s.checkAgentSpec(sp); err != nil {
				return nil, errorf(http.StatusBadRequest, "seat %d: %v", p, err)
			}
		}
		specs[p] = sp
	}
	if err := s.games.reserve(client); err != nil {
		return nil, err
	}
	seed := uint64(time.Now().UnixNano()) & (1<<53 - 1) // exact as a JavaScript number
	if req.Seed != nil {
		seed = *req.Seed
	}
	ss, err := newSession(newID(), g, specs, s.cfg.Agents.WithSeed(seed))
	if err != nil {
		return nil, err
	}
	ss.client = client
	if err := s.games.add(ss); err != nil {
		ss.mu.Lock()
		ss.shut()
		ss.mu.Unlock()
		return nil, err
	}
	return ss, nil
}

// lookup returns the game named in the path, locked and touched; the
// caller unlocks ss.mu.
func (s *Server) lookup(r *http.Request) (*session, error) {
	ss, err := s.games.get(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return nil, errorf(http.StatusNotFound, "game %s has ended", ss.id)
	}
	ss.lastUsed = time.Now()
	return ss, nil
}

// viewParam reads ?view=P (-1: everything), defaulting to ss.defaultView.
// Called with ss.mu held.
func viewParam(r *http.Request, ss *session) (int, error) {
	v := r.URL.Query().Get("view")
	if v == "" {
		return ss.defaultView(), nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < -1 || p >= ss.game.NumPlayers() {
		return 0, errorf(http.StatusBadRequest, "view=%s: want a player 0..%d or -1 for everything", clip(v), ss.game.NumPlayers()-1)
	}
	if ss.private() && p != ss.screenSeat() {
		return 0, errorf(http.StatusForbidden, "view=%d: %s hides cards and a person plays: this screen shows player %d's own view only, until the game is over", p, ss.game.Type().Name, ss.screenSeat())
	}
	return p, nil
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	ss, err := s.lookup(r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer ss.mu.Unlock()
	view, err := viewParam(r, ss)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ss.view(view))
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.games.remove(r.PathValue("id"))
	if !ok {
		writeError(w, errorf(http.StatusNotFound, "no game %q", clip(r.PathValue("id"))))
		return
	}
	ss.mu.Lock()
	ss.shut()
	ss.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// moveRequest is the body of POST /api/games/{id}/move.
type moveRequest struct {
	Action string `json:"action"` // as ActionString writes it
	// Player is the mover; needed at simultaneous nodes with several
	// human seats waiting, else optional (checked when given).
	Player *int `json:"player"`
}

func (s *Server) handleMove(w http.ResponseWriter, r *http.Request) {
	var req moveRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		writeError(w, err)
		return
	}
	ss, err := s.lookup(r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer ss.mu.Unlock()
	if err := ss.humanMove(req); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ss.view(ss.defaultView()))
}

// humanMove validates and plays a person's move. Called with mu held.
func (ss *session) humanMove(req moveRequest) error {
	if ss.busy {
		return errorf(http.StatusConflict, "an agent is thinking; wait for its move")
	}
	if ss.state.IsTerminal() {
		return errorf(http.StatusConflict, "the game is over")
	}
	var p int
	waiting := ss.waiting()
	var humans []int
	for _, q := range waiting {
		if ss.specs[q] == humanSeat {
			humans = append(humans, q)
		}
	}
	switch {
	case req.Player != nil:
		p = *req.Player
		if p < 0 || p >= ss.game.NumPlayers() {
			return errorf(http.StatusBadRequest, "player %d: want 0..%d", p, ss.game.NumPlayers()-1)
		}
		if ss.specs[p] != humanSeat {
			return errorf(http.StatusConflict, "player %d is the agent %s; ask it to move", p, clip(ss.specs[p]))
		}
		found := false
		for _, q := range waiting {
			found = found || q == p
		}
		if !found {
			return errorf(http.StatusConflict, "it is not player %d's turn (%s)", p, summary(ss.state, waiting))
		}
	case len(humans) == 1:
		p = humans[0]
	case len(humans) == 0:
		return errorf(http.StatusConflict, "no person is to move (%s); ask the agent to move", summary(ss.state, waiting))
	default:
		return errorf(http.StatusBadRequest, "players %v are all to choose: say which with \"player\"", humans)
	}
	if ss.private() && p != ss.screenSeat() {
		// Its cards are not on this screen, and the answer (legal moves,
		// examples) would show them.
		return errorf(http.StatusForbidden, "player %d: %s hides cards: player %d at this screen chooses first, then hands the screen over", p, ss.game.Type().Name, ss.screenSeat())
	}
	if strings.TrimSpace(req.Action) == "" {
		return errorf(http.StatusBadRequest, "action: give a move, e.g. %s", ss.exampleMove(p))
	}
	if len(req.Action) > maxSpecLen {
		return errorf(http.StatusBadRequest, "action of %d bytes is not a move", len(req.Action))
	}
	a, err := ss.state.ParseAction(req.Action)
	if err != nil {
		return badRequest(err)
	}
	m := games.NewMask(ss.game.NumActions())
	ss.legalFor(p, m)
	if !m.Has(a) {
		return errorf(http.StatusBadRequest, "illegal move %s for player %d (legal: %s)", clip(req.Action), p, clipN(games.FormatActions(ss.state, m), 300))
	}
	ss.play(p, a)
	return nil
}

// exampleMove returns one legal move of p as text, for messages.
func (ss *session) exampleMove(p int) string {
	m := games.NewMask(ss.game.NumActions())
	ss.legalFor(p, m)
	if a := m.First(); a != games.NoAction {
		return ss.state.ActionString(a)
	}
	return "(none legal)"
}

func (s *Server) handleAgent(w http.ResponseWriter, r *http.Request) {
	if err := decodeBody(w, r, s.cfg.MaxBody, &struct{}{}); err != nil {
		writeError(w, err)
		return
	}
	ss, err := s.lookup(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.agentMove(r.Context(), ss); err != nil { // unlocks and relocks ss.mu
		ss.mu.Unlock()
		writeError(w, err)
		return
	}
	v := ss.view(ss.defaultView())
	ss.mu.Unlock()
	writeJSON(w, http.StatusOK, v)
}

// agentMove has every waiting agent seat choose and plays the choices.
// Called with ss.mu held; it releases the lock while the agents think
// (the game is marked busy meanwhile) and holds it again on return.
func (s *Server) agentMove(ctx context.Context, ss *session) error {
	if ss.busy {
		return errorf(http.StatusConflict, "an agent is already thinking in this game")
	}
	if ss.state.IsTerminal() {
		return errorf(http.StatusConflict, "the game is over")
	}
	var seats []int
	for _, p := range ss.waiting() {
		if ss.specs[p] != humanSeat {
			seats = append(seats, p)
		}
	}
	if len(seats) == 0 {
		return errorf(http.StatusConflict, "no agent is to move (%s); submit the person's move", summary(ss.state, ss.waiting()))
	}
	clone := ss.state.Clone()
	agents := ss.agents
	ss.busy = true
	ss.mu.Unlock()

	chosen := make([]games.Action, len(seats))
	what := fmt.Sprintf("agent %s (player %d)", clip(ss.specs[seats[0]]), seats[0])
	err := s.think(ctx, what, func(ctx context.Context) error {
		for i, p := range seats {
			a, err := agents[p].Act(ctx, clone, p)
			if err != nil {
				return s.agentError(ctx, ss.specs[p], p, err)
			}
			chosen[i] = a
		}
		return nil
	}, ss.endCall)
	ss.mu.Lock()
	if errors.Is(err, errOverrun) {
		return err // the game stays busy until the call returns (endCall)
	}
	ss.endCallLocked()
	if ss.closed {
		return errorf(http.StatusNotFound, "game %s ended while the agent was thinking", ss.id)
	}
	if err != nil {
		return err
	}
	m := games.NewMask(ss.game.NumActions())
	for i, p := range seats {
		ss.legalFor(p, m)
		if !m.Has(chosen[i]) {
			return errorf(http.StatusInternalServerError, "agent %s (player %d) chose the illegal move %s (a bug in the agent)", clip(ss.specs[p]), p, ss.state.ActionString(chosen[i]))
		}
		ss.play(p, chosen[i])
	}
	return nil
}

// endCall ends an agent call on ss that the request gave up on.
func (ss *session) endCall() {
	ss.mu.Lock()
	ss.endCallLocked()
	ss.mu.Unlock()
}

// endCallLocked clears busy after an agent call and closes the agents of
// a game that ended meanwhile. Called with mu held.
func (ss *session) endCallLocked() {
	ss.busy = false
	ss.lastUsed = time.Now()
	if ss.closed {
		ss.closeAgents()
	}
}

// overrunGrace is how long past its deadline an agent call may take before
// the request stops waiting for it.
const overrunGrace = 2 * time.Second

// errOverrun marks the 504 of an agent call still running.
var errOverrun = errors.New("agent overran its deadline")

// think runs f (an agent call on a copy of a position) under the server's
// thinking limit with the move timeout, and returns its error. Agents
// should return at the deadline; one that does not (the solver between
// columns) is left running once the deadline plus overrunGrace has
// passed: think then returns a 504 wrapping errOverrun, and abandoned is
// called when f returns, from f's goroutine. Otherwise abandoned is not
// called.
func (s *Server) think(ctx context.Context, what string, f func(context.Context) error, abandoned func()) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.MoveTimeout)
	if err := s.acquire(ctx); err != nil {
		cancel()
		return err
	}
	done := make(chan error, 1)
	go func() {
		defer s.release()
		defer cancel()
		done <- f(ctx)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(overrunGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	}
	go func() {
		<-done
		abandoned()
	}()
	msg := fmt.Sprintf("%s did not finish within %v; it is still working, and the game stays busy until it does", what, s.cfg.MoveTimeout)
	return &httpError{status: http.StatusGatewayTimeout, msg: msg, err: errOverrun}
}

// agentError classifies an agent's failure: past the deadline it is a 504.
func (s *Server) agentError(ctx context.Context, spec string, p int, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return errorf(http.StatusGatewayTimeout, "agent %s (player %d) did not finish within %v: %v", clip(spec), p, s.cfg.MoveTimeout, err)
	}
	return errorf(http.StatusInternalServerError, "agent %s (player %d): %v", clip(spec), p, err)
}

// analyzeRequest is the body of POST /api/games/{id}/analyze.
type analyzeRequest struct {
	// Agent is the analyzer's spec; empty: the agent of the seat to move,
	// when it is an agent.Analyzer.
	Agent string `json:"agent"`
	// Player whose choice to analyse; nil: the first waiting player.
	Player *int `json:"player"`
}

// analysisRow is one action's statistics.
type analysisRow struct {
	Action int      `json:"action"`
	Text   string   `json:"text"`
	Visits int      `json:"visits"`
	Q      *float64 `json:"q"` // null: the analyzer has no value per action (agent.Analysis.Q NaN)
	Prior  float64  `json:"prior"`
	Score  float64  `json:"score"`
}

type analysisJSON struct {
	Player  int           `json:"player"`
	Agent   string        `json:"agent"`
	Move    int           `json:"move"`   // the position's MoveNumber
	Visits  int           `json:"visits"` // sum over rows
	Seconds float64       `json:"seconds"`
	Rows    []analysisRow `json:"rows"`
	// Values is the position's value for every seat, in seat order, in
	// [-1, 1], from analyzers that have one (az with a per-player value
	// head: the search's root value vector); absent otherwise.
	Values []float64 `json:"values,omitempty"`
}

func (s *Server) handleAnalyze(w http.ResponseWriter, r *http.Request) {
	var req analyzeRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		writeError(w, err)
		return
	}
	req.Agent = strings.TrimSpace(req.Agent)
	if req.Agent != "" {
		if err := s.checkAgentSpec(req.Agent); err != nil {
			writeError(w, err)
			return
		}
	}
	ss, err := s.lookup(r)
	if err != nil {
		writeError(w, err)
		return
	}
	res, err := s.analyze(r.Context(), ss, req) // unlocks and relocks ss.mu
	ss.mu.Unlock()
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// analyze runs an Analyzer on the position. Called with ss.mu held;
// released meanwhile.
func (s *Server) analyze(ctx context.Context, ss *session, req analyzeRequest) (*analysisJSON, error) {
	c, err := s.startAnalysis(ss, req)
	if err != nil {
		return nil, err
	}
	ss.mu.Unlock()
	var rows []agent.Analysis
	err = s.runAnalysis(ctx, ss, c, func(ctx context.Context) error {
		var err error
		rows, err = c.an.Analyze(ctx, c.clone, c.player)
		return err
	})
	secs := time.Since(c.start).Seconds()
	ss.mu.Lock()
	if err != nil {
		return nil, err
	}
	return c.rowsJSON(rows, secs), nil
}

// analysisCall is an analysis about to run or running: the analyzer, the
// player and a clone of the position, which the call owns.
type analysisCall struct {
	an     agent.Analyzer
	name   string // its spec
	player int
	clone  games.State
	own    bool // built for this call: closed after it; else the seat's agent, the game marked busy
	start  time.Time
}

// startAnalysis validates req against the position and picks the
// analyzer: with req.Agent it builds that agent for the call; otherwise it
// takes the seat's agent and marks the game busy. Called with ss.mu held,
// which it keeps.
func (s *Server) startAnalysis(ss *session, req analyzeRequest) (*analysisCall, error) {
	if ss.busy {
		return nil, errorf(http.StatusConflict, "an agent is thinking in this game; try again after its move")
	}
	if ss.state.IsTerminal() {
		return nil, errorf(http.StatusConflict, "the game is over")
	}
	waiting := ss.waiting()
	p := waiting[0]
	if ss.private() && req.Player == nil {
		p = ss.screenSeat()
	}
	if req.Player != nil {
		p = *req.Player
	}
	ok := false
	for _, q := range waiting {
		ok = ok || q == p
	}
	if !ok {
		return nil, errorf(http.StatusBadRequest, "player %d is not to move (%s)", p, summary(ss.state, waiting))
	}
	if ss.private() && p != ss.screenSeat() {
		return nil, errorf(http.StatusForbidden, "player %d: %s hides cards and a person plays: analyses are for the move of player %d at this screen only", p, ss.game.Type().Name, ss.screenSeat())
	}
	c := &analysisCall{name: req.Agent, player: p}
	if c.name == "" {
		a, ok := ss.agents[p].(agent.Analyzer)
		if !ok {
			who := "a person"
			if ss.specs[p] != humanSeat {
				who = "agent " + ss.specs[p] + ", which cannot analyse"
			}
			return nil, errorf(http.StatusBadRequest, "player %d is %s: name an analyzer (mcts, az, policy, solver), e.g. \"mcts:sims=2000\"", p, clip(who))
		}
		c.an, c.name = a, ss.specs[p]
		ss.busy = true
	} else {
		a, err := agent.New(ss.game, c.name, ss.env)
		if err != nil {
			return nil, badRequest(err)
		}
		if c.an, c.own = a.(agent.Analyzer); !c.own {
			arena.CloseAgents([]agent.Agent{a})
			return nil, errorf(http.StatusBadRequest, "agent %s cannot analyse (analyzers: mcts, az, policy, solver)", clip(c.name))
		}
	}
	c.clone = ss.state.Clone()
	if ss.private() {
		// The analyzer gets a position dealt again from what player p has
		// seen (a determinization): no analyzer, not even one that takes
		// the position as given (mcts:det=0), sees the hidden cards.
		// Resample depends only on p's information and the random stream,
		// which is fixed by the game's seed and the move number.
		res, ok := ss.state.(games.Resampler)
		if !ok {
			if c.own {
				arena.CloseAgents([]agent.Agent{c.an})
			}
			return nil, errorf(http.StatusBadRequest, "%s hides cards and cannot deal them again: no analysis while a person plays", ss.game.Type().Name)
		}
		res.Resample(p, games.NewRand(arena.DeriveSeed(ss.seed, 1<<33+uint64(ss.state.MoveNumber()))), c.clone)
	}
	c.start = time.Now()
	return c, nil
}

// runAnalysis runs f, the analyzer's work on c.clone, under the server's
// thinking limit and move timeout (think), and ends the call: an analyzer
// built for it is closed, the game's busy mark cleared. When f overruns
// (errOverrun) that happens when f returns. Called without ss.mu.
func (s *Server) runAnalysis(ctx context.Context, ss *session, c *analysisCall, f func(context.Context) error) error {
	end := ss.endCall
	if c.own {
		end = func() { arena.CloseAgents([]agent.Agent{c.an}) }
	}
	err := s.think(ctx, fmt.Sprintf("analyzer %s", clip(c.name)), func(ctx context.Context) error {
		if err := f(ctx); err != nil {
			return s.agentError(ctx, c.name, c.player, err)
		}
		return nil
	}, end)
	if errors.Is(err, errOverrun) {
		return err
	}
	end()
	return err
}

// rowsJSON is the analysis rows as the API answers them.
func (c *analysisCall) rowsJSON(rows []agent.Analysis, secs float64) *analysisJSON {
	out := &analysisJSON{Player: c.player, Agent: c.name, Move: c.clone.MoveNumber(), Seconds: secs, Rows: make([]analysisRow, len(rows))}
	for i, x := range rows {
		var q *float64
		if !math.IsNaN(x.Q) {
			v := finite(x.Q)
			q = &v
		}
		out.Rows[i] = analysisRow{int(x.Action), c.clone.ActionString(x.Action), x.Visits, q, finite(x.Prior), finite(x.Score)}
		out.Visits += x.Visits
	}
	if sv, ok := c.an.(agent.SeatValuer); ok {
		out.Values = seatValuesJSON(sv.SeatValues())
	}
	return out
}

// seatValuesJSON copies per-seat values for JSON (NaN and infinities as
// 0); nil stays nil.
func seatValuesJSON(v []float64) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = finite(x)
	}
	return out
}

// finite maps NaN and infinities (which JSON cannot carry) to 0.
func finite(x float64) float64 {
	if x != x || x > 1e300 || x < -1e300 {
		return 0
	}
	return x
}

func (s *Server) handleUndo(w http.ResponseWriter, r *http.Request) {
	if err := decodeBody(w, r, s.cfg.MaxBody, &struct{}{}); err != nil {
		writeError(w, err)
		return
	}
	ss, err := s.lookup(r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer ss.mu.Unlock()
	if ss.busy {
		writeError(w, errorf(http.StatusConflict, "an agent is thinking; undo after its move"))
		return
	}
	k := ss.undoPoint()
	if k < 0 {
		writeError(w, errorf(http.StatusConflict, "nothing to undo (undo takes back a person's move; not in simultaneous-move games, nor with hidden cards)"))
		return
	}
	st := ss.game.NewInitialState()
	for _, a := range ss.actions[:k] {
		st.Apply(a)
	}
	ss.state, ss.actions, ss.movers = st, ss.actions[:k], ss.movers[:k]
	ss.settle()
	writeJSON(w, http.StatusOK, ss.view(ss.defaultView()))
}

func (s *Server) handleGameLog(w http.ResponseWriter, r *http.Request) {
	ss, err := s.lookup(r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer ss.mu.Unlock()
	if ss.private() {
		writeError(w, errorf(http.StatusConflict, "the log lists every card dealt: it is ready once the game is over"))
		return
	}
	rec := &arena.Record{Spec: ss.game.Spec(), Agents: ss.specs, Actions: ss.actions}
	l, err := arena.LogFromRecord(ss.game, rec, ss.seed)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", "canopy-"+ss.game.Type().Name+"-"+ss.id+".json"))
	writeJSON(w, http.StatusOK, l)
}
